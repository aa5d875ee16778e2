import type { ToolAnnotations } from '@heretek/catalog';

/** A tool as a gateway lists it (the MCP `Tool` shape, loosely). */
export type GatewayTool = {
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: ToolAnnotations;
  /** MCP 2025-11-25: whether the tool must, may or must not be called as a task. */
  execution?: { taskSupport?: 'required' | 'optional' | 'forbidden' | string };
};

/** One `notifications/progress` of a call, as the backend sent it. */
export type CallProgress = {
  progress: number;
  total?: number;
  message?: string;
};

/** The MCP `CallToolResult` shape the broker passes back to the agent. */
export type ToolCallResult = {
  content: ReadonlyArray<object>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
};

/**
 * What the broker needs from a gateway. `@heretek/gateway-client`'s
 * `GatewayClient` satisfies it; tests may pass any object that does.
 */
export type ToolGateway = {
  listTools(options: {
    target: string;
    signal?: AbortSignal;
  }): Promise<GatewayTool[]>;
  /** Multiplexed gateways list every target at once, grouped by target. */
  listAllTools?(options?: {
    signal?: AbortSignal;
  }): Promise<Map<string, GatewayTool[]>>;
  callTool(options: {
    target: string;
    tool: string;
    arguments: Record<string, unknown>;
    signal?: AbortSignal;
    /** When given, the call asks for progress and each notification arrives here; each one restarts the request's timeout. */
    onProgress?: (progress: CallProgress) => void;
    /** Call task-augmented and wait for the task's result. */
    task?: boolean;
  }): Promise<ToolCallResult>;
  /** Ends every session and aborts what is in flight. */
  close(): Promise<void>;
};

/** One backend's discovery outcome, with the time its listing took. */
export type DiscoveryOutcome =
  | { target: string; ok: true; tools: number; ms: number }
  | {
      target: string;
      ok: false;
      error: string;
      /** The failure's stable code, when the error carried one (e.g. the gateway client's `CONNECTION_FAILED`). */
      code?: string;
      ms: number;
    };

/** How the gateway lists tools: per target, or one multiplexed listing. */
export type { GatewayMode } from '@heretek/gateway-client';

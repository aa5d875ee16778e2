import type { ToolAnnotations } from '@heretek/catalog';
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from '@modelcontextprotocol/server';

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

/** A backend's server-to-client request during a call, with the target it came from. */
export type BackendRequest<Params> = { target: string; params: Params };

/** What a backend may send back during one call before its result, and who takes it. */
export type CallHandlers = {
  /** Receives the backend's progress; without it the backend is not asked for progress. */
  onProgress?: (progress: CallProgress) => void;
  /** Answers the backend's `elicitation/create` requests of this call. */
  onElicitation?: (
    request: BackendRequest<ElicitRequest['params']>,
    extra: { signal: AbortSignal },
  ) => Promise<ElicitResult>;
  /** Answers the backend's `sampling/createMessage` requests of this call. */
  onSampling?: (
    request: BackendRequest<CreateMessageRequest['params']>,
    extra: { signal: AbortSignal },
  ) => Promise<CreateMessageResult>;
};

/** The MCP `CallToolResult` shape the broker passes back to the agent. */
export type ToolCallResult = {
  content: ReadonlyArray<object>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
};

/** What the gateway reports besides answers. */
export type GatewayEvent =
  /** A backend said its tools changed (`*`: the multiplexed endpoint's own stream). */
  | { type: 'tools-list-changed'; target: string }
  /** A backend's `notifications/message`, with the target whose reply carried it. */
  | {
      type: 'backend-log';
      target: string;
      level: string;
      logger?: string;
      data: unknown;
    };

/** What the broker needs from a gateway (`@heretek/gateway-client`'s `GatewayClient`). */
export type ToolGateway = {
  listTools(options: {
    target: string;
    signal?: AbortSignal;
  }): Promise<GatewayTool[]>;
  /** Multiplexed gateways list every target at once, grouped by target. */
  listAllTools?(options?: {
    signal?: AbortSignal;
  }): Promise<Map<string, GatewayTool[]>>;
  /** With `onProgress` the call asks for progress (each notification restarts its timeout). */
  callTool(
    options: {
      target: string;
      tool: string;
      arguments: Record<string, unknown>;
      signal?: AbortSignal;
      /** The calling agent's role, sent as this call's `x-heretek-role`. */
      role?: string;
      /** Call task-augmented and wait for the task's result. */
      task?: boolean;
    } & CallHandlers,
  ): Promise<ToolCallResult>;
  /** Ends every session and aborts what is in flight. */
  close(): Promise<void>;
  /** Gives every later {@link GatewayEvent} to `listener`; returns the unsubscribe. */
  subscribe?(listener: (event: GatewayEvent) => void): () => void;
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

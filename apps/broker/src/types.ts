import type { ToolAnnotations } from '@heretek/catalog';
import type {
  CallToolOptions,
  GatewayLogEntry,
  ListToolsOptions,
} from '@heretek/gateway-client';

export type {
  CallProgress,
  GatewayMode,
  ServerRequestFrom as BackendRequest,
} from '@heretek/gateway-client';

/** A tool as a gateway lists it (the MCP `Tool` shape, loosely). */
export type GatewayTool = {
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: ToolAnnotations;
  /** MCP 2025-11-25: whether the tool must, may or must not be called as a task. */
  execution?: { taskSupport?: 'required' | 'optional' | 'forbidden' | string };
};

/** What a backend may send back during one call before its result, and who takes it: its progress (without a handler it is not asked for any), elicitation and sampling requests. */
export type CallHandlers = Pick<
  CallToolOptions,
  'onProgress' | 'onElicitation' | 'onSampling'
>;

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
  | ({ type: 'backend-log' } & GatewayLogEntry);

/** What the broker needs from a gateway (`@heretek/gateway-client`'s `GatewayClient`). */
export type ToolGateway = {
  listTools(options: ListToolsOptions): Promise<GatewayTool[]>;
  /** Multiplexed gateways list every target at once, grouped by target. */
  listAllTools?(options?: {
    signal?: AbortSignal;
  }): Promise<Map<string, GatewayTool[]>>;
  /** With `onProgress` the call asks for progress (each notification restarts its timeout). */
  callTool(options: CallToolOptions): Promise<ToolCallResult>;
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

// Types of http-bridge.mjs; see there.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { McpServer, createMcpHandler } from '@modelcontextprotocol/server';

/** A tool as the stand-in backends describe it. */
export type BridgeTool = {
  name: string;
  description: string;
  /** JSON Schema of the arguments; none for a tool without arguments. */
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
};

/** What a tool's call gets besides its arguments (the SDK's context). */
export type CallContext = { mcpReq: { signal: AbortSignal } };

type TextResult = { content: Array<{ type: 'text'; text: string }> };

/** What a stand-in tool may answer: any content items, structured content too. */
type ToolResult =
  | TextResult
  | {
      content: Array<Record<string, unknown>>;
      structuredContent?: Record<string, unknown>;
    };

/** A tool result of one text block. */
export function textResult(text: string): TextResult;

/** Registers `tool` on an SDK v2 server; `answer` answers its calls. */
export function registerTool(
  server: McpServer,
  tool: BridgeTool,
  answer: (args: unknown, ctx: CallContext) => ToolResult | Promise<ToolResult>,
): void;

/** An SDK v2 server named `name` serving `tools`, each call answered by `answer`. */
export function toolServer<Tool extends BridgeTool>(
  name: string,
  tools: readonly Tool[],
  answer: (
    tool: Tool,
    args: unknown,
    ctx: CallContext,
  ) => ToolResult | Promise<ToolResult>,
  options?: { listChanged?: boolean },
): McpServer;

export type Route = {
  fetch: (request: Request) => Promise<Response>;
  close: () => Promise<void>;
};

/** Routes made on first use, one per key, closed together. */
export function routeCache<Key, R extends Route>(
  make: (key: Key) => R,
): {
  get: (key: Key) => R;
  /** The route of `key` if it was made. */
  made: (key: Key) => R | undefined;
  close: () => Promise<void>;
};

/** A stateless route: a server from `serverFor` for each request. */
export function statelessRoute(
  serverFor: Parameters<typeof createMcpHandler>[0],
): ReturnType<typeof createMcpHandler>;

/**
 * Where a request goes on agentgateway's routes: its path, and the target of a
 * per-target route (`/mcp/<target>`; undefined for any other path).
 */
export function routeOf(req: IncomingMessage): {
  path: string;
  target: string | undefined;
};

/** Reads a request's whole body. */
export function readBody(req: IncomingMessage): Promise<Buffer>;

/** Hands a request to a fetch-style handler and streams its answer back. */
export function forward(
  req: IncomingMessage,
  res: ServerResponse,
  handler: { fetch: (request: Request) => Promise<Response> },
  body?: Buffer,
): Promise<void>;

export type Loopback = {
  server: Server;
  url: string;
  /** Closes every connection, then the server. */
  close: () => Promise<void>;
};

/** Listens on a random 127.0.0.1 port; a failing handler answers HTTP 500. */
export function listenLoopback(
  onRequest: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<Loopback>;

export type SessionfulRoute = {
  fetch: (request: Request) => Promise<Response>;
  /** One server per session, for tools registered at run time. */
  servers: Set<McpServer>;
  close: () => Promise<void>;
};

/** A sessionful route with the standalone GET stream (2025 revisions). */
export function sessionfulRoute(
  serverFor: () => McpServer,
  options?: { onStream?: () => void },
): SessionfulRoute;

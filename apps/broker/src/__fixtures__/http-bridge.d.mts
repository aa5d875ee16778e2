// Types of http-bridge.mjs; see there.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/server';

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

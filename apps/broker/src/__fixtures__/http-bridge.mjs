// Test and bench fixture: what every stand-in MCP backend here needs: SDK v2
// servers built from plain tool shapes (JSON Schema inputs), and the SDK's
// fetch-style handlers (createMcpHandler, the web-standard Streamable HTTP
// transport) behind node:http on 127.0.0.1. Plain JavaScript, so the benches
// and the child-process backend (run by node itself) use it as the tests do;
// the types are in http-bridge.d.mts.
/* global Headers, Request, Response, URL */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  fromJsonSchema,
} from '@modelcontextprotocol/server';

/** A tool result of one text block. */
export function textResult(text) {
  return { content: [{ type: 'text', text }] };
}

/**
 * Registers `tool` on an SDK v2 server: its name, description, input schema
 * (JSON Schema, when it has one) and annotations. `answer(args, ctx)` answers
 * its calls (`args` undefined for a tool without an input schema).
 */
export function registerTool(server, tool, answer) {
  server.registerTool(
    tool.name,
    {
      description: tool.description,
      ...(tool.inputSchema === undefined
        ? {}
        : { inputSchema: fromJsonSchema(tool.inputSchema) }),
      ...(tool.annotations === undefined
        ? {}
        : { annotations: tool.annotations }),
    },
    tool.inputSchema === undefined
      ? (ctx) => answer(undefined, ctx)
      : (args, ctx) => answer(args, ctx),
  );
}

/**
 * An SDK v2 server named `name` with `tools` registered (see registerTool),
 * each call answered by `answer(tool, args, ctx)`. `listChanged` declares
 * that its tool list may change (for a sessionful route).
 */
export function toolServer(name, tools, answer, { listChanged = false } = {}) {
  const server = new McpServer(
    { name, version: '1.0.0' },
    { capabilities: { tools: listChanged ? { listChanged: true } : {} } },
  );
  for (const tool of tools)
    registerTool(server, tool, (args, ctx) => answer(tool, args, ctx));
  return server;
}

/**
 * Routes made on first use, one per key (`make(key)`: a fetch-style handler
 * with `close`, as createMcpHandler or sessionfulRoute give), closed together.
 */
export function routeCache(make) {
  const routes = new Map();
  return {
    get: (key) => {
      let route = routes.get(key);
      if (route === undefined) {
        route = make(key);
        routes.set(key, route);
      }
      return route;
    },
    made: (key) => routes.get(key),
    close: async () => {
      await Promise.allSettled([...routes.values()].map((r) => r.close()));
    },
  };
}

/** A stateless route: a server from `serverFor` for each request. */
export function statelessRoute(serverFor) {
  return createMcpHandler(serverFor);
}

/**
 * Where a request goes on agentgateway's routes: its path, and the target of a
 * per-target route (`/mcp/<target>`; undefined for any other path).
 */
export function routeOf(req) {
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  const target = path.startsWith('/mcp/')
    ? path.slice('/mcp/'.length)
    : undefined;
  return { path, target };
}

/** Reads a request's whole body. */
export async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function toRequest(req, body) {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(key, value);
    else if (Array.isArray(value))
      for (const item of value) headers.append(key, item);
  }
  const method = req.method ?? 'GET';
  return new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), {
    method,
    headers,
    ...(body.length > 0 && method !== 'GET' && method !== 'HEAD'
      ? { body }
      : {}),
  });
}

async function writeResponse(response, res) {
  res.writeHead(
    response.status,
    Object.fromEntries(response.headers.entries()),
  );
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/**
 * Hands a node:http request to a fetch-style handler and streams its answer
 * back (stopped when the client goes). `body` is the request's body when the
 * caller has read it already.
 */
export async function forward(req, res, handler, body) {
  const request = toRequest(req, body ?? (await readBody(req)));
  await writeResponse(await handler.fetch(request), res);
}

/**
 * Listens on a random 127.0.0.1 port; a request whose handler throws is
 * answered with HTTP 500 and the error's text.
 */
export async function listenLoopback(onRequest) {
  const server = createServer((req, res) => {
    void onRequest(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${server.address().port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A sessionful route (2025 revisions, standalone GET stream), as a backend
 * with live tool lists is: one server from `serverFor` per session, kept in
 * `servers` so a tool registered at run time reaches every session as
 * `notifications/tools/list_changed`.
 */
export function sessionfulRoute(serverFor, { onStream } = {}) {
  const sessions = new Map();
  const servers = new Set();
  return {
    fetch: async (request) => {
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId !== null) {
        const transport = sessions.get(sessionId);
        if (transport === undefined) return new Response(null, { status: 404 });
        if (request.method === 'GET') onStream?.();
        return transport.handleRequest(request);
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
        onsessionclosed: (id) => void sessions.delete(id),
      });
      const server = serverFor();
      servers.add(server);
      await server.connect(transport);
      return transport.handleRequest(request);
    },
    servers,
    close: async () => {
      for (const transport of sessions.values())
        await transport.close().catch(() => {});
    },
  };
}

/**
 * Test fixture, not a product: a small multiplexing MCP gateway that behaves
 * the way agentgateway does in front of several targets (see PROTOCOL.md,
 * "agentgateway"), so the multiplexed mode can be tested without the Rust
 * binary. It copies agentgateway's observable behaviour only:
 *
 * - one endpoint `/mcp`; tool names are `<target>_<tool>` (`prefixMode: always`)
 *   and an incoming name is split at the FIRST `_`;
 * - POST checks: Accept must list application/json and text/event-stream
 *   (else 406), Content-Type must be application/json (else 415), a body
 *   that does not decode is 400;
 * - stateful sessions: the gateway issues its own session id that encodes
 *   the upstream session ids; an undecodable id is 400, a decodable but
 *   unknown one is 404, a non-initialize request without a session is 400;
 *   GET is 405; DELETE ends the upstream sessions;
 * - replies to requests come as SSE;
 * - authorization: a denied `tools/call` is HTTP 400 with JSON-RPC -32602
 *   `Unknown tool: <name>`, and denied tools are filtered out of `tools/list`;
 * - an upstream failure is HTTP 500 with JSON-RPC -32603; no targets is 503;
 * - `tools/list` may drop `nextCursor` (#3476) — here it can paginate its
 *   merged list instead (`pageSize`) to exercise cursor following.
 *
 * Upstreams are real SDK servers reached with the SDK client (legacy era).
 */
import {
  Client,
  StreamableHTTPClientTransport,
  type Tool,
} from '@modelcontextprotocol/client';
import type { ServerResponse } from 'node:http';
import { listen, type Listening } from './servers.js';

/** Options of the test gateway. */
export type TestGatewayOptions = {
  /** Target name -> upstream MCP endpoint URL. */
  targets: Record<string, string>;
  /** Multiplexed names (`<target>_<tool>`) that the authorization rules deny. */
  deny?: string[];
  /** Page size of the merged tools/list (unset: one page). */
  pageSize?: number;
  /** `never`: pass names unprefixed, as `prefixMode: conditional` does for a single target. */
  prefixMode?: 'always' | 'never';
};

/** A running test gateway. */
export type TestGateway = Listening & {
  /** Forget every gateway session (the next request with an old id gets 404). */
  forgetSessions: () => void;
  /** Gateway sessions currently open. */
  sessionCount: () => number;
  /** Change the session encoding (as a gateway upgrade would): old ids no longer decode (400). */
  rotateSessionEncoding: () => void;
};

type GatewaySession = { id: string; upstream: Map<string, Client> };

const ACCEPT_JSON = 'application/json';
const ACCEPT_SSE = 'text/event-stream';

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
}

function rpcError(
  response: ServerResponse,
  status: number,
  id: unknown,
  code: number,
  message: string,
): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: id ?? null,
      error: { code, message },
    }),
  );
}

/** agentgateway's answer when a backend cannot be reached: HTTP 500, JSON-RPC -32603. */
function upstreamFailed(
  response: ServerResponse,
  id: unknown,
  error: unknown,
): void {
  rpcError(
    response,
    500,
    id,
    -32603,
    `failed to send message: ${(error as Error).message}`,
  );
}

function sseReply(
  response: ServerResponse,
  message: unknown,
  sessionId?: string,
): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
  });
  response.end(`data: ${JSON.stringify(message)}\n\n`);
}

function encodeSession(
  id: string,
  upstream: Map<string, Client>,
  encoding: number,
): string {
  const ids: Record<string, string | undefined> = {};
  for (const [target, client] of upstream)
    ids[target] = (
      client.transport as StreamableHTTPClientTransport | undefined
    )?.sessionId;
  return Buffer.from(JSON.stringify({ v: encoding, id, ids })).toString(
    'base64url',
  );
}

function decodeSession(
  header: string,
  encoding: number,
): { id: string } | undefined {
  try {
    const decoded = JSON.parse(
      Buffer.from(header, 'base64url').toString('utf8'),
    ) as { v?: unknown; id?: unknown };
    return decoded.v === encoding && typeof decoded.id === 'string'
      ? { id: decoded.id }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Start the test gateway on 127.0.0.1 with a random port. */
export async function startTestGateway(
  options: TestGatewayOptions,
): Promise<TestGateway> {
  const sessions = new Map<string, GatewaySession>();
  const deny = new Set(options.deny ?? []);
  let counter = 0;
  let encoding = 1;

  const closeSession = async (session: GatewaySession) => {
    sessions.delete(session.id);
    await Promise.all(
      [...session.upstream.values()].map((client) =>
        client.close().catch(() => undefined),
      ),
    );
  };

  const listening = await listen(async (request, response, body) => {
    if (request.method === 'GET')
      return plain(response, 405, 'Method Not Allowed');
    const header = request.headers['mcp-session-id'];
    const sessionHeader = typeof header === 'string' ? header : undefined;
    if (request.method === 'DELETE') {
      const decoded = sessionHeader
        ? decodeSession(sessionHeader, encoding)
        : undefined;
      const session = decoded ? sessions.get(decoded.id) : undefined;
      if (!session) return plain(response, 404, 'Session not found');
      await closeSession(session);
      response.writeHead(200).end();
      return;
    }
    if (request.method !== 'POST')
      return plain(response, 405, 'Method Not Allowed');
    const accept = request.headers.accept ?? '';
    if (!accept.includes(ACCEPT_JSON) || !accept.includes(ACCEPT_SSE)) {
      return plain(
        response,
        406,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    }
    if (!(request.headers['content-type'] ?? '').startsWith(ACCEPT_JSON)) {
      return plain(
        response,
        415,
        'Unsupported Media Type: Client must send application/json',
      );
    }
    let message: {
      jsonrpc?: string;
      id?: number | string;
      method?: string;
      params?: Record<string, unknown>;
    };
    try {
      message = JSON.parse(body.toString('utf8')) as typeof message;
      if (message.jsonrpc !== '2.0' || typeof message.method !== 'string')
        throw new Error('not a JSON-RPC request');
    } catch (error) {
      return plain(
        response,
        400,
        `fail to deserialize request body: ${(error as Error).message}`,
      );
    }
    if (Object.keys(options.targets).length === 0)
      return plain(response, 503, 'no backends');

    let session: GatewaySession | undefined;
    if (sessionHeader !== undefined) {
      const decoded = decodeSession(sessionHeader, encoding);
      if (!decoded)
        return plain(response, 400, 'invalid session id: cannot decode');
      session = sessions.get(decoded.id);
      if (!session) return plain(response, 404, 'Session not found');
    } else if (message.method !== 'initialize') {
      return plain(
        response,
        400,
        'session header is required for non-initialize requests',
      );
    }

    if (message.method === 'initialize') {
      const upstream = new Map<string, Client>();
      try {
        for (const [target, url] of Object.entries(options.targets)) {
          const client = new Client({ name: 'test-gateway', version: '1.0.0' });
          await client.connect(new StreamableHTTPClientTransport(new URL(url)));
          upstream.set(target, client);
        }
      } catch (error) {
        await Promise.all(
          [...upstream.values()].map((client) =>
            client.close().catch(() => undefined),
          ),
        );
        return upstreamFailed(response, message.id, error);
      }
      counter += 1;
      const created: GatewaySession = { id: `gw-${counter}`, upstream };
      sessions.set(created.id, created);
      const requested = String(message.params?.protocolVersion ?? '2025-06-18');
      const protocolVersion = [
        '2025-11-25',
        '2025-06-18',
        '2025-03-26',
      ].includes(requested)
        ? requested
        : '2025-06-18';
      return sseReply(
        response,
        {
          jsonrpc: '2.0',
          id: message.id,
          result: {
            protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'test-gateway', version: '1.0.0' },
          },
        },
        encodeSession(created.id, upstream, encoding),
      );
    }
    if (message.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    if (!session)
      return plain(
        response,
        400,
        'session header is required for non-initialize requests',
      );

    if (message.method === 'tools/list') {
      const merged: Tool[] = [];
      try {
        for (const [target, client] of session.upstream) {
          const { tools } = await client.listTools();
          for (const tool of tools) {
            const name =
              options.prefixMode === 'never'
                ? tool.name
                : `${target}_${tool.name}`;
            if (!deny.has(name)) merged.push({ ...tool, name });
          }
        }
      } catch (error) {
        return upstreamFailed(response, message.id, error);
      }
      const pageSize = options.pageSize ?? merged.length;
      const start = Number(message.params?.cursor ?? 0);
      const next =
        start + pageSize < merged.length ? String(start + pageSize) : undefined;
      return sseReply(response, {
        jsonrpc: '2.0',
        id: message.id,
        result: {
          tools: merged.slice(start, start + pageSize),
          ...(next ? { nextCursor: next } : {}),
        },
      });
    }

    if (message.method === 'tools/call') {
      const name = String(message.params?.name ?? '');
      const index = name.indexOf('_');
      const single =
        options.prefixMode === 'never'
          ? Object.keys(options.targets)[0]
          : undefined;
      const target = single ?? (index > 0 ? name.slice(0, index) : '');
      const tool =
        single !== undefined ? name : index > 0 ? name.slice(index + 1) : '';
      const client = session.upstream.get(target);
      if (!client || deny.has(name))
        return rpcError(
          response,
          400,
          message.id,
          -32602,
          `Unknown tool: ${name}`,
        );
      try {
        const result = await client.callTool({
          name: tool,
          arguments: (message.params?.arguments ?? {}) as Record<
            string,
            unknown
          >,
        });
        return sseReply(response, { jsonrpc: '2.0', id: message.id, result });
      } catch (error) {
        return upstreamFailed(response, message.id, error);
      }
    }
    return rpcError(
      response,
      200,
      message.id,
      -32601,
      `Method not found: ${message.method}`,
    );
  });

  return {
    ...listening,
    forgetSessions: () => {
      const old = [...sessions.values()];
      sessions.clear();
      for (const session of old)
        for (const client of session.upstream.values())
          void client.close().catch(() => undefined);
    },
    rotateSessionEncoding: () => {
      encoding += 1;
    },
    sessionCount: () => sessions.size,
    close: async () => {
      await Promise.all([...sessions.values()].map(closeSession));
      await listening.close();
    },
  };
}

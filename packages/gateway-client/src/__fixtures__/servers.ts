/**
 * Test fixture: real MCP servers built with the SDK server packages, served
 * over node:http on 127.0.0.1 with random ports. Not shipped.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { StreamableHTTPServerTransport as V1StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AddressInfo, Socket } from 'node:net';
import {
  createMcpHandler,
  inputRequired,
  ProtocolError,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

/** One request as the fixture saw it. */
export type RecordedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  rpcMethod: string | undefined;
  rpcId: unknown;
  body: unknown;
};

/** A listening fixture server. */
export type Listening = {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close: () => Promise<void>;
};

/** Listen on 127.0.0.1:0 with `handler`; `close()` destroys open sockets too. */
export async function listen(
  handler: (
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
  ) => void | Promise<void>,
): Promise<Listening & { server: HttpServer }> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = body.length ? JSON.parse(body.toString('utf8')) : undefined;
      } catch {
        parsed = undefined;
      }
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(request.headers))
        headers[key] = Array.isArray(value) ? value.join(', ') : String(value);
      const message = parsed as { method?: string; id?: unknown } | undefined;
      requests.push({
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        headers,
        rpcMethod: message?.method,
        rpcId: message?.id,
        body: parsed,
      });
      Promise.resolve(handler(request, response, body)).catch(
        (error: unknown) => {
          if (!response.headersSent)
            response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(String(error));
        },
      );
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A 127.0.0.1 port with nothing listening on it (the system's pick, closed
 * again): for a process that cannot listen on port 0, or a refused connection.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Serve a web-standard `(Request) => Response` handler from node:http. */
export function webHandler(
  fetchHandler: (request: Request) => Promise<Response>,
) {
  return async (
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
  ) => {
    const abort = new AbortController();
    response.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [key, value] of Object.entries(request.headers)) {
      if (value !== undefined)
        headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const method = request.method ?? 'GET';
    const webRequest = new Request(`http://127.0.0.1${request.url ?? '/'}`, {
      method,
      headers,
      body:
        method === 'GET' || method === 'HEAD' || method === 'DELETE'
          ? undefined
          : body,
      signal: abort.signal,
    });
    const webResponse = await fetchHandler(webRequest);
    response.writeHead(
      webResponse.status,
      Object.fromEntries(webResponse.headers),
    );
    if (!webResponse.body) {
      response.end();
      return;
    }
    const reader = webResponse.body.getReader();
    response.on('close', () => void reader.cancel().catch(() => undefined));
    for (;;) {
      const { done, value } = await reader
        .read()
        .catch(() => ({ done: true as const, value: undefined }));
      if (done) break;
      response.write(value);
    }
    response.end();
  };
}

/** Options of the SDK tool server used by the tests. */
export type ToolServerOptions = {
  /** Extra generated tools `tool-000` ... (for pagination). */
  generatedTools?: number;
  /** Page size of tools/list; unset means one page. */
  pageSize?: number;
  /** Protocol revisions the server accepts (legacy era). */
  protocolVersions?: string[];
  /** Record of cancelled request ids (`notifications/cancelled` or signal abort). */
  cancelled?: unknown[];
  /** Server name (shown in serverInfo). */
  name?: string;
  /** Concurrency of `sleep` calls, updated live. */
  stats?: { active: number; maxActive: number };
  /** Add `progress`, `ask` (elicitation) and `sample` (sampling) tools. */
  interactive?: boolean;
  /** `ask` asks in an `input_required` answer (2026-07-28 multi round-trip) instead of sending `elicitation/create`. */
  inputRounds?: boolean;
  /** The tool list to serve, shared and changed by the test (default: {@link fixtureTools}). */
  tools?: ToolDefinition[];
  /** Cursors name the session that issued them; another session's cursor is -32602. */
  sessionCursors?: boolean;
  /** Accept `<target>_<tool>` names in calls (drop everything up to the first `_`), as behind a multiplexing gateway. */
  multiplexedNames?: boolean;
  /** The session id this server instance serves (for `sessionCursors`). */
  sessionId?: () => string | undefined;
};

/** A tool as the fixture servers list it. */
export type ToolDefinition = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
};

/** The tools every fixture server has, plus `generatedTools` more. */
export function fixtureTools(
  options: ToolServerOptions = {},
): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    {
      name: 'echo',
      description: 'Echo the text argument back.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'add',
      description: 'Add two numbers.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'sleep',
      description: 'Wait ms milliseconds, then answer.',
      inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
    },
    {
      name: 'chatty',
      description: 'Send a log notification before the result.',
      inputSchema: { type: 'object' },
    },
    {
      name: 'fail',
      description: 'Always returns isError.',
      inputSchema: { type: 'object' },
      annotations: { destructiveHint: true },
    },
    {
      name: 'write_file',
      description: 'A tool name with an underscore.',
      inputSchema: { type: 'object' },
    },
  ];
  if (options.interactive) {
    tools.push(
      {
        name: 'progress',
        description:
          'Send `steps` progress notifications, `ms` apart, then answer.',
        inputSchema: {
          type: 'object',
          properties: { steps: { type: 'number' }, ms: { type: 'number' } },
        },
      },
      {
        name: 'ask',
        description:
          'Ask the user a question (elicitation/create), answer with the reply.',
        inputSchema: { type: 'object' },
      },
      {
        name: 'sample',
        description:
          'Ask the client model (sampling/createMessage), answer with its text.',
        inputSchema: { type: 'object' },
      },
    );
  }
  for (let index = 0; index < (options.generatedTools ?? 0); index += 1) {
    tools.push({
      name: `tool-${String(index).padStart(3, '0')}`,
      description: `Generated tool number ${index}.`,
      inputSchema: { type: 'object' },
    });
  }
  return tools;
}

const WHICH_BINARY = {
  mode: 'form' as const,
  message: 'Which binary?',
  requestedSchema: {
    type: 'object' as const,
    properties: { binary: { type: 'string' as const } },
    required: ['binary'],
  },
};

/** `ask` on 2026-07-28: the question in an `input_required` answer, the reply in the retry. */
function askInRounds(request: { inputResponses?: Record<string, unknown> }) {
  const reply = request.inputResponses?.['binary'];
  if (reply === undefined)
    return inputRequired({
      inputRequests: {
        binary: { method: 'elicitation/create', params: WHICH_BINARY },
      },
    });
  return {
    content: [
      { type: 'text' as const, text: `elicited ${JSON.stringify(reply)}` },
    ],
  };
}

/** `<label> <reply>` once the client answers `request`; `refused: <error>` as an error result when it refuses. */
async function relayed(label: string, request: Promise<unknown>) {
  try {
    const reply = await request;
    return {
      content: [
        { type: 'text' as const, text: `${label} ${JSON.stringify(reply)}` },
      ],
    };
  } catch (error) {
    return {
      content: [{ type: 'text' as const, text: `refused: ${String(error)}` }],
      isError: true,
    };
  }
}

/** A low-level SDK v2 `Server` with the fixture tools and cursor pagination. */
export function createToolServer(options: ToolServerOptions = {}): Server {
  const tools = options.tools ?? fixtureTools(options);
  const server = new Server(
    { name: options.name ?? 'fixture', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: true }, logging: {} },
      ...(options.protocolVersions
        ? { supportedProtocolVersions: options.protocolVersions }
        : {}),
    },
  );
  server.setRequestHandler('tools/list', async (request) => {
    const pageSize = options.pageSize ?? tools.length;
    const session = options.sessionCursors
      ? `${options.sessionId?.() ?? ''}:`
      : '';
    const decoded = request.params?.cursor
      ? Buffer.from(request.params.cursor, 'base64url').toString('utf8')
      : `${session}0`;
    if (!decoded.startsWith(session))
      throw new ProtocolError(-32602, 'Invalid cursor');
    const start = Number(decoded.slice(session.length));
    if (!Number.isInteger(start) || start < 0)
      throw new ProtocolError(-32602, 'Invalid cursor');
    const page = tools.slice(start, start + pageSize);
    const next =
      start + pageSize < tools.length
        ? Buffer.from(`${session}${start + pageSize}`).toString('base64url')
        : undefined;
    return { tools: page as never, ...(next ? { nextCursor: next } : {}) };
  });
  server.setRequestHandler('tools/call', async (request, context) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const name = options.multiplexedNames
      ? request.params.name.slice(request.params.name.indexOf('_') + 1)
      : request.params.name;
    switch (name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args.text ?? '') }] };
      case 'add':
        return {
          content: [
            { type: 'text', text: String(Number(args.a) + Number(args.b)) },
          ],
        };
      case 'write_file':
        return { content: [{ type: 'text', text: 'written' }] };
      case 'whoami': // not listed: answers with the role header the server received
        return {
          content: [
            {
              type: 'text',
              text: String(context.http?.req?.headers.get('x-heretek-role')),
            },
          ],
        };
      case 'sleep': {
        const ms = Number(args.ms ?? 0);
        const stats = options.stats;
        if (stats) {
          stats.active += 1;
          stats.maxActive = Math.max(stats.maxActive, stats.active);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          context.mcpReq.signal.addEventListener('abort', () => {
            options.cancelled?.push(context.mcpReq.id);
            clearTimeout(timer);
            resolve();
          });
        });
        if (stats) stats.active -= 1;
        return { content: [{ type: 'text', text: `slept ${ms}` }] };
      }
      case 'chatty':
        await context.mcpReq.notify({
          method: 'notifications/message',
          params: { level: 'info', data: 'working on it' },
        });
        await context.mcpReq.notify({
          method: 'notifications/message',
          params: { level: 'info', data: 'almost done' },
        });
        return {
          content: [{ type: 'text', text: 'done after notifications' }],
        };
      case 'progress': {
        const steps = Number(args.steps ?? 3);
        const ms = Number(args.ms ?? 10);
        const token = context.mcpReq._meta?.progressToken;
        for (let step = 1; step <= steps; step += 1) {
          await new Promise((resolve) => setTimeout(resolve, ms));
          if (token !== undefined)
            await context.mcpReq.notify({
              method: 'notifications/progress',
              params: {
                progressToken: token,
                progress: step,
                total: steps,
                message: `step ${step} of ${steps}`,
              },
            });
        }
        return {
          content: [
            {
              type: 'text',
              text: `done in ${steps} steps (token ${token === undefined ? 'absent' : 'present'})`,
            },
          ],
        };
      }
      case 'ask':
        if (options.inputRounds) return askInRounds(context.mcpReq);
        return relayed(
          'elicited',
          context.mcpReq.send({
            method: 'elicitation/create',
            params: WHICH_BINARY,
          }),
        );
      case 'sample':
        return relayed(
          'sampled',
          context.mcpReq.send({
            method: 'sampling/createMessage',
            params: {
              messages: [
                {
                  role: 'user',
                  content: { type: 'text', text: 'Name a colour.' },
                },
              ],
              maxTokens: 10,
            },
          }),
        );
      case 'fail':
        return {
          content: [{ type: 'text', text: 'the tool failed on purpose' }],
          isError: true,
        };
      default:
        if (request.params.name.startsWith('tool-'))
          return { content: [{ type: 'text', text: request.params.name }] };
        throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
    }
  });
  return server;
}

/** A sessionful (2025-06-18 / 2025-11-25) SDK v2 server: one transport + server per session. */
export type SessionfulServer = Listening & {
  /** Live sessions by id (their transports, of whichever SDK serves them). */
  sessions: ReadonlyMap<string, { close(): Promise<void> }>;
  /** Add a tool to the shared list and send `notifications/tools/list_changed` on every session. */
  addTool?: (tool: ToolDefinition) => Promise<void>;
  /** End every session's standalone GET stream (the client should reconnect). */
  closeStandaloneStreams?: () => void;
  /** Forget every session: the next request with an old id gets 404. */
  forgetSessions: () => void;
  /** Sessions ended by DELETE. */
  deleted: string[];
};

/** Start a sessionful server on 127.0.0.1 (path ignored: any path is the MCP endpoint). */
export async function startSessionfulServer(
  options: ToolServerOptions & {
    jsonResponse?: boolean;
    requireToken?: string;
    /** `tools/list` pages (1-based) at which the session expires (404, session forgotten), once per entry. */
    expireOnPages?: number[];
    /** Answer the standalone GET with 405. */
    refuseStandalone?: boolean;
    /** Answer each `initialize` this much later (a backend slow to start). */
    initializeDelayMs?: number;
  } = {},
): Promise<SessionfulServer> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers = new Set<Server>();
  const deleted: string[] = [];
  const tools = options.tools ?? fixtureTools(options);
  const expireOn = [...(options.expireOnPages ?? [])];
  const pageOf = async (request: Request): Promise<number | undefined> => {
    if (request.method !== 'POST') return undefined;
    const body = (await request
      .clone()
      .json()
      .catch(() => undefined)) as
      { method?: string; params?: { cursor?: string } } | undefined;
    if (body?.method !== 'tools/list') return undefined;
    const cursor = body.params?.cursor;
    if (!cursor) return 1;
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    const start = Number(decoded.slice(decoded.lastIndexOf(':') + 1));
    return start / (options.pageSize ?? tools.length) + 1;
  };
  const handle = async (request: Request): Promise<Response> => {
    if (
      options.requireToken !== undefined &&
      request.headers.get('authorization') !== `Bearer ${options.requireToken}`
    ) {
      return new Response('unauthorized', { status: 401 });
    }
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId && expireOn.length > 0) {
      const page = await pageOf(request);
      if (page !== undefined && expireOn.includes(page)) {
        expireOn.splice(expireOn.indexOf(page), 1);
        void sessions.get(sessionId)?.close();
        sessions.delete(sessionId);
      }
    }
    if (
      sessionId &&
      options.refuseStandalone &&
      request.method === 'GET' &&
      !request.headers.has('last-event-id')
    )
      return new Response(null, { status: 405 });
    if (sessionId) {
      const transport = sessions.get(sessionId);
      if (!transport) {
        return Response.json(
          {
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          },
          { status: 404 },
        );
      }
      if (request.method === 'DELETE') deleted.push(sessionId);
      return transport.handleRequest(request);
    }
    if (options.initializeDelayMs !== undefined) {
      const body = (await request
        .clone()
        .json()
        .catch(() => undefined)) as { method?: string } | undefined;
      if (body?.method === 'initialize')
        await new Promise((resolve) =>
          setTimeout(resolve, options.initializeDelayMs),
        );
    }
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.jsonResponse ?? false,
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
    let ownId: string | undefined;
    const server = createToolServer({
      ...options,
      tools,
      sessionId: () => (ownId ??= transport.sessionId),
    });
    servers.add(server);
    server.onclose = () => servers.delete(server);
    await server.connect(transport);
    return transport.handleRequest(request);
  };
  const listening = await listen(webHandler(handle));
  return {
    ...listening,
    sessions,
    deleted,
    addTool: async (tool) => {
      tools.push(tool);
      await Promise.all(
        [...servers].map((server) =>
          server.sendToolListChanged().catch(() => undefined),
        ),
      );
    },
    closeStandaloneStreams: () => {
      for (const transport of sessions.values())
        transport.closeStandaloneSSEStream();
    },
    forgetSessions: () => {
      for (const transport of sessions.values()) void transport.close();
      sessions.clear();
    },
    close: async () => {
      for (const transport of sessions.values())
        await transport.close().catch(() => undefined);
      sessions.clear();
      await listening.close();
    },
  };
}

/** A 2026-07-28 server (stateless, `server/discover`) with the SDK's stateless legacy fallback. */
export async function startModernServer(
  options: ToolServerOptions & { responseMode?: 'auto' | 'sse' | 'json' } = {},
): Promise<Listening> {
  const handler = createMcpHandler(() => createToolServer(options), {
    responseMode: options.responseMode ?? 'auto',
    keepAliveMs: 0,
  });
  const listening = await listen(
    webHandler((request) => handler.fetch(request)),
  );
  return {
    ...listening,
    close: async () => {
      await handler.close();
      await listening.close();
    },
  };
}

/**
 * An older-era server built with SDK v1 (`@modelcontextprotocol/sdk` 1.32),
 * sessionful, pinned to `protocolVersion` when given (it answers
 * `initialize` with the client's revision when it supports it).
 */
export async function startV1Server(
  options: { generatedTools?: number; pageSize?: number } = {},
): Promise<SessionfulServer> {
  const { Server: V1Server } =
    await import('@modelcontextprotocol/sdk/server/index.js');
  const { ListToolsRequestSchema, CallToolRequestSchema } =
    await import('@modelcontextprotocol/sdk/types.js');
  const tools = fixtureTools(options);
  const createServer = () => {
    const server = new V1Server(
      { name: 'fixture-v1', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async (listRequest) => {
      const pageSize = options.pageSize ?? tools.length;
      const start = listRequest.params?.cursor
        ? Number(listRequest.params.cursor)
        : 0;
      const next =
        start + pageSize < tools.length ? String(start + pageSize) : undefined;
      return {
        tools: tools.slice(start, start + pageSize) as never,
        ...(next ? { nextCursor: next } : {}),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (callRequest) => {
      if (callRequest.params.name === 'echo') {
        return {
          content: [
            {
              type: 'text',
              text: String(
                (callRequest.params.arguments as { text?: unknown } | undefined)
                  ?.text ?? '',
              ),
            },
          ],
        };
      }
      return {
        content: [
          { type: 'text', text: `no such tool ${callRequest.params.name}` },
        ],
        isError: true,
      };
    });
    return server;
  };
  return listenV1((transport) => createServer().connect(transport));
}

type V1Transport = InstanceType<typeof V1StreamableHTTPServerTransport>;

/**
 * A sessionful SDK v1 Streamable HTTP endpoint: each new session gets a
 * transport that `connect` attaches its own server to; an unknown session id
 * gets 404, a DELETE is recorded. With `path`, a request to any other path
 * gets 404.
 */
export async function listenV1(
  connect: (transport: V1Transport) => Promise<void>,
  { path }: { path?: string | undefined } = {},
): Promise<SessionfulServer> {
  const { StreamableHTTPServerTransport } =
    await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const transports = new Map<string, V1Transport>();
  const deleted: string[] = [];
  const listening = await listen(async (request, response, body) => {
    if (path !== undefined && request.url !== path) {
      response.writeHead(404).end();
      return;
    }
    const parsed = body.length
      ? (JSON.parse(body.toString('utf8')) as unknown)
      : undefined;
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (!transport) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      if (request.method === 'DELETE') deleted.push(sessionId);
      await transport.handleRequest(request, response, parsed);
      return;
    }
    const transport: V1Transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    await connect(transport);
    await transport.handleRequest(request, response, parsed);
  });
  return {
    ...listening,
    sessions: transports,
    deleted,
    forgetSessions: () => transports.clear(),
    close: async () => {
      for (const transport of transports.values())
        await transport.close().catch(() => undefined);
      transports.clear();
      await listening.close();
    },
  };
}

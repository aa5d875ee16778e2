// Test fixture: one sessionful MCP backend (SDK v2 McpServer behind the
// Streamable HTTP transport, 2025 revisions) on 127.0.0.1 at /mcp/<target>,
// with the standalone GET stream, so a tool added at run time reaches a
// connected client as notifications/tools/list_changed.
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

export type LiveBackend = {
  url: string;
  /** `tools/list` requests served so far. */
  listings: () => number;
  /** Standalone GET streams opened so far. */
  streams: () => number;
  /** Registers a tool on every session (each sends tools/list_changed) and on sessions to come. */
  addTool: (name: string, description: string) => void;
  close: () => Promise<void>;
};

type Tool = { name: string; description: string };

function register(server: McpServer, tool: Tool): void {
  server.registerTool(
    tool.name,
    { description: tool.description, annotations: { readOnlyHint: true } },
    async () => ({
      content: [{ type: 'text' as const, text: `${tool.name} ok` }],
    }),
  );
}

async function toRequest(req: IncomingMessage, url: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers))
    if (typeof value === 'string') headers.set(key, value);
  return new Request(new URL(req.url ?? '/', url), {
    method: req.method ?? 'GET',
    headers,
    ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
  });
}

async function send(response: Response, res: ServerResponse): Promise<void> {
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

/** Starts the backend with its first tools. */
export async function startLiveBackend(
  target: string,
  tools: Tool[],
): Promise<LiveBackend> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  const all = [...tools];
  let listings = 0;
  let streams = 0;
  let url = '';

  const handle = async (request: Request): Promise<Response> => {
    if (new URL(request.url).pathname !== `/mcp/${target}`)
      return new Response(null, { status: 404 });
    if (request.method === 'POST') {
      const body = (await request
        .clone()
        .json()
        .catch(() => undefined)) as { method?: string } | undefined;
      if (body?.method === 'tools/list') listings++;
    }
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const transport = sessions.get(sessionId);
      if (transport === undefined) return new Response(null, { status: 404 });
      if (request.method === 'GET') streams++;
      return transport.handleRequest(request);
    }
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
        onsessionclosed: (id) => void sessions.delete(id),
      });
    const server = new McpServer(
      { name: 'live-backend', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    for (const tool of all) register(server, tool);
    servers.add(server);
    await server.connect(transport);
    return transport.handleRequest(request);
  };

  const http = createServer((req, res) => {
    void (async () =>
      send(await handle(await toRequest(req, url)), res))().catch(
      (error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      },
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    listings: () => listings,
    streams: () => streams,
    addTool: (name, description) => {
      const tool = { name, description };
      all.push(tool);
      for (const server of servers) register(server, tool);
    },
    close: async () => {
      for (const transport of sessions.values())
        await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

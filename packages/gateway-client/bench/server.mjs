// The loopback SDK server the benchmarks call (one echo tool on /mcp/bench,
// SSE or JSON replies) and the gateway client they measure against it.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import {
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

function toolServer() {
  const server = new Server(
    { name: 'bench', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler('tools/list', async () => ({
    tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
  }));
  server.setRequestHandler('tools/call', async (request) => ({
    content: [
      { type: 'text', text: String(request.params.arguments?.text ?? '') },
    ],
  }));
  return server;
}

export async function startServer({ json }) {
  const sessions = new Map();
  const handle = async (request) => {
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const transport = sessions.get(id);
      return transport
        ? transport.handleRequest(request)
        : new Response('Session not found', { status: 404 });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: json,
      onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
    });
    await toolServer().connect(transport);
    return transport.handleRequest(request);
  };
  const http = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers))
        headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      const body = req.method === 'POST' ? Buffer.concat(chunks) : undefined;
      const response = await handle(
        new Request(`http://127.0.0.1${req.url}`, {
          method: req.method,
          headers,
          body,
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body)
        for await (const chunk of response.body) res.write(chunk);
      res.end();
    });
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const transport of sessions.values())
        await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** A GatewayClient of `GatewayClient` (any build) on the server's per-target route, and its echo call. */
export function gatewayEcho(GatewayClient, url) {
  const gateway = new GatewayClient({
    url,
    mode: 'per-target',
    role: 'director',
    maxConcurrentPerEndpoint: 64,
  });
  const call = (text) =>
    gateway.callTool({ target: 'bench', tool: 'echo', arguments: { text } });
  return { gateway, call };
}

/** An SDK client connected to the server's route (through `fetch` when given), and its echo call. */
export async function sdkEcho(url, name, fetch) {
  const client = new Client({ name, version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(`${url}/mcp/bench`),
      fetch ? { fetch } : undefined,
    ),
  );
  const call = (text) => client.callTool({ name: 'echo', arguments: { text } });
  return { client, call };
}

// One client per process (nothing else loaded into it): p50 / p99 / mean and CPU per call.
// Usage, after a build: node bench/one.mjs <sdk|gateway> [calls=2000] [json=0|1]
// Alternate the two a few times and compare medians: an in-process comparison
// cannot show costs one client imposes on the whole process.
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
import { Agent, fetch as undiciFetch } from 'undici';
const [which, callsArg, jsonArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 2000);
const json = jsonArg === '1';
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
const sessions = new Map();
const handle = async (request) => {
  const id = request.headers.get('mcp-session-id');
  if (id) {
    const t = sessions.get(id);
    return t
      ? t.handleRequest(request)
      : new Response('Session not found', { status: 404 });
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: json,
    onsessioninitialized: (s) => sessions.set(s, transport),
  });
  await toolServer().connect(transport);
  return transport.handleRequest(request);
};
const http = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const response = await handle(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const c of response.body) res.write(c);
    res.end();
  });
});
await new Promise((r) => http.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${http.address().port}`;
let call, close;
if (which === 'sdk') {
  const agent = new Agent();
  const c = new Client({ name: 'b', version: '1' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp/bench`), {
      fetch: (u, i) => undiciFetch(u, { ...i, dispatcher: agent }),
    }),
  );
  call = (text) => c.callTool({ name: 'echo', arguments: { text } });
  close = async () => {
    await c.close();
    await agent.close();
  };
} else {
  const { GatewayClient } = await import(
    process.env.GATEWAY_CLIENT_DIST ?? '../dist/index.js'
  );
  const g = new GatewayClient({
    url,
    mode: 'per-target',
    role: 'director',
    maxConcurrentPerEndpoint: 64,
  });
  call = (text) =>
    g.callTool({ target: 'bench', tool: 'echo', arguments: { text } });
  close = () => g.close();
}
for (let i = 0; i < 200; i++) await call('warm');
const samples = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < CALLS; i++) {
  const s = process.hrtime.bigint();
  const r = await call(`t${i}`);
  samples.push(Number(process.hrtime.bigint() - s) / 1e6);
  if (r.content[0].text !== `t${i}`) throw new Error('crossed');
}
const cpu = process.cpuUsage(cpu0);
const cpuPerCall = (cpu.user + cpu.system) / 1000 / CALLS;
samples.sort((a, b) => a - b);
const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
console.log(
  JSON.stringify({
    which,
    json,
    p50: samples[Math.floor(samples.length / 2)],
    p99: samples[Math.floor(samples.length * 0.99)],
    mean,
    cpuPerCall,
  }),
);
await close();
http.closeAllConnections();
http.close();

// Benchmark: tools/call round trips to a loopback SDK server, directly through
// the MCP SDK v2 client versus through @heretek/gateway-client (from dist).
// Usage: pnpm turbo run bench --filter @heretek/gateway-client
//        (or: node bench/run.mjs [--calls 1000] [--concurrent 200])
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import {
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { Agent, fetch as undiciFetch } from 'undici';
import { GatewayClient } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    concurrent: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const CONCURRENT = Number(values.concurrent);
const BLOCK = 100;

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

async function startServer({ json }) {
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

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), mean };
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;

async function runMode({ json }) {
  const server = await startServer({ json });
  const sdkDefault = new Client({ name: 'bench-sdk', version: '1' });
  await sdkDefault.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/bench`)),
  );
  const agent = new Agent();
  const sdkUndici = new Client({ name: 'bench-sdk-undici', version: '1' });
  await sdkUndici.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/bench`), {
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: agent }),
    }),
  );
  const gateway = new GatewayClient({
    url: server.url,
    mode: 'per-target',
    role: 'director',
    maxConcurrentPerEndpoint: 64,
  });
  await gateway.listTools({ target: 'bench' });

  const contenders = {
    'SDK client (global fetch)': (text) =>
      sdkDefault.callTool({ name: 'echo', arguments: { text } }),
    'SDK client (undici Agent fetch)': (text) =>
      sdkUndici.callTool({ name: 'echo', arguments: { text } }),
    '@heretek/gateway-client': (text) =>
      gateway.callTool({ target: 'bench', tool: 'echo', arguments: { text } }),
  };
  // warm-up
  for (const call of Object.values(contenders))
    for (let index = 0; index < 50; index += 1) await call('warm');
  const ratios = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const samples = Object.fromEntries(
      Object.keys(contenders).map((name) => [name, []]),
    );
    // interleaved blocks so a shared machine's load drifts evenly over all contenders
    for (let done = 0; done < CALLS; done += BLOCK) {
      for (const [name, call] of Object.entries(contenders)) {
        for (let index = 0; index < Math.min(BLOCK, CALLS - done); index += 1) {
          const text = `${name}-${done + index}`;
          const start = process.hrtime.bigint();
          const result = await call(text);
          samples[name].push(Number(process.hrtime.bigint() - start) / 1e6);
          if (result.content[0].text !== text)
            throw new Error(`crossed reply for ${name}`);
        }
      }
    }
    const report = Object.fromEntries(
      Object.entries(samples).map(([name, list]) => [name, stats(list)]),
    );
    const base = report['SDK client (global fetch)'];
    const baseUndici = report['SDK client (undici Agent fetch)'];
    const ours = report['@heretek/gateway-client'];
    console.log(
      `\n## round ${round}: ${CALLS} sequential tools/call round trips, ${json ? 'JSON' : 'SSE'} replies`,
    );
    console.log('| client | p50 | p99 | mean |');
    console.log('|---|---|---|---|');
    for (const [name, value] of Object.entries(report))
      console.log(
        `| ${name} | ${fmt(value.p50)} | ${fmt(value.p99)} | ${fmt(value.mean)} |`,
      );
    const ratio = {
      global: [ours.p50 / base.p50, ours.p99 / base.p99, ours.mean / base.mean],
      undici: [
        ours.p50 / baseUndici.p50,
        ours.p99 / baseUndici.p99,
        ours.mean / baseUndici.mean,
      ],
    };
    ratios.push(ratio);
    console.log(
      `ratio vs SDK (global fetch): p50 ${ratio.global[0].toFixed(3)}, p99 ${ratio.global[1].toFixed(3)}, mean ${ratio.global[2].toFixed(3)}`,
    );
    console.log(
      `ratio vs SDK (same undici Agent): p50 ${ratio.undici[0].toFixed(3)}, p99 ${ratio.undici[1].toFixed(3)}, mean ${ratio.undici[2].toFixed(3)}`,
    );
  }
  const median = (list) =>
    [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const pick = (key, index) =>
    median(ratios.map((ratio) => ratio[key][index])).toFixed(3);
  console.log(
    `\n**median over ${ROUNDS} rounds (${json ? 'JSON' : 'SSE'})**: vs global fetch p50 ${pick('global', 0)}, p99 ${pick('global', 1)}, mean ${pick('global', 2)}; vs same undici Agent p50 ${pick('undici', 0)}, p99 ${pick('undici', 1)}, mean ${pick('undici', 2)}`,
  );

  // concurrency: CONCURRENT calls at once, every reply must match its request
  const start = process.hrtime.bigint();
  const texts = Array.from(
    { length: CONCURRENT },
    (_, index) => `concurrent-${index}-${randomUUID()}`,
  );
  const results = await Promise.allSettled(
    texts.map((text) =>
      gateway.callTool({ target: 'bench', tool: 'echo', arguments: { text } }),
    ),
  );
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  const lost = results.filter((result) => result.status === 'rejected').length;
  const crossed = results.filter(
    (result, index) =>
      result.status === 'fulfilled' &&
      result.value.content[0].text !== texts[index],
  ).length;
  console.log(
    `${CONCURRENT} concurrent calls (max 64 in flight per endpoint): ${fmt(elapsed)} wall, lost ${lost}, crossed ${crossed}`,
  );

  await sdkDefault.close();
  await sdkUndici.close();
  await agent.close();
  await gateway.close();
  await server.close();
  if (lost || crossed) process.exitCode = 1;
}

console.log(
  `# @heretek/gateway-client benchmark — Node ${process.version}, ${(await import('node:os')).cpus().length} cores`,
);
await runMode({ json: false });
await runMode({ json: true });

// Benchmark: tools/call round trips to a loopback SDK server, directly through
// the MCP SDK v2 client versus through @heretek/gateway-client (from dist).
// Usage: pnpm turbo run bench --filter @heretek/gateway-client
//        (or: node bench/run.mjs [--calls 1000] [--concurrent 200])
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { GatewayClient } from '../dist/index.js';
import { gatewayEcho, sdkEcho, startServer } from './server.mjs';

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
  const sdkDefault = await sdkEcho(server.url, 'bench-sdk');
  const agent = new Agent();
  const sdkUndici = await sdkEcho(server.url, 'bench-sdk-undici', (url, init) =>
    undiciFetch(url, { ...init, dispatcher: agent }),
  );
  const { gateway, call: gatewayCall } = gatewayEcho(GatewayClient, server.url);
  await gateway.listTools({ target: 'bench' });

  const contenders = {
    'SDK client (global fetch)': sdkDefault.call,
    'SDK client (undici Agent fetch)': sdkUndici.call,
    '@heretek/gateway-client': gatewayCall,
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
    texts.map((text) => gatewayCall(text)),
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

  await sdkDefault.client.close();
  await sdkUndici.client.close();
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

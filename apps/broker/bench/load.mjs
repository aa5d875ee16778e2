// Load: a warm-up burst, then ROUNDS x 1,000 concurrent `mcp_call_tool` requests over the 12 default
// backends through one broker (built bin, stdio), each carrying a unique token
// that the backend's `echo` tool returns. Every reply is checked against the
// request it answers: a reply missing after the deadline is lost, a reply
// carrying another request's token is crossed. The broker runs with
// --expose-gc and a preloaded heap probe (fixtures/heap-probe.cjs): its heap
// after a full GC is compared before the first round and after the last.
//
//   CONCURRENCY=1000 ROUNDS=3 node bench/load.mjs
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { DEFAULT_TARGETS } from './gateway.mjs';
import {
  benchOptions,
  machine,
  percentile,
  processCpuMs,
  round,
  spawnBroker,
  spawnGateway,
} from './lib.mjs';

const { CONCURRENCY, ROUNDS, DEADLINE_MS } = benchOptions({
  CONCURRENCY: 1000,
  ROUNDS: 3,
  DEADLINE_MS: 120_000,
});
const probe = fileURLToPath(
  new URL('./fixtures/heap-probe.cjs', import.meta.url),
);

// Backends answer after 0..11 ms so replies come back out of order.
const gateway = await spawnGateway(
  Object.fromEntries(DEFAULT_TARGETS.map((t, i) => [t, { callDelayMs: i }])),
);
const broker = spawnBroker(
  {
    HERETEK_GATEWAY_URL: gateway.url,
    HERETEK_BROKER_ROLE: 'director',
    HERETEK_GATEWAY_TIMEOUT_MS: '60000',
  },
  { nodeArgs: ['--expose-gc', '--require', probe] },
);
await broker.initialize();
await broker.awaitDiscovery(DEFAULT_TARGETS.map((t) => `${t}_echo`));

async function heap() {
  const seen = broker.stderr().split('HEAP_PROBE ').length;
  broker.child.kill('SIGUSR2');
  for (let i = 0; i < 500; i++) {
    const parts = broker.stderr().split('HEAP_PROBE ');
    if (parts.length > seen) return JSON.parse(parts.at(-1).split('\n')[0]);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the broker did not answer the heap probe');
}

let sequence = 0;
function call(target) {
  const token = `${target}-${sequence++}-${Math.random().toString(36).slice(2)}`;
  const start = performance.now();
  return broker
    .request('tools/call', {
      name: 'mcp_call_tool',
      arguments: { name: `${target}_echo`, arguments: { token } },
    })
    .then((reply) => ({ token, reply, ms: performance.now() - start }));
}

// Warm-up: discovery, sessions to all 12 targets, the argument validator.
for (const t of DEFAULT_TARGETS) {
  const { token, reply } = await call(t);
  if (reply.result?.content?.[0]?.text !== token) {
    throw new Error(
      `warm-up call to ${t} failed: ${JSON.stringify(reply)}\n${broker.stderr()}`,
    );
  }
}
const heapIdle = await heap();
const rounds = [];
const allTokens = new Set();
let heapStart = heapIdle;
// Round 0 is a warm-up burst: it fills the gateway client's connection pools
// (up to 16 sockets for each of the 12 endpoints) and the SDK's tables once.
// Its replies are checked like the others; the heap baseline is taken after it.
for (let r = 0; r <= ROUNDS; r++) {
  if (r === 1) heapStart = await heap();
  const started = performance.now();
  const cpuBefore = {
    broker: processCpuMs(broker.child.pid),
    gateway: processCpuMs(gateway.pid),
    client: process.cpuUsage(),
  };
  const pending = Array.from({ length: CONCURRENCY }, (_, i) =>
    call(DEFAULT_TARGETS[i % DEFAULT_TARGETS.length]),
  );
  let timer;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(() => resolve('deadline'), DEADLINE_MS);
  });
  const settled = await Promise.race([Promise.allSettled(pending), deadline]);
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  const clientCpu = process.cpuUsage(cpuBefore.client);
  const cpuMs = {
    broker: round(processCpuMs(broker.child.pid) - cpuBefore.broker, 0),
    gateway: round(processCpuMs(gateway.pid) - cpuBefore.gateway, 0),
    client: round((clientCpu.user + clientCpu.system) / 1000, 0),
  };
  let ok = 0;
  let crossed = 0;
  let errors = 0;
  const latencies = [];
  const outcomes = settled === 'deadline' ? [] : settled;
  for (const outcome of outcomes) {
    if (outcome.status !== 'fulfilled') continue;
    const { token, reply, ms } = outcome.value;
    latencies.push(ms);
    allTokens.add(token);
    const text = reply.result?.content?.[0]?.text;
    if (reply.error || reply.result?.isError) errors++;
    else if (text === token) ok++;
    else crossed++;
  }
  const lost =
    CONCURRENCY - outcomes.filter((o) => o.status === 'fulfilled').length;
  rounds.push({
    round: r === 0 ? 'warm-up' : r,
    requests: CONCURRENCY,
    ok,
    lost,
    crossed,
    errors,
    wallMs: round(wallMs, 0),
    cpuMs,
    heapAfterGcMb: round((await heap()).heapUsed / 1024 / 1024, 2),
    latencyMs: {
      p50: round(percentile(latencies, 50), 1),
      p99: round(percentile(latencies, 99), 1),
      max: round(Math.max(...latencies), 1),
    },
  });
}
// Let the broker's timers and sockets settle before the last measurement.
await new Promise((r) => setTimeout(r, 1000));
const heapEnd = await heap();
const stats = await gateway.stats();
const unanswered = broker.pending;
const exitCode = await broker.close();
await gateway.close();

const mb = (b) => round(b / 1024 / 1024, 2);
const heapGrowth = (heapEnd.heapUsed - heapStart.heapUsed) / heapStart.heapUsed;
const totals = rounds.reduce(
  (a, r) => ({
    ok: a.ok + r.ok,
    lost: a.lost + r.lost,
    crossed: a.crossed + r.crossed,
    errors: a.errors + r.errors,
  }),
  { ok: 0, lost: 0, crossed: 0, errors: 0 },
);
const report = {
  bench: 'load',
  machine: machine(),
  backends: DEFAULT_TARGETS.length,
  concurrency: CONCURRENCY,
  rounds,
  totals: {
    requests: CONCURRENCY * (ROUNDS + 1),
    ...totals,
    uniqueTokens: allTokens.size,
  },
  gatewayCallsSeen: Object.values(stats.calls).reduce((a, b) => a + b, 0),
  brokerHeapAfterGcMb: {
    idleBeforeWarmUp: mb(heapIdle.heapUsed),
    start: mb(heapStart.heapUsed),
    end: mb(heapEnd.heapUsed),
    growth: `${round(100 * heapGrowth, 1)}%`,
    withinTenPercent: Math.abs(heapGrowth) <= 0.1,
  },
  brokerRssMb: {
    idleBeforeWarmUp: mb(heapIdle.rss),
    start: mb(heapStart.rss),
    end: mb(heapEnd.rss),
  },
  brokerExit: exitCode,
  unansweredAtClose: unanswered,
  brokerWarnings: broker
    .stderr()
    .split('\n')
    .filter((l) => /warning/i.test(l))
    .slice(0, 5),
};
console.log(JSON.stringify(report, null, 2));
const pass =
  totals.lost === 0 &&
  totals.crossed === 0 &&
  totals.errors === 0 &&
  report.brokerHeapAfterGcMb.withinTenPercent;
if (!pass) process.exitCode = 1;

// Discovery over the 12 default backends, each answering `tools/list` after a
// different delay (STEP_MS, 2*STEP_MS, ... 12*STEP_MS) on the stand-in gateway
// (its own process). Discovery is concurrent when its span, from the first
// request the gateway sees to its last listing answer, is about the slowest
// delay and far below their sum. The client's view is shown too: spawn to the
// first search answer that finds every backend's `echo` tool.
//
//   STEP_MS=40 RUNS=5 node bench/discovery.mjs
import { performance } from 'node:perf_hooks';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { DEFAULT_TARGETS } from './gateway.mjs';
import {
  benchOptions,
  machine,
  percentile,
  round,
  spawnBroker,
  spawnGateway,
} from './lib.mjs';

const { STEP_MS, RUNS, EXTRA_TOOLS } = benchOptions({
  STEP_MS: 40,
  RUNS: 5,
  EXTRA_TOOLS: 20,
});
const delays = Object.fromEntries(
  DEFAULT_TARGETS.map((t, i) => [t, STEP_MS * (i + 1)]),
);
const slowest = Math.max(...Object.values(delays));
const sum = Object.values(delays).reduce((a, b) => a + b, 0);

/** The same 12 listings sent by 12 SDK clients at once: the floor on this machine. */
async function idealListingSpan(targets) {
  const gateway = await spawnGateway(targets);
  const clients = await Promise.all(
    DEFAULT_TARGETS.map(async (t) => {
      const client = new Client({ name: 'bench-ideal', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${t}`)),
      );
      return client;
    }),
  );
  await Promise.all(clients.map((c) => c.listTools()));
  const stats = await gateway.stats();
  await Promise.all(clients.map((c) => c.close()));
  await gateway.close();
  return (
    Math.max(...Object.values(stats.listAnsweredAt)) -
    Math.min(...Object.values(stats.listRequestedAt))
  );
}

const ideal = [];
const spans = [];
const listingSpans = [];
const requestSpreads = [];
const clientViews = [];
const targets = Object.fromEntries(
  DEFAULT_TARGETS.map((t) => [
    t,
    { listDelayMs: delays[t], extraTools: EXTRA_TOOLS },
  ]),
);
for (let run = 0; run < RUNS; run++) {
  ideal.push(await idealListingSpan(targets));
  const gateway = await spawnGateway(targets);
  const start = performance.now();
  const broker = spawnBroker({
    HERETEK_GATEWAY_URL: gateway.url,
    HERETEK_BROKER_ROLE: 'director',
  });
  await broker.initialize();
  // Searches until every backend's echo tool is found (throws after 60 s).
  await broker.awaitDiscovery(DEFAULT_TARGETS.map((t) => `${t}_echo`));
  const clientMs = performance.now() - start;
  const stats = await gateway.stats();
  const lastAnswer = Math.max(...Object.values(stats.listAnsweredAt));
  if (Object.keys(stats.listAnsweredAt).length !== DEFAULT_TARGETS.length) {
    throw new Error(
      `only ${Object.keys(stats.listAnsweredAt).length} targets were listed`,
    );
  }
  const listRequests = Object.values(stats.listRequestedAt);
  spans.push(lastAnswer - stats.firstRequestAt);
  // From the first tools/list request to the last answer: the listing itself,
  // without session set-up (initialize) before it.
  listingSpans.push(lastAnswer - Math.min(...listRequests));
  // How far apart the 12 tools/list requests were sent: near 0 when concurrent.
  requestSpreads.push(Math.max(...listRequests) - Math.min(...listRequests));
  clientViews.push(clientMs);
  await broker.close();
  await gateway.close();
}

const p50 = round(percentile(listingSpans, 50), 1);
console.log(
  JSON.stringify(
    {
      bench: 'discovery',
      machine: machine(),
      runs: RUNS,
      backends: DEFAULT_TARGETS.length,
      toolsPerBackend: EXTRA_TOOLS + 1,
      listDelaysMs: delays,
      slowestDelayMs: slowest,
      sumOfDelaysMs: sum,
      // First gateway request (initialize) to the last listing answer.
      discoverySpanMs: {
        p50: round(percentile(spans, 50), 1),
        runs: spans.map((s) => round(s, 1)),
      },
      // First tools/list request to the last listing answer.
      listingSpanMs: {
        p50,
        runs: listingSpans.map((s) => round(s, 1)),
      },
      // The same listings from 12 SDK clients at once, no broker: the floor.
      idealListingSpanMs: {
        p50: round(percentile(ideal, 50), 1),
        runs: ideal.map((s) => round(s, 1)),
      },
      listRequestSpreadMs: {
        p50: round(percentile(requestSpreads, 50), 1),
        max: round(Math.max(...requestSpreads), 1),
      },
      spawnToFirstSearchMs: { p50: round(percentile(clientViews, 50), 1) },
      listingSpanOverSlowest: round(p50 / slowest, 2),
      listingSpanOverIdeal: round(p50 / percentile(ideal, 50), 2),
      listingSpanOverSum: round(p50 / sum, 2),
      concurrent: p50 < (slowest + sum) / 2,
    },
    null,
    2,
  ),
);

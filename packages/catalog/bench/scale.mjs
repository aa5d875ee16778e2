// The catalog at registry scale: BENCH_BACKENDS (1,000) backends x BENCH_TOOLS (100) generated
// tools, built from every backend's listing, one backend re-listed, searched, restored from
// saved parts. Tools are generated deterministically from the 561 real tools of the seed and
// bench/data/livemcpbench: each backend takes a seeded draw of templates and adds words of its
// own domain and product, so targets differ in vocabulary as real servers do.
// Usage, after a build: node --expose-gc bench/scale.mjs
// BENCH_DIST=<dir> measures another build of the package (e.g. the previous release's dist):
// builds without replaceBackends are timed as one constructor call.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import os from 'node:os';

const dist = process.env.BENCH_DIST
  ? pathToFileURL(`${resolve(process.env.BENCH_DIST)}/`)
  : new URL('../dist/', import.meta.url);
const { ToolCatalog, SEED_TOOLS, toolEntryFromMcpTool } = await import(
  new URL('index.js', dist).href
);
const here = dirname(fileURLToPath(import.meta.url));
const backends = Number(process.env.BENCH_BACKENDS ?? 1000);
const perBackend = Number(process.env.BENCH_TOOLS ?? 100);
const searchRuns = Number(process.env.BENCH_SEARCHES ?? 2000);
const gc = globalThis.gc ?? (() => undefined);

function random(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const lines = (file) =>
  readFileSync(join(here, 'data/livemcpbench', file), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

const templates = [
  ...SEED_TOOLS.map((tool) => ({
    name: tool.tool,
    description: tool.description,
    inputSchema: tool.inputSchema,
  })),
  ...lines('tools.jsonl').map((tool) => ({
    name: tool.name.slice(tool.name.indexOf('__') + 2),
    description: tool.description,
    inputSchema: tool.inputSchema,
  })),
];
// Words of the real descriptions, as often as they occur there (a Zipf-like draw).
const words = templates
  .flatMap((tool) => tool.description.toLowerCase().match(/[a-z]{4,}/g) ?? [])
  .filter((word) => word.length < 14);
const domains = [
  'billing',
  'invoices',
  'kubernetes',
  'clusters',
  'tickets',
  'issues',
  'calendar',
  'contacts',
  'spreadsheets',
  'warehouse',
  'shipments',
  'payroll',
  'telemetry',
  'metrics',
  'dashboards',
  'firmware',
  'satellites',
  'genomics',
  'recipes',
  'flights',
  'hotels',
  'weather',
  'music',
  'podcasts',
  'videos',
  'photos',
  'contracts',
  'compliance',
  'audits',
  'inventory',
  'orders',
  'leads',
];

/** The listing of backend `number` (version `version`): `perBackend` tools. */
function listing(number, version = 0) {
  const next = random(number * 7919 + 13);
  const target = `srv-${number}`;
  const domain = domains[Math.floor(next() * domains.length)];
  const product = `${domain.slice(0, 4)}${(number * 2654435761) % 100003}`;
  const backend = { backend: `vendor/${target}`, target, profile: 'core' };
  const seen = new Set();
  const tools = [];
  for (let index = 0; index < perBackend; index += 1) {
    const template = templates[Math.floor(next() * templates.length)];
    let name = template.name;
    if (seen.has(name)) name = `${name}_${index}`;
    seen.add(name);
    const extra = Array.from(
      { length: 3 },
      () => words[Math.floor(next() * words.length)],
    ).join(' ');
    tools.push(
      toolEntryFromMcpTool({
        backend,
        tool: {
          name,
          description: `${template.description} In ${product} ${domain}: ${extra}.${version ? ` Revision ${version}.` : ''}`,
          inputSchema: template.inputSchema,
          annotations: { readOnlyHint: next() < 0.5 },
        },
      }),
    );
  }
  return [target, tools];
}

const queries = [
  'android adb install apk',
  'decompile function',
  'take a screenshot of the window',
  'read file',
  'web search',
  'list devices',
  'create invoice for customer',
  'kubernetes scale deployment',
  ...lines('queries.jsonl').map((query) => query.query),
];

const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const percentile = (values, share) =>
  [...values].sort((a, b) => a - b)[
    Math.min(values.length - 1, Math.floor(share * values.length))
  ];

/** Longest stretch without a turn of the event loop while `work` runs. */
async function longestStall(work) {
  let last = process.hrtime.bigint();
  let longest = 0;
  let running = true;
  const tick = () => {
    const now = process.hrtime.bigint();
    longest = Math.max(longest, Number(now - last) / 1e6);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return longest;
}

const heapBefore = heapMb();
const all = new Map(Array.from({ length: backends }, (_, n) => listing(n)));
const tools = backends * perBackend;
const heapEntries = heapMb();
const report = {
  dist: dist.pathname,
  backends,
  tools,
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
};
const batched = typeof new ToolCatalog().replaceBackends === 'function';

let start = process.hrtime.bigint();
let catalog;
if (batched) {
  catalog = new ToolCatalog();
  catalog.replaceBackends(all);
} else catalog = new ToolCatalog({ tools: [...all.values()].flat() });
report.buildSeconds = seconds(start);
report.buildHow = batched
  ? `replaceBackends(${backends} listings)`
  : 'constructor';
const heapCatalog = heapMb();
report.heapMb = +(heapCatalog - heapEntries).toFixed(1);
report.heapBytesPerTool = Math.round(
  ((heapCatalog - heapEntries) * 1e6) / tools,
);
report.entriesBytesPerTool = Math.round(
  ((heapEntries - heapBefore) * 1e6) / tools,
);

/** Wall and CPU milliseconds of one search per query, `rounds` times over the queries. */
function timeSearches(rounds) {
  const wall = [];
  const cpu = [];
  for (let run = 0; run < rounds * queries.length; run += 1) {
    const query = queries[run % queries.length];
    const cpuStart = process.cpuUsage();
    const wallStart = process.hrtime.bigint();
    catalog.search({ query, limit: 10 });
    wall.push(Number(process.hrtime.bigint() - wallStart) / 1e6);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  return {
    p50: +percentile(wall, 0.5).toFixed(3),
    p99: +percentile(wall, 0.99).toFixed(3),
    cpuP50: +percentile(cpu, 0.5).toFixed(3),
    cpuP99: +percentile(cpu, 0.99).toFixed(3),
  };
}
// The first search of each query after the build (terms not searched before), then the
// steady state.
report.firstSearchMs = timeSearches(1);
report.searchMs = timeSearches(Math.ceil(searchRuns / queries.length));

const [relisted, relisting] = listing(backends >> 1, 1);
start = process.hrtime.bigint();
catalog.replaceBackend(relisted, relisting);
report.relistSeconds = seconds(start);

if (batched) {
  // One backend at a time, as discovery delivers them.
  const stepwise = new ToolCatalog();
  start = process.hrtime.bigint();
  for (const [target, list] of all) stepwise.replaceBackend(target, list);
  report.perBackendSeconds = seconds(start);
  // The same through the async form, with the event loop watched.
  const watched = new ToolCatalog();
  start = process.hrtime.bigint();
  report.asyncLongestStallMs = +(
    await longestStall(() => watched.replaceBackendsAsync(all))
  ).toFixed(1);
  report.asyncBuildSeconds = seconds(start);
  // A restart: every part saved as JSON text, read back and imported in one build.
  const saved = [...all.keys()].map((target) =>
    JSON.stringify(catalog.exportBackend(target)),
  );
  report.savedMb = +(
    saved.reduce((sum, text) => sum + text.length, 0) / 1e6
  ).toFixed(1);
  const restored = new ToolCatalog();
  start = process.hrtime.bigint();
  const parsed = saved.map((text) => JSON.parse(text));
  report.restoreParseSeconds = seconds(start);
  start = process.hrtime.bigint();
  restored.importBackends(parsed);
  report.restoreImportSeconds = seconds(start);
}
console.log(JSON.stringify(report, null, 2));

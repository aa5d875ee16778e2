// The catalog at registry scale: BENCH_BACKENDS (1,000) backends x BENCH_TOOLS (100) generated
// tools, built from every backend's listing, one backend re-listed, searched, saved, and
// restored from the saved catalog in a fresh process (as after a restart), against the cold
// build of the same run. Tools are generated deterministically from the 561 real tools of the seed and
// bench/data/livemcpbench: each backend takes a seeded draw of templates and adds words of its
// own domain and product, so targets differ in vocabulary as real servers do.
// The catalog is saved with saveCatalogStream to a file and restored with restoreCatalogAsync.
// Usage, after a build: node --expose-gc bench/scale.mjs
// BENCH_DIST=<dir> measures another build of the package (e.g. the previous release's dist):
// builds without replaceBackends are timed as one constructor call.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import os from 'node:os';
import { readSavedCatalog, writeSavedCatalog } from './write-saved.mjs';

// The catalog through its package exports, or the build in BENCH_DIST.
const dist = process.env.BENCH_DIST
  ? pathToFileURL(resolve(process.env.BENCH_DIST, 'index.js')).href
  : '@heretek/catalog';
const { ToolCatalog, SEED_TOOLS, toolEntryFromMcpTool } = await import(dist);
// The generated data comes from this package's own build, whichever build is measured.
const { seededRandom } = await import(
  new URL('../dist/index.js', import.meta.url).href
);
const here = dirname(fileURLToPath(import.meta.url));
const backends = Number(process.env.BENCH_BACKENDS ?? 1000);
const perBackend = Number(process.env.BENCH_TOOLS ?? 100);
const searchRuns = Number(process.env.BENCH_SEARCHES ?? 2000);
const gc = globalThis.gc ?? (() => undefined);

const lines = (file) =>
  readFileSync(join(here, '../data/livemcpbench', file), 'utf8')
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
  const next = seededRandom(number * 7919 + 13);
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
/** CPU seconds of this process since `start` (a `process.cpuUsage()`). */
const cpuSeconds = (start) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};
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

/** The digest of the answers of a catalog to every query (compared across processes). */
const answersDigest = (catalog) =>
  createHash('sha256')
    .update(
      JSON.stringify(
        queries.map((query) => catalog.search({ query, limit: 10 })),
      ),
    )
    .digest('hex');

/** Prints a child's result and exits. */
async function answer(result) {
  process.stdout.write(JSON.stringify(result), () => process.exit(0));
  await new Promise(() => undefined);
}

// Restore child (a fresh process, as after a restart): read the saved catalog and restore
// it with the event loop watched (CPU, heap, answers).
if (process.env.BENCH_CHILD === 'restore-catalog') {
  const result = {};
  let start = process.hrtime.bigint();
  const saved = readSavedCatalog(process.env.BENCH_RESTORE_FILE);
  result.readSeconds = seconds(start);
  const restored = new ToolCatalog();
  start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  result.longestStallMs = +(
    await longestStall(() => restored.restoreCatalogAsync(saved))
  ).toFixed(1);
  result.seconds = seconds(start);
  result.cpuSeconds = cpuSeconds(cpu);
  result.tools = restored.size;
  result.heapMb = +heapMb().toFixed(1);
  result.arrayBuffersMb = +(process.memoryUsage().arrayBuffers / 1e6).toFixed(
    1,
  );
  result.answers = answersDigest(restored);
  await answer(result);
}

const heapBefore = heapMb();
const all = new Map(Array.from({ length: backends }, (_, n) => listing(n)));
const tools = backends * perBackend;
// Cold-build child: the same listings built in a fresh process (nothing analyzed before).
if (process.env.BENCH_CHILD === 'cold') {
  const cold = new ToolCatalog();
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  cold.replaceBackends(all);
  await answer({ seconds: seconds(start), cpuSeconds: cpuSeconds(cpu) });
}
const heapEntries = heapMb();
const report = {
  dist,
  backends,
  tools,
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
};
const batched = typeof new ToolCatalog().replaceBackends === 'function';

let start = process.hrtime.bigint();
const buildCpu = process.cpuUsage();
let catalog;
if (batched) {
  catalog = new ToolCatalog();
  catalog.replaceBackends(all);
} else catalog = new ToolCatalog({ tools: [...all.values()].flat() });
report.buildSeconds = seconds(start);
report.buildCpuSeconds = cpuSeconds(buildCpu);
/** Writes the saved catalog of every target to `file`; its length. */
async function saveTo(file) {
  const stream = await catalog.saveCatalogStream(
    new Map([...all.keys()].map((target) => [target, `listing-${target}`])),
  );
  await writeSavedCatalog(stream, file);
  return stream.byteLength;
}
if (process.env.BENCH_SAVE_CATALOG_FILE) {
  // Only save the catalog (to profile its restore: BENCH_CHILD=restore-catalog
  // BENCH_RESTORE_FILE=<file> node --cpu-prof bench/scale.mjs).
  await saveTo(process.env.BENCH_SAVE_CATALOG_FILE);
  console.log(`catalog written to ${process.env.BENCH_SAVE_CATALOG_FILE}`);
  process.exit(0);
}
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
// The steady state (after one warm-up round, which also compiles the search code).
timeSearches(1);
report.searchMs = timeSearches(Math.ceil(searchRuns / queries.length));

const [relisted, relisting] = listing(backends >> 1, 1);
start = process.hrtime.bigint();
catalog.replaceBackend(relisted, relisting);
report.relistSeconds = seconds(start);
// The first search of each query after that change (its terms' contributions computed anew).
report.firstSearchAfterChangeMs = timeSearches(1);

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
}
{
  // A restart: the catalog saved to a file and restored by a fresh process; its answers
  // must equal this catalog's.
  const folder = mkdtempSync(join(os.tmpdir(), 'catalog-scale-'));
  const file = join(folder, 'catalog.bin');
  const child = (mode) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [
          ...(process.env.BENCH_CHILD_FLAGS ?? '').split(' ').filter(Boolean),
          '--expose-gc',
          fileURLToPath(import.meta.url),
        ],
        {
          env: { ...process.env, BENCH_CHILD: mode, BENCH_RESTORE_FILE: file },
          maxBuffer: 1 << 24,
        },
      ).toString(),
    );
  try {
    start = process.hrtime.bigint();
    const saveCpu = process.cpuUsage();
    report.savedCatalogMb = +((await saveTo(file)) / 1e6).toFixed(1);
    report.saveCatalogSeconds = seconds(start);
    report.saveCatalogCpuSeconds = cpuSeconds(saveCpu);
    // Restores and cold builds, each in a fresh process, alternated so that both see the
    // same load; the fastest of each is kept.
    const restores = [];
    const colds = [];
    for (let round = 0; round < 2; round += 1) {
      restores.push(child('restore-catalog'));
      colds.push(child('cold'));
    }
    const fastest = (runs) =>
      runs.reduce((best, run) =>
        run.cpuSeconds < best.cpuSeconds ? run : best,
      );
    const restore = fastest(restores);
    const cold = fastest(colds);
    const expected = answersDigest(catalog);
    report.restoreCatalog = {
      readSeconds: restore.readSeconds,
      seconds: restore.seconds,
      cpuSeconds: restore.cpuSeconds,
      coldBuildSeconds: cold.seconds,
      coldBuildCpuSeconds: cold.cpuSeconds,
      cpuRatioToColdBuild: +(restore.cpuSeconds / cold.cpuSeconds).toFixed(3),
      longestStallMs: restores.map((run) => run.longestStallMs),
      heapMb: restore.heapMb,
      arrayBuffersMb: restore.arrayBuffersMb,
      tools: restore.tools,
      sameAnswers: restores.every((run) => run.answers === expected),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
console.log(JSON.stringify(report, null, 2));

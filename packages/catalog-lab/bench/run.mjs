// Benchmark of @heretek/catalog against a naive wink-bm25-text-search baseline.
// Run with `pnpm bench` (builds first through turbo). Synthetic catalogs are generated from
// the seed tools and the 527 real MCP tools of data/livemcpbench: each template tool is copied onto numbered servers.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import os from 'node:os';
// BENCH_DIST=<dir> times another build of the package (e.g. an earlier commit's dist).
// The catalog through its package exports, or the build in BENCH_DIST.
const dist = process.env.BENCH_DIST
  ? pathToFileURL(resolve(process.env.BENCH_DIST, 'index.js')).href
  : '@heretek/catalog';
const { ToolCatalog, SEED_TOOLS, toolEntryFromMcpTool } = await import(dist);
const { targetFromServerName } = await import(
  new URL('../dist/index.js', import.meta.url).href
);

const require = createRequire(import.meta.url);
const bm25 = require('wink-bm25-text-search');
const nlp = require('wink-nlp-utils');

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, '../data/livemcpbench');
const sizes = (process.env.BENCH_SIZES ?? '34,1000,10000')
  .split(',')
  .map(Number);
const searchRuns = Number(process.env.BENCH_SEARCHES ?? 400);
// Uses recorded for the "full usage log" columns (the catalog's global cap).
const USAGE_LOG = 20_000;

function templates() {
  const list = SEED_TOOLS.map((tool) => ({
    server: tool.target,
    name: tool.tool,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
  }));
  {
    for (const line of readFileSync(
      join(benchDir, 'tools.jsonl'),
      'utf8',
    ).split('\n')) {
      if (!line.trim()) continue;
      const tool = JSON.parse(line);
      list.push({
        server: targetFromServerName(tool.server),
        name: tool.name.slice(tool.name.indexOf('__') + 2),
        description: tool.description,
        inputSchema: tool.inputSchema,
      });
    }
  }
  return list;
}

function queries() {
  const list = [
    'android adb install apk',
    'decompile function',
    'take a screenshot of the window',
    'read file',
    'web search',
    'adb_tap',
    'list devices',
    'run godot project',
  ];
  {
    for (const line of readFileSync(
      join(benchDir, 'queries.jsonl'),
      'utf8',
    ).split('\n'))
      if (line.trim()) list.push(JSON.parse(line).query);
  }
  return list;
}

/** `size` entries: template tools copied onto servers `<server>-<copy>`, 30 tools a server on average. */
function syntheticCatalog(size, all) {
  if (size <= SEED_TOOLS.length)
    return SEED_TOOLS.slice(0, size).map((tool) => ({ ...tool }));
  const entries = [];
  for (let index = 0; entries.length < size; index += 1) {
    const template = all[index % all.length];
    const copy = Math.floor(index / all.length);
    const target = copy === 0 ? template.server : `${template.server}-${copy}`;
    entries.push(
      toolEntryFromMcpTool({
        backend: { backend: target, target, profile: 'core' },
        tool: {
          name: template.name,
          description: template.description,
          inputSchema: template.inputSchema,
          annotations: template.annotations,
        },
      }),
    );
  }
  return entries;
}

function percentile(sorted, p) {
  return sorted[
    Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))
  ];
}

// Best of three rounds: the machine is shared, so one round's tail mostly measures neighbours.
function timeSearches(search, list) {
  const rounds = [
    timeRound(search, list),
    timeRound(search, list),
    timeRound(search, list),
  ];
  return rounds.sort((left, right) => left.p99 - right.p99)[0];
}

function timeRound(search, list) {
  for (let i = 0; i < 600; i += 1) search(list[i % list.length]);
  const times = [];
  const cpuTimes = [];
  for (let i = 0; i < searchRuns; i += 1) {
    const query = list[i % list.length];
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    search(query);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    const used = process.cpuUsage(cpu);
    cpuTimes.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    cpuP99: percentile(cpuTimes, 99),
  };
}

function heapMb() {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1048576;
}

function winkBaseline(entries) {
  const prep = [
    nlp.string.lowerCase,
    nlp.string.tokenize0,
    nlp.tokens.removeWords,
    nlp.tokens.stem,
  ];
  const start = performance.now();
  const engine = bm25();
  engine.defineConfig({
    fldWeights: { name: 3, description: 1, parameters: 1 },
  });
  engine.definePrepTasks(prep);
  entries.forEach((entry, id) => {
    engine.addDoc(
      {
        name: entry.tool.replace(/[_-]/g, ' '),
        description: entry.description,
        parameters: Object.keys(entry.inputSchema.properties ?? {}).join(' '),
      },
      id,
    );
  });
  for (let pad = entries.length; pad < 3; pad += 1)
    engine.addDoc({ name: '', description: '', parameters: '' }, pad);
  engine.consolidate();
  return { engine, buildMs: performance.now() - start };
}

const all = templates();
const everyQuery = queries();
// Task-sized queries are timed for the percentiles; the one very long query of the set (a
// pasted base64 image, truncated by search to 4,096 characters) is timed on its own.
const queryList = everyQuery.filter((query) => query.length <= 2000);
const longQuery =
  everyQuery.find((query) => query.length > 2000) ?? 'x'.repeat(10_000);
const rows = [];
for (const size of sizes) {
  const entries = syntheticCatalog(size, all);
  const heapBefore = heapMb();
  let start = performance.now();
  const catalog = new ToolCatalog({ tools: entries });
  const coldBuildMs = performance.now() - start;
  const heapAfter = heapMb();
  // Rebuild after discovery of one backend (the other tools are unchanged objects).
  const target = entries[entries.length - 1].target;
  const backendTools = entries
    .filter((entry) => entry.target === target)
    .map((entry) => ({ ...entry }));
  start = performance.now();
  catalog.replaceBackend(target, backendTools);
  const replaceMs = performance.now() - start;
  // Full rediscovery: every entry is a new object with the same content.
  const fresh = entries.map((entry) => ({ ...entry }));
  start = performance.now();
  const rebuilt = new ToolCatalog({ tools: fresh });
  const coldAgain = performance.now() - start;
  let rediscoverMs = Infinity;
  for (const byTarget of [fresh]) {
    const groups = new Map();
    for (const entry of byTarget)
      groups.set(entry.target, [
        ...(groups.get(entry.target) ?? []),
        { ...entry },
      ]);
    start = performance.now();
    for (const [name, tools] of groups) rebuilt.replaceBackend(name, tools);
    rediscoverMs = (performance.now() - start) / groups.size;
  }
  const ours = timeSearches((query) => catalog.search({ query }), queryList);
  const longTimes = [];
  for (let i = 0; i < 20; i += 1) {
    const start = performance.now();
    catalog.search({ query: longQuery });
    longTimes.push(performance.now() - start);
  }
  longTimes.sort((a, b) => a - b);
  ours.longQuery = longTimes[10];
  // The same catalog with a full usage log: MAX_USES requests (the task queries in turn),
  // each recorded for a tool in turn, then searches and a rebuild timed again.
  let withUsage;
  if (typeof catalog.recordUse === 'function') {
    const learned = new ToolCatalog({ tools: entries });
    for (let use = 0; use < USAGE_LOG; use += 1)
      learned.recordUse({
        query: queryList[use % queryList.length],
        tool: entries[(use * 7919) % entries.length].name,
      });
    const searches = timeSearches(
      (query) => learned.search({ query }),
      queryList,
    );
    // The first search after a new use recompiles the usage terms that the new use changed.
    const afterUse = [];
    for (let round = 0; round < 5; round += 1) {
      learned.recordUse({ query: queryList[round], tool: entries[round].name });
      const begin = performance.now();
      learned.search({ query: queryList[round + 1] });
      afterUse.push(performance.now() - begin);
    }
    afterUse.sort((left, right) => left - right);
    const backend = entries
      .filter((entry) => entry.target === target)
      .map((entry) => ({ ...entry }));
    start = performance.now();
    learned.replaceBackend(target, backend);
    withUsage = {
      uses: learned.usage().length,
      p50: searches.p50,
      p99: searches.p99,
      cpuP99: searches.cpuP99,
      replaceMs: performance.now() - start,
      afterUseMs: afterUse[2],
    };
  }
  const wink = winkBaseline(entries);
  const winkSearch = timeSearches(
    (query) => wink.engine.search(query, 10),
    queryList,
  );
  rows.push({
    size,
    coldBuildMs,
    replaceMs,
    rediscoverMs,
    coldAgain,
    heapMb: heapAfter - heapBefore,
    ours,
    winkBuildMs: wink.buildMs,
    winkSearch,
    withUsage,
  });
  void rebuilt;
}

const fmt = (value) =>
  value >= 100
    ? value.toFixed(0)
    : value >= 10
      ? value.toFixed(1)
      : value.toFixed(2);
process.stdout.write(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, load average ${os
    .loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}\n`,
);
process.stdout.write(
  `queries: ${queryList.length} (short queries + benchmark tasks up to 2,000 chars), ${searchRuns} timed searches per catalog; long query: ${longQuery.length} chars\n\n`,
);
process.stdout.write(
  '| tools | search p50 ms | search p99 ms (wall / CPU) | long query ms | wink search p50 / p99 ms | rebuild after 1 backend ms | cold build ms | wink build ms | heap MB |\n|---|---|---|---|---|---|---|---|---|\n',
);
for (const row of rows) {
  process.stdout.write(
    `| ${row.size} | ${fmt(row.ours.p50)} | ${fmt(row.ours.p99)} / ${fmt(row.ours.cpuP99)} | ${fmt(row.ours.longQuery)} | ${fmt(row.winkSearch.p50)} / ${fmt(row.winkSearch.p99)} | ${fmt(row.replaceMs)} | ${fmt(row.coldBuildMs)} | ${fmt(row.winkBuildMs)} | ${fmt(row.heapMb)} |\n`,
  );
}
if (rows.some((row) => row.withUsage))
  process.stdout.write(
    `\nWith a full usage log (${USAGE_LOG.toLocaleString('en-US')} recorded uses):\n\n| tools | uses kept | search p50 ms | search p99 ms (wall / CPU) | first search after a new use ms (median of 5) | rebuild after 1 backend ms |\n|---|---|---|---|---|---|\n${rows
      .filter((row) => row.withUsage)
      .map(
        (row) =>
          `| ${row.size} | ${row.withUsage.uses} | ${fmt(row.withUsage.p50)} | ${fmt(row.withUsage.p99)} / ${fmt(row.withUsage.cpuP99)} | ${fmt(row.withUsage.afterUseMs)} | ${fmt(row.withUsage.replaceMs)} |`,
      )
      .join('\n')}\n`,
  );
process.stdout.write(
  '\nratios (wink / ours): ' +
    rows
      .map(
        (row) =>
          `${row.size}: search p99 x${(row.winkSearch.p99 / row.ours.p99).toFixed(1)}, build x${(row.winkBuildMs / row.replaceMs).toFixed(1)}`,
      )
      .join('; ') +
    '\n',
);

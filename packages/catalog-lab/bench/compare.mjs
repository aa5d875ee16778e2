// Search CPU time of this build against another build of the package, interleaved in one
// process so both see the same machine load. Usage, after a build (the baseline's dist must
// sit inside this package so that its dependencies resolve, e.g. under node_modules/):
//   BENCH_BASELINE=<dist dir> [BENCH_SIZES=1000,10000] node bench/compare.mjs
// Catalogs are the LiveMCPBench tools copied onto numbered servers up to each size; each
// round runs the benchmark's tasks (cut to 2,000 characters) once per build, 60 rounds.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const baselineDir = process.env.BENCH_BASELINE;
if (!baselineDir) {
  process.stderr.write(
    'set BENCH_BASELINE to the dist folder of the baseline build\n',
  );
  process.exit(2);
}
const load = async (dir) => ({
  main: await import(
    dir === undefined
      ? '@heretek/catalog'
      : pathToFileURL(resolve(dir, 'index.js'))
  ),
  // The lab's harness where the build has none of its own.
  harness: await (
    dir === undefined
      ? Promise.reject(new Error('no harness'))
      : import(pathToFileURL(resolve(dir, 'eval.js')))
  ).catch(() => import(new URL('../dist/index.js', import.meta.url).href)),
});
const builds = {
  baseline: await load(baselineDir),
  // The catalog through its package exports.
  current: await load(undefined),
};
const sizes = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);

function catalogOf(build, size) {
  const data = build.harness.loadBenchmark({
    directory: new URL('../data/livemcpbench', import.meta.url).pathname,
  });
  const tools = [];
  for (let copy = 0; tools.length < size; copy += 1)
    for (const entry of data.entries) {
      if (tools.length >= size) break;
      const target = copy === 0 ? entry.target : `${entry.target}-${copy}`;
      tools.push({ ...entry, target, name: `${target}_${entry.tool}` });
    }
  return {
    catalog: new build.main.ToolCatalog({ tools }),
    queries: data.queries.map((query) => query.query.slice(0, 2000)),
  };
}

function cpuPerSearch({ catalog, queries }) {
  const start = process.cpuUsage();
  for (const query of queries) catalog.search({ query });
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / queries.length;
}

const median = (values) =>
  [...values].sort((left, right) => left - right)[values.length >> 1];
console.log(`Node ${process.version}, baseline ${resolve(baselineDir)}`);
for (const size of sizes) {
  const baseline = catalogOf(builds.baseline, size);
  const current = catalogOf(builds.current, size);
  const times = { baseline: [], current: [] };
  for (let round = 0; round < 30; round += 1) {
    times.baseline.push(cpuPerSearch(baseline));
    times.current.push(cpuPerSearch(current));
    times.current.push(cpuPerSearch(current));
    times.baseline.push(cpuPerSearch(baseline));
  }
  const before = median(times.baseline);
  const after = median(times.current);
  console.log(
    `${size} tools: search CPU ms per query, median of 60 rounds: baseline ${before.toFixed(3)}, current ${after.toFixed(3)}, ratio current / baseline ${(after / before).toFixed(2)}`,
  );
}

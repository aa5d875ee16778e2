// Cross-validation of the search tuning on a benchmark directory (default: LiveMCPBench).
// Usage, after a build: node bench/crossval.mjs [--data <dir>] [--folds 5] [--seed 1]
// For each fold, the tuning with the best mean of nDCG@10 and R@5 on the other folds is
// chosen from the grid below and scored on the held-out fold; the held-out figures are
// averaged over folds (each query is held out exactly once). The default tuning is scored
// on the same folds for comparison. Nothing here ships in the package's search path.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolCatalog } from '../dist/index.js';
import {
  DEFAULT_TUNING,
  evaluateRankings,
  loadBenchmark,
} from '../dist/eval.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const directory = resolve(option('data', resolve(here, 'data/livemcpbench')));
if (!existsSync(resolve(directory, 'queries.jsonl'))) {
  console.error(`No queries.jsonl in ${directory}`);
  process.exit(2);
}
const folds = Number(option('folds', 5));
const seed = Number(option('seed', 1));
const data = loadBenchmark({ directory });

// The grid: one axis per knob around the defaults (general knobs only).
const axes = option('only', '')
  ? {}
  : {
      siblingWeight: [0.2, 0.3, 0.4],
      nameCoverageWeight: [0.3, 0.5, 0.7],
      k1: [0.9, 1.2, 1.5],
      groupIdfWeight: [0.5, 1],
    };
for (const extra of (option('axes', '') || '').split(';').filter(Boolean)) {
  const [key, values] = extra.split('=');
  axes[key] = values.split(',').map(Number);
}

function* grid(keys, base = {}) {
  if (keys.length === 0) {
    yield base;
    return;
  }
  const [key, ...rest] = keys;
  for (const value of axes[key]) yield* grid(rest, { ...base, [key]: value });
}

// Deterministic shuffle (mulberry32) of query positions into folds.
function shuffled(count) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
  const order = Array.from({ length: count }, (_, index) => index);
  for (let index = count - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [order[other], order[index]];
  }
  return order;
}

const foldOf = new Int32Array(data.queries.length);
shuffled(data.queries.length).forEach((position, rank) => {
  foldOf[position] = rank % folds;
});

// Axis names like `fields.name.weight` set one field's knob.
function expand(flat) {
  const tuning = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split('.');
    if (parts[0] === 'fields' && parts.length === 3) {
      tuning.fields ??= {};
      tuning.fields[parts[1]] ??= { ...DEFAULT_TUNING.fields[parts[1]] };
      tuning.fields[parts[1]][parts[2]] = value;
    } else tuning[key] = value;
  }
  return tuning;
}

function rankingsFor(flat) {
  const tuning = expand(flat);
  const catalog = new ToolCatalog({ tools: data.entries, tuning });
  return data.queries.map((query) =>
    catalog
      .search({ query: query.query, limit: 10 })
      .hits.map((hit) => data.benchmarkName.get(hit.name) ?? hit.name),
  );
}

function score(rankings, positions) {
  const { metrics } = evaluateRankings({
    queries: positions.map((p) => data.queries[p]),
    rankings: positions.map((p) => rankings[p]),
  });
  return metrics;
}
const objective = (metrics) => (metrics['nDCG@10'] + metrics['R@5']) / 2;

const configurations = [...grid(Object.keys(axes))];
const all = data.queries.map((_, index) => index);
const runs = configurations.map((tuning) => ({
  tuning,
  rankings: rankingsFor(tuning),
}));
const defaults = rankingsFor({});

const heldOut = { chosen: [], defaults: [] };
for (let fold = 0; fold < folds; fold += 1) {
  const train = all.filter((p) => foldOf[p] !== fold);
  const test = all.filter((p) => foldOf[p] === fold);
  let best;
  for (const run of runs) {
    const value = objective(score(run.rankings, train));
    if (!best || value > best.value) best = { run, value };
  }
  heldOut.chosen.push({
    test,
    rankings: best.run.rankings,
    tuning: best.run.tuning,
  });
  heldOut.defaults.push({ test, rankings: defaults });
  console.error(`fold ${fold + 1}: chose ${JSON.stringify(best.run.tuning)}`);
}

function pooled(list) {
  // Every query is held out once: pool the held-out rankings and score them together.
  const rankings = new Array(data.queries.length);
  for (const { test, rankings: ranked } of list)
    for (const p of test) rankings[p] = ranked[p];
  return score(rankings, all);
}
function perFold(list) {
  return list.map(({ test, rankings }) => score(rankings, test));
}
const format = (metrics) =>
  `nDCG@10 ${metrics['nDCG@10'].toFixed(3)}  R@5 ${metrics['R@5'].toFixed(3)}  R@10 ${metrics['R@10'].toFixed(3)}  Hit@1 ${metrics['Hit@1'].toFixed(3)}`;

const full = score(defaults, all);
let bestFull;
for (const run of runs) {
  const metrics = score(run.rankings, all);
  if (!bestFull || objective(metrics) > objective(bestFull.metrics))
    bestFull = { run, metrics };
}
process.stdout.write(
  `${data.queries.length} queries, ${folds} folds (seed ${seed}), ${configurations.length} configurations\n`,
);
process.stdout.write(`default tuning, full set:        ${format(full)}\n`);
process.stdout.write(
  `default tuning, per fold:        ${perFold(heldOut.defaults)
    .map((m) => `${m['nDCG@10'].toFixed(3)}/${m['R@5'].toFixed(3)}`)
    .join('  ')}\n`,
);
process.stdout.write(
  `grid best on full set:           ${format(bestFull.metrics)} ${JSON.stringify(bestFull.run.tuning)}\n`,
);
process.stdout.write(
  `cross-validated (held-out):      ${format(pooled(heldOut.chosen))}\n`,
);
process.stdout.write(
  `cross-validated per fold:        ${perFold(heldOut.chosen)
    .map((m) => `${m['nDCG@10'].toFixed(3)}/${m['R@5'].toFixed(3)}`)
    .join('  ')}\n`,
);
process.stdout.write(
  `(DEFAULT_TUNING k1 ${DEFAULT_TUNING.k1}, sibling ${DEFAULT_TUNING.siblingWeight}, nameCoverage ${DEFAULT_TUNING.nameCoverageWeight})\n`,
);

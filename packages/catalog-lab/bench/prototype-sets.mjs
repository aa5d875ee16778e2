// What the prototype scripts (coordination.mjs, segments.mjs) share: the two
// benchmark sets, loaded from the built package, and one line of figures per
// set for a ranking.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  evaluateRankings,
  loadBenchmark,
  queryObjectives,
} from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));

/** LiveMCPBench and MetaTool, as `loadBenchmark` reads them. */
export const sets = {
  live: loadBenchmark({
    directory: resolve(here, '../data/livemcpbench'),
  }),
  metatool: loadBenchmark({
    directory: resolve(here, '../data/metatool'),
  }),
};

/** The mean of an array of numbers (0 for none). */
export const mean = (v) => v.reduce((s, x) => s + x, 0) / Math.max(1, v.length);

/** `<set> nDCG@10/R@5 obj <mean objective>` of one ranking per query. */
export function figuresLine(name, data, rankings) {
  const m = evaluateRankings({ queries: data.queries, rankings }).metrics;
  const objective = mean(queryObjectives({ queries: data.queries, rankings }));
  return `${name} ${m['nDCG@10'].toFixed(3)}/${m['R@5'].toFixed(3)} obj ${objective.toFixed(3)}`;
}

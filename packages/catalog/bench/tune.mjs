// Selection of the search defaults by leave-one-set-out over the benchmark sets in
// bench/data (or --data <dir>, repeated). Usage, after a build:
//   node bench/tune.mjs [--data <dir> ...] [--folds 5] [--seed 1] [--json <file>]
// Greedy forward selection from the plain single-bag model: in each round, every technique
// not yet kept is tried with each of its variants on top of the current tuning. For each
// ordered pair of sets, the variant (or "off") best on the training set is scored on the
// other. A technique qualifies only if the held-out side of every split beats the current
// tuning and its best variant improves every set on its own; the qualifying technique with
// the largest macro-average gain is kept, and the rounds go on until none qualifies. The
// objective of a query is the mean of its nDCG@10 and Recall@5. Then each kept technique
// is cross-validated within each set (its variants and "off" around the chosen defaults),
// and each dropped technique is reported on top of the chosen defaults.
import { writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolCatalog } from '../dist/index.js';
import {
  crossValidate,
  evaluateRankings,
  foldAssignment,
  leaveOneSetOut,
  loadBenchmark,
  queryObjectives,
  rankWithCatalog,
  rankWithPlainBm25,
} from '../dist/eval.js';
import { BASE, TECHNIQUES, merge } from './techniques.mjs';
import { wordnetSynonyms } from './wordnet.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const values = (name) =>
  args.flatMap((arg, at) => (arg === `--${name}` ? [args[at + 1]] : []));
const option = (name, fallback) => values(name)[0] ?? fallback;
const directories = values('data').length
  ? values('data').map((directory) => resolve(directory))
  : ['livemcpbench', 'metatool'].map((set) => resolve(here, 'data', set));
const folds = Number(option('folds', 5));
const seed = Number(option('seed', 1));

const sets = directories.map((directory) => {
  const data = loadBenchmark({ directory });
  return {
    name: basename(directory),
    data,
    folds: foldAssignment({ count: data.queries.length, folds, seed }),
  };
});
const setNames = sets.map((set) => set.name);
const byName = new Map(sets.map((set) => [set.name, set]));

const cache = new Map();
function perQuery(tuning, setName) {
  const key = `${setName}\u0000${JSON.stringify(tuning)}`;
  let result = cache.get(key);
  if (!result) {
    const { data } = byName.get(setName);
    const catalog = new ToolCatalog({
      tools: data.entries,
      tuning,
      ...(tuning.synonymWeight > 0 ? { synonyms: wordnetSynonyms } : {}),
    });
    const rankings = rankWithCatalog({ data, limit: 10, catalog });
    const { metrics } = evaluateRankings({ queries: data.queries, rankings });
    result = {
      rankings,
      objectives: queryObjectives({ queries: data.queries, rankings }),
      metrics,
    };
    cache.set(key, result);
  }
  return result;
}
const same = (left, right, setName) => {
  const a = perQuery(left, setName).rankings;
  const b = perQuery(right, setName).rankings;
  return a.every(
    (ranking, index) => ranking.join('\n') === b[index].join('\n'),
  );
};
const meanOf = (array) =>
  array.reduce((sum, value) => sum + value, 0) / Math.max(1, array.length);
const score = (tuning, setName) => meanOf(perQuery(tuning, setName).objectives);
const macro = (tuning) => meanOf(setNames.map((set) => score(tuning, set)));
const figures = (tuning, setName) => {
  const { metrics } = perQuery(tuning, setName);
  return `${metrics['nDCG@10'].toFixed(3)} / ${metrics['R@5'].toFixed(3)}`;
};
const f3 = (value) => value.toFixed(3);

const lines = [];
const log = (line = '') => {
  lines.push(line);
  console.log(line);
};

const plainFigures = new Map();
for (const set of sets) {
  const { metrics } = evaluateRankings({
    queries: set.data.queries,
    rankings: rankWithPlainBm25({ data: set.data, limit: 10 }),
  });
  plainFigures.set(
    set.name,
    `${f3(metrics['nDCG@10'])} / ${f3(metrics['R@5'])}`,
  );
  log(
    `plain BM25 reference on ${set.name}: nDCG@10 / R@5 ${plainFigures.get(set.name)}`,
  );
}

let current = BASE;
const kept = [];
const remaining = [...TECHNIQUES];
const record = [];
const EPSILON = 0.001;
const FLAT = 0.003;
log(
  `\nbase (plain single bag, stemmed): ${setNames.map((set) => `${set} ${figures(current, set)}`).join(', ')}`,
);
for (let round = 1; remaining.length > 0; round += 1) {
  log(`\n## round ${round}\n`);
  log(
    `| technique | best variant | ${setNames.map((set) => `${set} nDCG@10 / R@5`).join(' | ')} | ${setNames.map((set) => `held-out on ${set} (objective, current ${f3(score(current, set))})`).join(' | ')} | qualifies |`,
  );
  log(
    `|---|---|${setNames.map(() => '---').join('|')}|${setNames.map(() => '---').join('|')}|---|`,
  );
  let winner;
  for (const technique of remaining) {
    const candidates = [
      current,
      ...technique.variants.map((variant) => merge(current, variant)),
    ];
    // A technique that cannot act on a set (every variant ranks it exactly as the current
    // tuning does, e.g. per-server evidence where each server has one tool, or parameter
    // weights on tools without parameters) is judged on the sets where it acts: by
    // leave-one-set-out among those when there are two or more, else by cross-validation
    // within the set.
    const active = setNames.filter((set) =>
      candidates.slice(1).some((tuning) => !same(tuning, current, set)),
    );
    const splits =
      active.length >= 2
        ? leaveOneSetOut({ candidates, sets: active, score })
        : active.map((set) => ({
            train: `${set} (other folds)`,
            test: set,
            chosen: undefined,
            heldOut: crossValidate({
              candidates,
              objectives: (tuning) => perQuery(tuning, set).objectives,
              folds: byName.get(set).folds,
            }).heldOut,
          }));
    const heldOutGain =
      active.length > 0 &&
      splits.every(
        (split) => split.heldOut > score(current, split.test) + EPSILON,
      );
    // Among the variants that improve every set it acts on, the mildest one within
    // FLAT of the best macro average: differences that small are noise on these sets.
    const improving = technique.variants
      .map((variant, index) => ({ variant, tuning: candidates[index + 1] }))
      .filter(({ tuning }) =>
        active.every(
          (set) => score(tuning, set) > score(current, set) + EPSILON,
        ),
      );
    const top = Math.max(...improving.map(({ tuning }) => macro(tuning)));
    const best = improving.find(({ tuning }) => macro(tuning) >= top - FLAT);
    const shown =
      best ??
      technique.variants
        .map((variant, index) => ({ variant, tuning: candidates[index + 1] }))
        .sort((left, right) => macro(right.tuning) - macro(left.tuning))[0];
    const qualifies = heldOutGain && best !== undefined;
    log(
      `| ${technique.name} | \`${JSON.stringify(shown.variant)}\` | ${setNames.map((set) => figures(shown.tuning, set)).join(' | ')} | ${setNames
        .map((set) => {
          const split = splits.find((candidate) => candidate.test === set);
          if (!split) return 'inert';
          if (split.chosen === undefined)
            return `${f3(split.heldOut)} (${folds}-fold within the set)`;
          return `${f3(split.heldOut)} (chose ${candidates.indexOf(split.chosen) === 0 ? 'off' : JSON.stringify(technique.variants[candidates.indexOf(split.chosen) - 1])})`;
        })
        .join(' | ')} | ${qualifies ? 'yes' : 'no'} |`,
    );
    record.push({
      round,
      technique: technique.name,
      variant: shown.variant,
      qualifies,
      perSet: Object.fromEntries(
        setNames.map((set) => [set, perQuery(shown.tuning, set).metrics]),
      ),
      splits: splits.map((split) => ({
        train: split.train,
        test: split.test,
        heldOut: split.heldOut,
      })),
    });
    if (
      qualifies &&
      (!winner || macro(best.tuning) > macro(winner.best.tuning))
    )
      winner = { technique, best };
  }
  if (!winner) {
    log('\nno technique qualifies: selection ends.');
    break;
  }
  current = winner.best.tuning;
  kept.push({ name: winner.technique.name, variant: winner.best.variant });
  remaining.splice(remaining.indexOf(winner.technique), 1);
  log(
    `\nkept: ${winner.technique.name} ${JSON.stringify(winner.best.variant)} -> ${setNames.map((set) => `${set} ${figures(current, set)}`).join(', ')}`,
  );
}

log('\n## chosen tuning\n');
log('```json');
log(JSON.stringify(current, null, 2));
log('```');
log(
  `\n${setNames.map((set) => `${set}: nDCG@10 / R@5 ${figures(current, set)}`).join('; ')}`,
);

log(`\n## cross-validation within each set (${folds} folds, seed ${seed})\n`);
log(
  `| technique | ${setNames.map((set) => `${set} full set / held-out objective`).join(' | ')} |`,
);
log(`|---|${setNames.map(() => '---').join('|')}|`);
for (const { name } of kept) {
  const technique = TECHNIQUES.find((candidate) => candidate.name === name);
  const off = merge(current, technique.off);
  const candidates = [
    current,
    off,
    ...technique.variants.map((variant) => merge(current, variant)),
  ];
  log(
    `| ${name} | ${setNames
      .map((set) => {
        const { heldOut } = crossValidate({
          candidates,
          objectives: (tuning) => perQuery(tuning, set).objectives,
          folds: byName.get(set).folds,
        });
        return `${f3(score(current, set))} / ${f3(heldOut)} (off: ${f3(score(off, set))})`;
      })
      .join(' | ')} |`,
  );
}

log('\n## dropped techniques on top of the chosen tuning\n');
log(
  `| technique | best variant | ${setNames.map((set) => `${set} nDCG@10 / R@5`).join(' | ')} | ${setNames.map((set) => `held-out on ${set}`).join(' | ')} |`,
);
log(
  `|---|---|${setNames.map(() => '---').join('|')}|${setNames.map(() => '---').join('|')}|`,
);
log(
  `| (chosen) | | ${setNames.map((set) => figures(current, set)).join(' | ')} | ${setNames.map((set) => f3(score(current, set))).join(' | ')} |`,
);
for (const technique of remaining) {
  const candidates = [
    current,
    ...technique.variants.map((variant) => merge(current, variant)),
  ];
  const active = setNames.filter((set) =>
    candidates.slice(1).some((tuning) => !same(tuning, current, set)),
  );
  const splits =
    active.length >= 2
      ? leaveOneSetOut({ candidates, sets: active, score })
      : active.map((set) => ({
          test: set,
          heldOut: crossValidate({
            candidates,
            objectives: (tuning) => perQuery(tuning, set).objectives,
            folds: byName.get(set).folds,
          }).heldOut,
        }));
  const best = candidates
    .slice(1)
    .sort((left, right) => macro(right) - macro(left))[0];
  const variant = technique.variants[candidates.indexOf(best) - 1];
  log(
    `| ${technique.name} | \`${JSON.stringify(variant)}\` | ${setNames.map((set) => figures(best, set)).join(' | ')} | ${setNames
      .map((set) => {
        const split = splits.find((candidate) => candidate.test === set);
        return split
          ? f3(split.heldOut) + (active.length < 2 ? ` (${folds}-fold)` : '')
          : 'inert';
      })
      .join(' | ')} |`,
  );
}

// The whole procedure, one set at a time: greedy selection on one set alone (a technique is
// kept when its best variant improves the set and wins 5-fold cross-validation within it),
// then scored on each other set next to the plain BM25 reference.
log('\n## whole selection tuned on one set, scored on the others\n');
log(
  `| tuned on | techniques kept | ${setNames.map((set) => `${set} nDCG@10 / R@5 (plain BM25)`).join(' | ')} |`,
);
log(`|---|---|${setNames.map(() => '---').join('|')}|`);
for (const train of setNames) {
  let tuning = BASE;
  const chosen = [];
  const left = [...TECHNIQUES];
  for (;;) {
    let pick;
    for (const technique of left) {
      const candidates = [
        tuning,
        ...technique.variants.map((variant) => merge(tuning, variant)),
      ];
      const { heldOut } = crossValidate({
        candidates,
        objectives: (candidate) => perQuery(candidate, train).objectives,
        folds: byName.get(train).folds,
      });
      if (heldOut <= score(tuning, train) + EPSILON) continue;
      const best = candidates
        .slice(1)
        .sort((l, r) => score(r, train) - score(l, train))[0];
      if (score(best, train) <= score(tuning, train) + EPSILON) continue;
      if (!pick || score(best, train) > score(pick.best, train))
        pick = { technique, best };
    }
    if (!pick) break;
    tuning = pick.best;
    chosen.push(pick.technique.name);
    left.splice(left.indexOf(pick.technique), 1);
  }
  log(
    `| ${train} | ${chosen.join(', ')} | ${setNames.map((set) => `${figures(tuning, set)} (${plainFigures.get(set)})${set === train ? ' (tuned here)' : ''}`).join(' | ')} |`,
  );
}

const json = option('json', '');
if (json)
  writeFileSync(
    resolve(json),
    `${JSON.stringify({ chosen: current, kept, record }, null, 2)}\n`,
  );

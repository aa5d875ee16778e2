// Selection of the search defaults by leave-one-set-out over the development sets in
// data (or --data <dir>, repeated). Usage, after a build:
//   node bench/select.mjs [--data <dir> ...] [--out <record.md>] [--json <file>]
// Writes the record (markdown) to --out, bench/selection-record.md by default; format it
// with Prettier from the repository root. Target-level idf (`groupIdfWeight`) was measured
// by this script at commit f5550e8 and dropped; it is deleted from the search path since.
//
// The score of a set is its nDCG@10. The base is the catalog's plain single bag (its
// tokenizer and search rules) with every refinement off. Greedy forward selection: in each
// round every refinement not yet kept is tried with each of its variants on top of the
// current tuning, and judged by `leaveOneSetOut` of @heretek/catalog-lab: a variant passes
// on some sets when it raises their macro average by more than 0.001 and lowers none of them
// by more than 0.005 against the tuning without it (of the passing variants, listed mildest
// first, the mildest within 0.003 of the best macro average: smaller differences are noise
// on these sets); the refinement qualifies when a variant passes on all the sets and, for
// every set held out, the variant chosen on the other sets lowers the held-out set by no
// more than 0.005. The qualifying refinement with the largest
// macro gain is kept; the rounds stop when none qualifies. Then each kept refinement is
// checked again against the final tuning without it, by the same rule.
//
// Then switches: a refinement turned on for a catalog by one statistic of the catalog's own
// texts (share of tools with parameters, description length, tools per target, share of
// name words found in the tool's description, cohesion of targets) on one side of a
// threshold. The statistic,
// side, threshold (midpoints between the training sets) and variant are chosen on the other
// sets by the same rule and scored on the held-out set. And the switch a usage log could
// drive: each set's variant chosen on its own labelled queries (5-fold cross-validation
// within the set: the variant, or off, best on four fifths, scored on the fifth).
import { writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolCatalog } from '@heretek/catalog';
import {
  DEFAULT_TUNING,
  chooseRefinement,
  evaluateRankings,
  leaveOneSetOut,
  loadBenchmark,
  rankWithCatalog,
  rankWithPlainBm25,
  crossValidate,
  foldAssignment,
} from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const values = (name) =>
  args.flatMap((arg, at) => (arg === `--${name}` ? [args[at + 1]] : []));
const directories = values('data').length
  ? values('data').map((directory) => resolve(directory))
  : ['livemcpbench', 'metatool', 'gorilla-hf', 'seal-tools'].map((set) =>
      resolve(here, '../data', set),
    );
const out = resolve(values('out')[0] ?? resolve(here, 'selection-record.md'));
const json = values('json')[0];
const TOLERANCE = 0.005;
const MINIMUM_GAIN = 0.001;
const SLACK = 0.003;
const FOLDS = 5;

/** One knob (or bag field, as "bag.<field>") of the tuning set to `value`. */
function knob(key, value) {
  return key.startsWith('bag.')
    ? { bag: { [key.slice(4)]: value } }
    : { [key]: value };
}
function merge(base, overrides) {
  return { ...base, ...overrides, bag: { ...base.bag, ...overrides.bag } };
}

/** The base: the plain single bag (every field weighing 1, exact names out), no refinement. */
const BASE = merge(DEFAULT_TUNING, {
  bag: Object.fromEntries(
    Object.keys(DEFAULT_TUNING.bag).map((field) => [
      field,
      field === 'identifier' ? 0 : 1,
    ]),
  ),
  k1: 1.2,
  b: 0.75,
  nameCoverageWeight: 0,
  nameCoverageCap: 0,
});

/** A one-knob refinement: off at the base's value, variants mildest first. */
const single = (name, key, values) => ({
  name,
  off: knob(key, key.startsWith('bag.') ? BASE.bag[key.slice(4)] : BASE[key]),
  variants: values.map((value) => knob(key, value)),
});
/** Each refinement: its variants (mildest first) and the override that turns it off. */
const TECHNIQUES = [
  {
    name: 'name coverage',
    off: { nameCoverageWeight: 0, nameCoverageCap: 0 },
    variants: [0.2, 0.3, 0.5, 0.7].flatMap((nameCoverageWeight) =>
      [0.25, 0.5, 1, 0].map((nameCoverageCap) => ({
        nameCoverageWeight,
        nameCoverageCap,
      })),
    ),
  },
  single('bag weight of tool-name words', 'bag.name', [1.5, 2, 3]),
  single('bag weight of target words', 'bag.target', [0.5, 1.5, 2]),
  single('bag weight of the description', 'bag.description', [0.5, 1.5, 2]),
  single('bag weight of parameter names', 'bag.parameters', [0.5, 1.5, 2]),
  single(
    'bag weight of parameter descriptions and enum values',
    'bag.parameterText',
    [0.25, 0.5, 1.5, 2],
  ),
  single('exact names in the bag', 'bag.identifier', [1]),
  single('BM25 k1', 'k1', [0.6, 0.9, 1.5, 2]),
  single('BM25 b', 'b', [0.3, 0.5, 0.9]),
];

const sets = directories.map((directory) => ({
  name: basename(directory),
  data: loadBenchmark({ directory }),
}));
const setNames = sets.map((set) => set.name);
const byName = new Map(sets.map((set) => [set.name, set]));

const words = (text) =>
  String(text ?? '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .match(/[a-z0-9]+|[^\x00-\x7f\s]/g) ?? [];
const propertiesOf = (schema) =>
  schema && typeof schema === 'object' && schema.properties
    ? Object.keys(schema.properties)
    : [];

const mean = (list) =>
  list.reduce((sum, value) => sum + value, 0) / Math.max(1, list.length);

/** What the broker sees of a catalog: statistics of the tools' own texts. */
function statisticsOf(data) {
  const tools = data.tools;
  const servers = new Set(tools.map((tool) => tool.server));
  // Cohesion of targets: for each word of the names and descriptions found in two tools or
  // more, 1 - (targets - 1) / (tools - 1): 1 when all its tools are in one target, 0 when
  // each is in a different one; averaged over those words.
  const toolsOf = new Map();
  const targetsOf = new Map();
  let withParameters = 0;
  let descriptionWords = 0;
  let nameWords = 0;
  let nameWordsInDescription = 0;
  for (const tool of tools) {
    if (propertiesOf(tool.inputSchema).length > 0) withParameters += 1;
    const description = words(tool.description);
    descriptionWords += description.length;
    const inDescription = new Set(description);
    const bare = tool.name.slice(tool.name.indexOf('__') + 2);
    const name = words(bare.replace(/[_\-.]/g, ' '));
    for (const word of name) {
      nameWords += 1;
      if (inDescription.has(word)) nameWordsInDescription += 1;
    }
    for (const word of new Set([...name, ...description])) {
      toolsOf.set(word, (toolsOf.get(word) ?? 0) + 1);
      if (!targetsOf.has(word)) targetsOf.set(word, new Set());
      targetsOf.get(word).add(tool.server);
    }
  }
  const cohesion = [...toolsOf]
    .filter(([, count]) => count >= 2)
    .map(([word, count]) => 1 - (targetsOf.get(word).size - 1) / (count - 1));
  return {
    'share of tools with parameters': withParameters / tools.length,
    'description words per tool': descriptionWords / tools.length,
    'tools per target': tools.length / servers.size,
    'share of name words in the description':
      nameWordsInDescription / Math.max(1, nameWords),
    'cohesion of targets': mean(cohesion),
  };
}
const statistics = new Map(
  sets.map((set) => [set.name, statisticsOf(set.data)]),
);

const cache = new Map();
function resultOf(tuning, setName) {
  const key = `${setName}\u0000${JSON.stringify(tuning)}`;
  let result = cache.get(key);
  if (!result) {
    const { data } = byName.get(setName);
    const catalog = new ToolCatalog({ tools: data.entries, tuning });
    const rankings = rankWithCatalog({ data, limit: 10, catalog });
    result = {
      rankings,
      metrics: evaluateRankings({ queries: data.queries, rankings }).metrics,
    };
    cache.set(key, result);
  }
  return result;
}
const metricsOf = (tuning, setName) => resultOf(tuning, setName).metrics;
/** nDCG@10 of each query of a set. */
function perQuery(tuning, setName) {
  const { data } = byName.get(setName);
  const { rankings } = resultOf(tuning, setName);
  return Float64Array.from(
    data.queries,
    (query, index) =>
      evaluateRankings({ queries: [query], rankings: [rankings[index]] })
        .metrics['nDCG@10'],
  );
}
const score = (tuning, setName) => metricsOf(tuning, setName)['nDCG@10'];
const macro = (tuning) => mean(setNames.map((set) => score(tuning, set)));
const f3 = (value) => value.toFixed(3);
const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(3)}`;
const figures = (tuning, set) => {
  const metrics = metricsOf(tuning, set);
  return `${f3(metrics['nDCG@10'])} / ${f3(metrics['R@5'])}`;
};
const rule = { tolerance: TOLERANCE, minimumGain: MINIMUM_GAIN, slack: SLACK };
const describeVariant = (variant) =>
  variant === undefined ? 'off' : `\`${JSON.stringify(variant)}\``;

const lines = [];
const log = (line = '') => {
  lines.push(line);
  process.stderr.write(`${line}\n`);
};
const table = (header, rows) => {
  log(`| ${header.join(' | ')} |`);
  log(`|${header.map(() => '---').join('|')}|`);
  for (const row of rows) log(`| ${row.join(' | ')} |`);
};

log('# Selection of the search defaults over the development sets');
log();
log(
  `Written by \`node bench/select.mjs\` (after a build). Score of a set: nDCG@10. Rule: a variant passes on some sets when it raises their macro average by more than ${MINIMUM_GAIN} and lowers none by more than ${TOLERANCE} against the tuning without it (the mildest passing variant within ${SLACK} of the best macro average); a refinement qualifies when a variant passes on all ${setNames.length} sets and, with each set held out, the variant chosen on the others lowers the held-out set by no more than ${TOLERANCE}.`,
);
log();
log('## The sets, as the catalog sees them');
log();
const statisticNames = Object.keys(statistics.get(setNames[0]));
table(
  ['set', 'tools', 'queries', ...statisticNames, 'plain BM25 nDCG@10 / R@5'],
  sets.map((set) => {
    const plain = evaluateRankings({
      queries: set.data.queries,
      rankings: rankWithPlainBm25({ data: set.data, limit: 10 }),
    }).metrics;
    set.plain = plain;
    return [
      set.name,
      set.data.tools.length,
      set.data.queries.length,
      ...statisticNames.map((name) => {
        const value = statistics.get(set.name)[name];
        return value >= 10 ? value.toFixed(1) : value.toFixed(2);
      }),
      `${f3(plain['nDCG@10'])} / ${f3(plain['R@5'])}`,
    ];
  }),
);
log();
log(
  `Base (plain single bag, the catalog's tokenizer and search rules): ${setNames.map((set) => `${set} ${figures(BASE, set)}`).join(', ')}.`,
);

function judge(current, technique) {
  const candidates = [
    current,
    ...technique.variants.map((variant) => merge(current, variant)),
  ];
  const result = leaveOneSetOut({
    candidates,
    sets: setNames,
    score,
    ...rule,
  });
  const variantOf = (candidate) =>
    candidate === undefined
      ? undefined
      : technique.variants[candidates.indexOf(candidate) - 1];
  // Shown: the chosen variant, or else the one with the best macro average.
  const shown =
    result.chosen ??
    candidates.slice(1).sort((left, right) => macro(right) - macro(left))[0];
  return { result, candidates, variantOf, shown };
}

let current = BASE;
const kept = [];
const remaining = [...TECHNIQUES];
for (let round = 1; remaining.length > 0; round += 1) {
  log();
  log(`## Round ${round}`);
  log();
  log(
    `Current: ${setNames.map((set) => `${set} ${f3(score(current, set))}`).join(', ')} (macro ${f3(macro(current))}). Each cell: nDCG@10 change against the current tuning; held out: the variant chosen on the other sets and its change on the held-out set.`,
  );
  log();
  let winner;
  const rows = [];
  for (const technique of remaining) {
    const { result, variantOf, shown } = judge(current, technique);
    rows.push([
      technique.name,
      describeVariant(variantOf(shown)),
      ...setNames.map((set) => signed(score(shown, set) - score(current, set))),
      signed(macro(shown) - macro(current)),
      ...result.splits.map(
        (split) =>
          `${signed(split.change)} (${describeVariant(variantOf(split.chosen))})`,
      ),
      result.qualifies ? 'yes' : 'no',
    ]);
    if (
      result.qualifies &&
      (!winner || macro(result.chosen) > macro(winner.tuning))
    )
      winner = {
        technique,
        tuning: result.chosen,
        variant: variantOf(result.chosen),
      };
  }
  table(
    [
      'refinement',
      'variant',
      ...setNames,
      'macro',
      ...setNames.map((set) => `held out: ${set}`),
      'qualifies',
    ],
    rows,
  );
  log();
  if (!winner) {
    log('No refinement qualifies: the selection ends.');
    break;
  }
  current = winner.tuning;
  kept.push({ technique: winner.technique, variant: winner.variant });
  remaining.splice(remaining.indexOf(winner.technique), 1);
  log(
    `Kept: ${winner.technique.name} ${describeVariant(winner.variant)} -> ${setNames.map((set) => `${set} ${figures(current, set)}`).join(', ')}.`,
  );
}

// Each kept refinement against the final tuning without it, by the same rule; one that
// fails is dropped and the check runs again.
log();
log('## Each kept refinement against the final tuning without it');
log();
for (;;) {
  const rows = [];
  let failing;
  for (const entry of kept) {
    const without = merge(current, entry.technique.off);
    const result = leaveOneSetOut({
      candidates: [without, current],
      sets: setNames,
      score,
      ...rule,
    });
    rows.push([
      `${entry.technique.name} ${describeVariant(entry.variant)}`,
      ...setNames.map((set) =>
        signed(score(current, set) - score(without, set)),
      ),
      signed(macro(current) - macro(without)),
      ...result.splits.map((split) => signed(split.change)),
      result.qualifies ? 'yes' : 'no',
    ]);
    if (!result.qualifies && !failing) failing = { entry, without };
  }
  table(
    [
      'refinement',
      ...setNames,
      'macro',
      ...setNames.map((set) => `held out: ${set}`),
      'stays',
    ],
    rows,
  );
  if (!failing) break;
  log();
  log(`Dropped: ${failing.entry.technique.name}; checked again without it.`);
  log();
  current = failing.without;
  kept.splice(kept.indexOf(failing.entry), 1);
}

const chosen = current;
log();
log('## Chosen defaults');
log();
log('```json');
log(JSON.stringify(chosen));
log('```');
log();
table(
  ['set', 'plain BM25', 'base', 'chosen', 'chosen above plain BM25'],
  sets.map((set) => [
    set.name,
    `${f3(set.plain['nDCG@10'])} / ${f3(set.plain['R@5'])}`,
    figures(BASE, set.name),
    figures(chosen, set.name),
    score(chosen, set.name) > set.plain['nDCG@10'] &&
    metricsOf(chosen, set.name)['R@5'] > set.plain['R@5']
      ? 'yes'
      : '**no**',
  ]),
);
log();
log(
  `nDCG@10 / R@5. \`DEFAULT_TUNING\` of this build ${JSON.stringify(DEFAULT_TUNING) === JSON.stringify(chosen) ? 'is' : 'is **not**'} the chosen tuning.`,
);

// Switches: what each refinement would give if each set had its best variant, and what a
// switch on one catalog statistic gives on the held-out set.
log();
log('## Switches chosen from the catalog');
log();
log(
  'Per refinement, on top of the chosen defaults: "best per set" is what each set gains with its own best variant (or off), an upper bound for any switch. A switch turns one variant on where one statistic of the catalog is on one side of a threshold; statistic, side, threshold (midpoints between the training sets) and variant are chosen on the other sets by the rule, and the cells give the change on the held-out set. The last column is the switch a usage log could drive: the variant (or off) chosen on four fifths of the set\'s own queries and scored on the fifth, each fifth in turn.',
);
log();
function switchCandidates(technique, training) {
  const candidates = [];
  for (const statistic of statisticNames) {
    const points = training
      .map((set) => statistics.get(set)[statistic])
      .sort((left, right) => left - right);
    const thresholds = points
      .slice(1)
      .map((value, index) => (value + points[index]) / 2);
    for (const threshold of thresholds)
      for (const above of [true, false])
        for (const variant of technique.variants)
          candidates.push({
            statistic,
            threshold,
            above,
            variant,
            label: `${variant ? JSON.stringify(variant) : ''} where ${statistic} ${above ? '>' : '<'} ${threshold >= 10 ? threshold.toFixed(1) : threshold.toFixed(2)}`,
          });
  }
  return candidates;
}
const tuningFor = (candidate, set) => {
  if (candidate === 'off') return chosen;
  const value = statistics.get(set)[candidate.statistic];
  const on = candidate.above
    ? value > candidate.threshold
    : value < candidate.threshold;
  return on ? merge(chosen, candidate.variant) : chosen;
};
const switchScore = (candidate, set) => score(tuningFor(candidate, set), set);
const folds = new Map(
  sets.map((set) => [
    set.name,
    foldAssignment({ count: set.data.queries.length, folds: FOLDS, seed: 1 }),
  ]),
);
const switchRows = [];
for (const technique of TECHNIQUES) {
  const best = setNames.map((set) =>
    Math.max(
      0,
      ...technique.variants.map(
        (variant) => score(merge(chosen, variant), set) - score(chosen, set),
      ),
      score(merge(chosen, technique.off), set) - score(chosen, set),
    ),
  );
  const splits = setNames.map((heldOut) => {
    const training = setNames.filter((set) => set !== heldOut);
    const pick = chooseRefinement({
      candidates: ['off', ...switchCandidates(technique, training)],
      sets: training,
      score: switchScore,
      ...rule,
    });
    return pick === undefined
      ? { change: 0, label: 'off' }
      : {
          change: switchScore(pick, heldOut) - score(chosen, heldOut),
          label: pick.label,
        };
  });
  // Chosen per set on its own queries: a usage log's labelled searches.
  const fromLog = setNames.map((set) => {
    const candidates = [
      chosen,
      merge(chosen, technique.off),
      ...technique.variants.map((variant) => merge(chosen, variant)),
    ];
    const { heldOut } = crossValidate({
      candidates,
      objectives: (tuning) => perQuery(tuning, set),
      folds: folds.get(set),
    });
    return heldOut - score(chosen, set);
  });
  switchRows.push([
    technique.name,
    best.map(signed).join(', '),
    ...splits.map((split) => `${signed(split.change)} (${split.label})`),
    fromLog.map(signed).join(', '),
  ]);
}
table(
  [
    'refinement',
    `best per set (${setNames.join(', ')})`,
    ...setNames.map((set) => `held out: ${set}`),
    `chosen on each set's own queries, ${FOLDS}-fold (${setNames.join(', ')})`,
  ],
  switchRows,
);

writeFileSync(out, `${lines.join('\n')}\n`);
if (json)
  writeFileSync(
    resolve(json),
    `${JSON.stringify({ chosen, kept: kept.map((entry) => ({ name: entry.technique.name, variant: entry.variant })) }, null, 2)}\n`,
  );
process.stderr.write(`record written to ${out}\n`);

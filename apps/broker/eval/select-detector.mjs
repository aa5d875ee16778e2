#!/usr/bin/env node
// How the detector of poisoned tool descriptions is chosen, and how it fares
// on sets left out of the choice.
//
// The signals (src/trust/injection-signals.ts) are found once in every tool
// of every set (eval/detector-sets.mjs). A detector is a weight per signal, a
// window of sentences and a threshold (src/trust/injection-rules.ts). The
// choice starts from PRIOR (set by hand from what each signal means, before
// any set was scored) and moves one parameter at a time (coordinate ascent,
// weights 0-3, windows 1-3 sentences or the whole tool, thresholds 2-5) while
// that raises the mean recall over the attack sets it may look at, under the
// constraint that it flags at most BUDGET of every clean set it may look at;
// ties go to the value nearer PRIOR, then to fewer false flags. Within the
// budget the prior is kept unless a move buys recall: a signal no attack set
// here needs (several kinds of attack are thin in these sets) is not dropped
// only because dropping it spares a clean tool.
//
// - Each attack set's recall is that of a detector chosen without it (on the
//   other attack sets and every clean set).
// - Each clean set's false-flag rate is that of a detector chosen without it
//   (on every attack set and the other clean sets).
// - The detector the broker ships (DETECTOR) is the choice on every set; the
//   script checks that it is.
//
// The result guard (src/trust/result-guard.ts) has no choice: its recall per
// attack set and its false flags on honest results are printed after.
//
// Run from apps/broker (after `pnpm install`; the catalog must be built):
//   node eval/select-detector.mjs          # tables
//   node eval/select-detector.mjs --json
import process from 'node:process';
import { loadDetectorSets } from './detector-sets.mjs';
import {
  NOT_INJECTION,
  loadGuardbench,
} from './guardbench/guardbench-data.mjs';
import { loadTrustModules } from './load-trust.mjs';
import { RESULT_KINDS, loadMsb } from './msb/msb-data.mjs';
import { loadRealTools } from './real-tools.mjs';

/** The most a detector may flag of any clean set it is chosen on. */
const BUDGET = 0.005;
/** The targets the figures are held to (eval-figures.test.ts). */
const TARGETS = { realToolFalseFlags: 0.01, resultRecallMsb: 58 / 68 };

/** The starting point, set by hand from what each signal means. */
const PRIOR = {
  weights: {
    'instruction-tag': 2,
    override: 3,
    'user-turn': 2,
    'system-claim': 2,
    obligation: 1,
    urgency: 1,
    secrecy: 2,
    precondition: 1,
    imperative: 1,
    'other-tool': 2,
    network: 2,
    'sensitive-file': 2,
    shell: 2,
    'argument-change': 2,
    'extra-action': 2,
    away: 2,
    exfiltration: 2,
    'agent-identity': 3,
    'self-preference': 3,
    'hidden-text': 3,
  },
  window: 2,
  threshold: 3,
};
const WEIGHTS = [0, 1, 2, 3];
const WINDOWS = [1, 2, 3, 0];
const THRESHOLDS = [2, 3, 4, 5];

const rules = await loadTrustModules();
const sanitize = rules;
const guard = await loadTrustModules('result-guard');
const sets = await loadDetectorSets(rules, sanitize);

// A tool with no signal is never flagged: only tools with signals are scored.
const withHits = (set) => ({
  ...set,
  total: set.items.length,
  scored: set.items.filter((item) => item.hits.length > 0),
});
const attackSets = sets.attack.map(withHits);
const cleanSets = sets.clean.map(withHits);

const flaggedBy = (config) => (item) =>
  rules.scoreSignals(item.hits, config).flagged;

function figures(config, attacks, cleans) {
  const flagged = flaggedBy(config);
  const recall = attacks.map(
    (set) => set.scored.filter(flagged).length / set.total,
  );
  const falseFlags = cleans.map((set) => set.scored.filter(flagged).length);
  return {
    feasible: cleans.every(
      (set, index) => falseFlags[index] / set.total <= BUDGET,
    ),
    recall:
      recall.reduce((sum, rate) => sum + rate, 0) / Math.max(1, recall.length),
    falseFlags: falseFlags.reduce((sum, count) => sum + count, 0),
  };
}

function distance(config) {
  let sum =
    Math.abs(config.window - PRIOR.window) +
    Math.abs(config.threshold - PRIOR.threshold);
  for (const [signal, weight] of Object.entries(config.weights))
    sum += Math.abs(weight - PRIOR.weights[signal]);
  return sum;
}

/** Whether figures `a` (of config `ca`) beat `b` (of `cb`), by the order in the header. */
function better(a, ca, b, cb) {
  if (a.feasible !== b.feasible) return a.feasible;
  if (Math.abs(a.recall - b.recall) > 1e-9) return a.recall > b.recall;
  const [da, db] = [distance(ca), distance(cb)];
  if (da !== db) return da < db;
  return a.falseFlags < b.falseFlags;
}

/** The detector chosen on `attacks` and `cleans`, by the search in the header. */
function choose(attacks, cleans) {
  let config = structuredClone(PRIOR);
  let score = figures(config, attacks, cleans);
  const moves = [
    ['threshold', THRESHOLDS],
    ['window', WINDOWS],
    ...Object.keys(PRIOR.weights).map((signal) => [signal, WEIGHTS]),
  ];
  for (let pass = 0; pass < 8; pass += 1) {
    let moved = false;
    for (const [name, values] of moves) {
      for (const value of values) {
        const candidate = structuredClone(config);
        if (name === 'threshold' || name === 'window') candidate[name] = value;
        else candidate.weights[name] = value;
        const candidateScore = figures(candidate, attacks, cleans);
        if (better(candidateScore, candidate, score, config)) {
          config = candidate;
          score = candidateScore;
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return config;
}

const tally = (items, flagged) => {
  const count = items.filter(flagged).length;
  return {
    total: items.length,
    flagged: count,
    rate: count / Math.max(1, items.length),
  };
};

function byKind(set, flagged) {
  const kinds = [...new Set(set.items.map((item) => item.kind))];
  return Object.fromEntries(
    kinds.map((kind) => [
      kind,
      tally(
        set.items.filter((item) => item.kind === kind),
        flagged,
      ),
    ]),
  );
}

const chosen = choose(attackSets, cleanSets);
const shipped = rules.DETECTOR;
const same =
  chosen.window === shipped.window &&
  chosen.threshold === shipped.threshold &&
  Object.keys(PRIOR.weights).every(
    (signal) => chosen.weights[signal] === shipped.weights[signal],
  );

const attackRows = attackSets.map((set) => {
  const config = choose(
    attackSets.filter((other) => other !== set),
    cleanSets,
  );
  const heldOut = flaggedBy(config);
  return {
    set: set.name,
    heldOut: tally(set.items, heldOut),
    heldOutKinds: byKind(set, heldOut),
    shipped: tally(set.items, flaggedBy(shipped)),
    missed: set.items.filter((item) => !heldOut(item)).map((item) => item.id),
    config,
  };
});
const cleanRows = cleanSets.map((set) => {
  const config = choose(
    attackSets,
    cleanSets.filter((other) => other !== set),
  );
  const heldOut = flaggedBy(config);
  return {
    set: set.name,
    real: set.real,
    heldOut: tally(set.items, heldOut),
    shipped: tally(set.items, flaggedBy(shipped)),
    flagged: set.items.filter(flaggedBy(shipped)).map((item) => item.id),
  };
});
const realHeldOut = cleanRows
  .filter((row) => row.real)
  .reduce(
    (sum, row) => ({
      total: sum.total + row.heldOut.total,
      flagged: sum.flagged + row.heldOut.flagged,
    }),
    { total: 0, flagged: 0 },
  );
realHeldOut.rate = realHeldOut.flagged / realHeldOut.total;

// The result guard, per attack set.
const guarded = (text) =>
  guard
    .guardResult({ content: [{ type: 'text', text }] })
    .flags.map((flag) => flag.rule);
const msb = loadMsb();
const gb = loadGuardbench();
const hit = (item) => item.rules.length > 0;
const msbResults = msb.results.map((sample) => ({
  ...sample,
  rules: guarded(sample.text),
}));
const gbResults = gb.attackResults.map((sample) => ({
  ...sample,
  rules: guarded(sample.text),
}));
const gbInjections = gbResults.filter(
  (item) => !NOT_INJECTION.has(item.category),
);
const realTools = await loadRealTools();
const resultGuard = {
  msb: {
    all: tally(msbResults, hit),
    kinds: Object.fromEntries(
      RESULT_KINDS.map((kind) => [
        kind,
        tally(
          msbResults.filter((item) => item.kind === kind),
          hit,
        ),
      ]),
    ),
    honest: tally(
      msb.resultTwins.map((twin) => ({ rules: guarded(twin.text) })),
      hit,
    ),
  },
  guardbench: {
    injections: tally(gbInjections, hit),
    notInjection: tally(
      gbResults.filter((item) => NOT_INJECTION.has(item.category)),
      hit,
    ),
    honest: tally(
      gb.honestResults.map((item) => ({ ...item, rules: guarded(item.text) })),
      hit,
    ),
    missed: gbInjections.filter((item) => !hit(item)).map((item) => item.id),
  },
  realDescriptionsAsResults: tally(
    realTools.map((tool) => ({ rules: guarded(tool.description) })),
    hit,
  ),
};

const output = {
  budget: BUDGET,
  targets: TARGETS,
  shippedIsChosen: same,
  chosen,
  shipped,
  attackSets: attackRows,
  cleanSets: cleanRows,
  realToolsHeldOut: realHeldOut,
  resultGuard,
};

const percent = (rate) => `${(rate * 100).toFixed(1)} %`;
const cell = (figure) =>
  `${figure.flagged} / ${figure.total} (${percent(figure.rate)})`;
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
} else {
  const lines = [
    'Poisoned descriptions flagged (recall): each set scored by a detector chosen without it',
    '| attack set | kind | held out | shipped detector |',
    '| --- | --- | --- | --- |',
  ];
  for (const row of attackRows) {
    lines.push(
      `| **${row.set}** | all | ${cell(row.heldOut)} | ${cell(row.shipped)} |`,
    );
    for (const [kind, figure] of Object.entries(row.heldOutKinds))
      lines.push(`| | ${kind} | ${cell(figure)} | |`);
  }
  lines.push(
    '',
    `Clean tools flagged (false flags): each set scored by a detector chosen without it (budget while choosing: ${percent(BUDGET)} of each set)`,
    '| clean set | held out | shipped detector |',
    '| --- | --- | --- |',
    ...cleanRows.map(
      (row) =>
        `| ${row.set}${row.real ? ' (real tools)' : ''} | ${cell(row.heldOut)} | ${cell(row.shipped)} |`,
    ),
    `| **the 760 real tools** | ${cell(realHeldOut)} | |`,
    '',
    'Result guard (no choice: the same text signals on every set)',
    '| set | flagged |',
    '| --- | --- |',
    ...RESULT_KINDS.map(
      (kind) => `| MSB ${kind} | ${cell(resultGuard.msb.kinds[kind])} |`,
    ),
    `| **MSB result attacks** | ${cell(resultGuard.msb.all)} |`,
    `| MSB honest retrieval documents (false flags) | ${cell(resultGuard.msb.honest)} |`,
    `| **mcp-guardbench injected results, prompts, resources** | ${cell(resultGuard.guardbench.injections)} |`,
    `| mcp-guardbench credential egress and renderer code (not instructions; out of scope) | ${cell(resultGuard.guardbench.notInjection)} |`,
    `| mcp-guardbench honest results (false flags) | ${cell(resultGuard.guardbench.honest)} |`,
    `| the 760 real descriptions read as results (false flags) | ${cell(resultGuard.realDescriptionsAsResults)} |`,
    '',
    `shipped detector ${same ? 'is' : 'is NOT'} the choice on every set: window ${chosen.window}, threshold ${chosen.threshold}, weights ${JSON.stringify(chosen.weights)}`,
    ...attackRows.flatMap((row) =>
      row.missed.map((id) => `  missed (held out) ${row.set}: ${id}`),
    ),
    ...cleanRows.flatMap((row) =>
      row.flagged.map((id) => `  flagged clean (shipped) ${row.set}: ${id}`),
    ),
    ...resultGuard.guardbench.missed.map(
      (id) => `  result guard missed: mcp-guardbench ${id}`,
    ),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
process.exitCode =
  same && realHeldOut.rate <= TARGETS.realToolFalseFlags ? 0 : 1;

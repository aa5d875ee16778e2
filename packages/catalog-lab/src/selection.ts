import { CatalogError, CatalogErrorCode } from '@heretek/catalog';
import { seededRandom } from './random.js';
import type { BenchmarkQuery } from './evaluate.js';

function ndcgAt10(ranked: readonly string[], relevant: ReadonlySet<string>) {
  let dcg = 0;
  ranked.slice(0, 10).forEach((name, rank) => {
    if (relevant.has(name)) dcg += 1 / Math.log2(rank + 2);
  });
  let ideal = 0;
  for (let rank = 0; rank < Math.min(relevant.size, 10); rank += 1)
    ideal += 1 / Math.log2(rank + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

/**
 * The selection objective of each query: the mean of its nDCG@10 and Recall@5 (binary
 * gains, flat `relevant` lists, as {@link evaluateRankings} computes them).
 */
export function queryObjectives(options: {
  queries: readonly BenchmarkQuery[];
  rankings: readonly (readonly string[])[];
}): Float64Array {
  const values = new Float64Array(options.queries.length);
  options.queries.forEach((query, index) => {
    const ranked = options.rankings[index] ?? [];
    const relevant = new Set(query.relevant);
    const found = ranked.slice(0, 5).filter((name) => relevant.has(name));
    const recall = found.length / Math.max(1, relevant.size);
    values[index] = (ndcgAt10(ranked, relevant) + recall) / 2;
  });
  return values;
}

/**
 * Assigns `count` queries to `folds` folds after a deterministic shuffle ({@link seededRandom}
 * with `seed`), so every fold has the same size within one.
 */
export function foldAssignment(options: {
  count: number;
  folds: number;
  seed?: number;
}): Int32Array {
  const { count, folds } = options;
  if (!Number.isInteger(folds) || folds < 2 || folds > Math.max(2, count)) {
    throw new CatalogError({
      code: CatalogErrorCode.InvalidArgument,
      message: `foldAssignment: "folds" must be an integer from 2 to the number of queries (${count}), got ${String(folds)}.`,
    });
  }
  const random = seededRandom(options.seed ?? 1);
  const order = Array.from({ length: count }, (_, index) => index);
  for (let index = count - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [
      order[other] as number,
      order[index] as number,
    ];
  }
  const fold = new Int32Array(count);
  order.forEach((position, rank) => {
    fold[position] = rank % folds;
  });
  return fold;
}

const mean = (values: Float64Array, keep: (index: number) => boolean) => {
  let sum = 0;
  let count = 0;
  values.forEach((value, index) => {
    if (keep(index)) {
      sum += value;
      count += 1;
    }
  });
  return count === 0 ? 0 : sum / count;
};

/**
 * Cross-validation of a choice among candidates within one set: for each fold, the candidate
 * with the best mean objective on the other folds is chosen and scored on the fold. Returns
 * the held-out objective over all queries (each held out once) and the choice of each fold.
 * Ties go to the earlier candidate.
 */
export function crossValidate<Candidate>(options: {
  candidates: readonly Candidate[];
  /** Per-query objectives of a candidate (see {@link queryObjectives}). */
  objectives: (candidate: Candidate) => Float64Array;
  folds: Int32Array;
}): { heldOut: number; chosen: Candidate[] } {
  const { candidates, folds } = options;
  if (candidates.length === 0) {
    throw new CatalogError({
      code: CatalogErrorCode.InvalidArgument,
      message: 'crossValidate: give at least one candidate.',
    });
  }
  const values = candidates.map((candidate) => options.objectives(candidate));
  const foldCount = Math.max(...folds) + 1;
  const heldOut = new Float64Array(folds.length);
  const chosen: Candidate[] = [];
  for (let fold = 0; fold < foldCount; fold += 1) {
    let best = 0;
    let bestScore = -Infinity;
    values.forEach((perQuery, index) => {
      const score = mean(perQuery, (query) => folds[query] !== fold);
      if (score > bestScore) {
        bestScore = score;
        best = index;
      }
    });
    chosen.push(candidates[best] as Candidate);
    const winner = values[best] as Float64Array;
    folds.forEach((queryFold, query) => {
      if (queryFold === fold) heldOut[query] = winner[query] as number;
    });
  }
  return { heldOut: mean(heldOut, () => true), chosen };
}

/** What {@link chooseRefinement} compares: a candidate's score on each set against "off". */
type RuleOptions<Candidate> = {
  /** The first is "off" (the tuning without the refinement); the others are its variants. */
  candidates: readonly Candidate[];
  sets: readonly string[];
  /** Score of a candidate on a set (e.g. its nDCG@10). */
  score: (candidate: Candidate, set: string) => number;
  /** How far a variant may lower any one set against "off" (default 0.005). */
  tolerance?: number;
  /** How far a variant must raise the macro average over the sets (default 0.001). */
  minimumGain?: number;
  /**
   * Differences of the macro average this small are noise: the earliest passing variant
   * (list variants mildest first) within `slack` of the best one is chosen (default 0).
   */
  slack?: number;
};

const macroOf = <Candidate>(
  options: RuleOptions<Candidate>,
  candidate: Candidate,
  sets: readonly string[],
): number =>
  sets.reduce((sum, set) => sum + options.score(candidate, set), 0) /
  Math.max(1, sets.length);

/**
 * The selection rule on `sets`: among the variants (every candidate after the first, "off"),
 * those that raise the macro average over `sets` by more than `minimumGain` and lower no set
 * by more than `tolerance` against "off"; returns the earliest of them whose macro average is
 * within `slack` of the best one, or `undefined` when none passes.
 */
export function chooseRefinement<Candidate>(
  options: RuleOptions<Candidate>,
): Candidate | undefined {
  const { candidates, sets } = options;
  const tolerance = options.tolerance ?? 0.005;
  const minimumGain = options.minimumGain ?? 0.001;
  const off = candidates[0] as Candidate;
  const offMacro = macroOf(options, off, sets);
  const passing = candidates.slice(1).flatMap((candidate) => {
    const macro = macroOf(options, candidate, sets);
    const lowers = sets.some(
      (set) =>
        options.score(candidate, set) < options.score(off, set) - tolerance,
    );
    return macro > offMacro + minimumGain && !lowers
      ? [{ candidate, macro }]
      : [];
  });
  const best = Math.max(...passing.map((entry) => entry.macro));
  return passing.find((entry) => entry.macro >= best - (options.slack ?? 0))
    ?.candidate;
}

/**
 * Leave-one-set-out selection of one refinement: for each set, the variant is chosen by
 * {@link chooseRefinement} on all the other sets and scored on the held-out one. The
 * refinement qualifies when a variant passes the rule on all the sets together and, in
 * every split, a variant is chosen on the other sets that lowers the held-out set by no
 * more than `tolerance` against "off".
 */
export function leaveOneSetOut<Candidate>(options: RuleOptions<Candidate>): {
  /** The variant chosen on all the sets, or `undefined` when none passes the rule. */
  chosen: Candidate | undefined;
  qualifies: boolean;
  splits: Array<{
    heldOut: string;
    /** The variant chosen on the other sets, or `undefined` ("off"). */
    chosen: Candidate | undefined;
    /** Held-out score of that choice, and its change against "off". */
    score: number;
    change: number;
  }>;
} {
  const tolerance = options.tolerance ?? 0.005;
  const off = options.candidates[0] as Candidate;
  const splits = options.sets.map((heldOut) => {
    const chosen = chooseRefinement({
      ...options,
      sets: options.sets.filter((set) => set !== heldOut),
    });
    const score = options.score(chosen ?? off, heldOut);
    return {
      heldOut,
      chosen,
      score,
      change: score - options.score(off, heldOut),
    };
  });
  const chosen = chooseRefinement(options);
  return {
    chosen,
    qualifies:
      chosen !== undefined &&
      splits.every(
        (split) => split.chosen !== undefined && split.change >= -tolerance,
      ),
    splits,
  };
}

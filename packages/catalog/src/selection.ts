import { CatalogError, CatalogErrorCode } from './errors.js';
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

/**
 * Leave-one-set-out selection: for each ordered pair of sets, the candidate with the best
 * objective on the training set is chosen and scored on the other. Ties go to the earlier
 * candidate.
 */
export function leaveOneSetOut<Candidate>(options: {
  candidates: readonly Candidate[];
  sets: readonly string[];
  /** Mean objective of a candidate on a set. */
  score: (candidate: Candidate, set: string) => number;
}): Array<{
  train: string;
  test: string;
  chosen: Candidate;
  heldOut: number;
}> {
  const splits = [];
  for (const train of options.sets) {
    let chosen = options.candidates[0] as Candidate;
    let bestScore = -Infinity;
    for (const candidate of options.candidates) {
      const score = options.score(candidate, train);
      if (score > bestScore) {
        bestScore = score;
        chosen = candidate;
      }
    }
    for (const test of options.sets)
      if (test !== train)
        splits.push({
          train,
          test,
          chosen,
          heldOut: options.score(chosen, test),
        });
  }
  return splits;
}

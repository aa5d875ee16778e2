/** How lexical (BM25) and vector rankings are fused. */
export type FusionMethod = 'interpolate' | 'rrf';

/** The fusion knobs of hybrid search. */
export type Fusion = {
  /**
   * `interpolate`: `(1 - weight) * bm25 / best bm25 + weight * similarity`, the similarity
   * scaled to 0..1 over the tools compared; `rrf`: reciprocal rank fusion,
   * `(1 - weight) / (rrfK + lexical rank) + weight / (rrfK + vector rank)`.
   */
  method: FusionMethod;
  /** Share of the vector side, 0..1 (0: lexical order, 1: vector order). */
  weight: number;
  /** The rank constant of `rrf`. */
  rrfK: number;
};

/** The default fusion: interpolation at a low weight (see the catalog README's hybrid section). */
export const DEFAULT_FUSION: Readonly<Fusion> = Object.freeze({
  method: 'interpolate',
  weight: 0.3,
  rrfK: 60,
});

/** What {@link fuseRankings} fuses. */
export type FusionInput = {
  /** Lexical candidates, best first, and their BM25 scores (any positive scale). */
  lexical: { positions: ArrayLike<number>; scores: ArrayLike<number> };
  /** Tools compared by vector, in any order, and their similarity to the query. */
  vector: { positions: ArrayLike<number>; similarities: ArrayLike<number> };
  /** How many fused positions to return. */
  limit: number;
  fusion: Fusion;
};

/** Positions best first with their fused scores (higher is better). */
export type FusedRanking = { positions: number[]; scores: number[] };

/** Whether `left` ranks before `right`: the higher score, then the lower position. */
const before = (
  leftScore: number,
  leftPosition: number,
  rightScore: number,
  rightPosition: number,
): boolean =>
  leftScore > rightScore ||
  (leftScore === rightScore && leftPosition < rightPosition);

/** How many of the ascending `sorted` values are greater than `value`. */
function countAbove(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) <= value) low = middle + 1;
    else high = middle;
  }
  return sorted.length - low;
}

/**
 * Fuses a lexical ranking with vector similarities (pure; no state, no I/O). Every tool of
 * either side is a candidate; a tool missing from one side gets nothing from it. Costs a
 * pass over both sides (and, for `rrf`, a sort of the similarities).
 */
export function fuseRankings(input: FusionInput): FusedRanking {
  const { lexical, vector, fusion } = input;
  const weight = Math.min(1, Math.max(0, fusion.weight));
  const limit = Math.max(0, input.limit);
  let size = 0;
  for (let slot = 0; slot < lexical.positions.length; slot += 1)
    size = Math.max(size, (lexical.positions[slot] as number) + 1);
  for (let slot = 0; slot < vector.positions.length; slot += 1)
    size = Math.max(size, (vector.positions[slot] as number) + 1);
  const fused = new Float64Array(size);
  const seen = new Uint8Array(size);
  const candidates = new Int32Array(
    lexical.positions.length + vector.positions.length,
  );
  let count = 0;
  const add = (position: number, value: number): void => {
    if (seen[position] === 0) {
      seen[position] = 1;
      candidates[count] = position;
      count += 1;
    }
    fused[position] = (fused[position] as number) + value;
  };
  if (fusion.method === 'rrf') {
    const { rrfK } = fusion;
    for (let rank = 0; rank < lexical.positions.length; rank += 1)
      add(lexical.positions[rank] as number, (1 - weight) / (rrfK + rank + 1));
    // A tool's vector rank: how many similarities are above its own (ties share a rank).
    const sorted = Float64Array.from(vector.similarities).sort();
    for (let slot = 0; slot < vector.positions.length; slot += 1)
      add(
        vector.positions[slot] as number,
        weight /
          (rrfK + countAbove(sorted, vector.similarities[slot] as number) + 1),
      );
  } else {
    let top = 0;
    for (let slot = 0; slot < lexical.scores.length; slot += 1)
      top = Math.max(top, lexical.scores[slot] as number);
    let low = Infinity;
    let high = -Infinity;
    for (let slot = 0; slot < vector.similarities.length; slot += 1) {
      const similarity = vector.similarities[slot] as number;
      if (similarity < low) low = similarity;
      if (similarity > high) high = similarity;
    }
    const span = high > low ? high - low : 1;
    const lexicalShare = top > 0 ? (1 - weight) / top : 0;
    for (let slot = 0; slot < lexical.positions.length; slot += 1)
      add(
        lexical.positions[slot] as number,
        lexicalShare * (lexical.scores[slot] as number),
      );
    const vectorShare = weight / span;
    for (let slot = 0; slot < vector.positions.length; slot += 1)
      add(
        vector.positions[slot] as number,
        vectorShare * ((vector.similarities[slot] as number) - low),
      );
  }
  // The best `limit`, kept sorted by insertion (a candidate rarely enters once it is full).
  const positions: number[] = [];
  const scores: number[] = [];
  for (let slot = 0; slot < count; slot += 1) {
    const position = candidates[slot] as number;
    const score = fused[position] as number;
    const kept = positions.length;
    if (
      kept === limit &&
      !before(
        score,
        position,
        scores[kept - 1] as number,
        positions[kept - 1] as number,
      )
    )
      continue;
    let at = kept;
    while (
      at > 0 &&
      before(
        score,
        position,
        scores[at - 1] as number,
        positions[at - 1] as number,
      )
    )
      at -= 1;
    positions.splice(at, 0, position);
    scores.splice(at, 0, score);
    if (positions.length > limit) {
      positions.pop();
      scores.pop();
    }
  }
  return { positions, scores };
}

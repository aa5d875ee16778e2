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

/** The `count` best of `scores` over `positions`, best first (ties: lower position first). */
function best(
  positions: readonly number[],
  scores: ReadonlyMap<number, number>,
  count: number,
): number[] {
  const score = (position: number): number => scores.get(position) ?? 0;
  const better = (left: number, right: number): boolean =>
    score(left) > score(right) ||
    (score(left) === score(right) && left < right);
  // A min-heap of the best `count` seen so far (its root is the worst kept).
  const heap: number[] = [];
  const siftDown = (start: number): void => {
    let parent = start;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let worst = parent;
      if (left < heap.length && better(heap[worst]!, heap[left]!)) worst = left;
      if (right < heap.length && better(heap[worst]!, heap[right]!))
        worst = right;
      if (worst === parent) return;
      [heap[parent], heap[worst]] = [heap[worst]!, heap[parent]!];
      parent = worst;
    }
  };
  for (const position of positions) {
    if (heap.length < count) {
      heap.push(position);
      let child = heap.length - 1;
      while (child > 0) {
        const parent = (child - 1) >> 1;
        if (!better(heap[parent]!, heap[child]!)) break;
        [heap[parent], heap[child]] = [heap[child]!, heap[parent]!];
        child = parent;
      }
    } else if (count > 0 && better(position, heap[0]!)) {
      heap[0] = position;
      siftDown(0);
    }
  }
  return heap.sort((left, right) => (better(left, right) ? -1 : 1));
}

/**
 * Fuses a lexical ranking with vector similarities (pure; no state, no I/O). Every tool of
 * either side is a candidate; a tool missing from one side gets nothing from it.
 */
export function fuseRankings(input: FusionInput): FusedRanking {
  const { lexical, vector, fusion, limit } = input;
  const weight = Math.min(1, Math.max(0, fusion.weight));
  const fused = new Map<number, number>();
  const candidates: number[] = [];
  const add = (position: number, value: number): void => {
    const previous = fused.get(position);
    if (previous === undefined) candidates.push(position);
    fused.set(position, (previous ?? 0) + value);
  };
  if (fusion.method === 'rrf') {
    for (let rank = 0; rank < lexical.positions.length; rank += 1)
      add(lexical.positions[rank]!, (1 - weight) / (fusion.rrfK + rank + 1));
    const order = Array.from(
      { length: vector.positions.length },
      (_, slot) => slot,
    ).sort(
      (left, right) => vector.similarities[right]! - vector.similarities[left]!,
    );
    order.forEach((slot, rank) =>
      add(vector.positions[slot]!, weight / (fusion.rrfK + rank + 1)),
    );
  } else {
    let top = 0;
    for (let slot = 0; slot < lexical.scores.length; slot += 1)
      top = Math.max(top, lexical.scores[slot]!);
    let low = Infinity;
    let high = -Infinity;
    for (let slot = 0; slot < vector.similarities.length; slot += 1) {
      const similarity = vector.similarities[slot]!;
      if (similarity < low) low = similarity;
      if (similarity > high) high = similarity;
    }
    const span = high > low ? high - low : 1;
    for (let slot = 0; slot < lexical.positions.length; slot += 1)
      add(
        lexical.positions[slot]!,
        top > 0 ? ((1 - weight) * lexical.scores[slot]!) / top : 0,
      );
    for (let slot = 0; slot < vector.positions.length; slot += 1)
      add(
        vector.positions[slot]!,
        (weight * (vector.similarities[slot]! - low)) / span,
      );
  }
  const positions = best(candidates, fused, limit);
  return {
    positions,
    scores: positions.map((position) => fused.get(position) ?? 0),
  };
}

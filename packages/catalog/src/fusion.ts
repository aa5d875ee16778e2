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

/** Bins of the histogram {@link countAboveEach} counts in. */
const BINS = 2048;

/**
 * Per-tool working arrays, kept between calls and grown when a catalog grows: a fusion
 * over 10,000 tools would otherwise allocate about 150 KB a call, and the collections of
 * that garbage land in the slowest calls. The functions here are synchronous and call
 * nothing outside this module while they hold them; each leaves them zeroed (`bins` is
 * written before it is read).
 */
const scratch = {
  fused: new Float64Array(0),
  seen: new Uint8Array(0),
  listed: new Uint8Array(0),
  candidates: new Int32Array(0),
  bins: new Uint16Array(0),
};

/** `scratch[key]`, at least `size` long (zero-filled when new). */
function scratchOf<Key extends keyof typeof scratch>(
  key: Key,
  size: number,
): (typeof scratch)[Key] {
  if (scratch[key].length < size) {
    const Kind = scratch[key].constructor as new (
      length: number,
    ) => (typeof scratch)[Key];
    scratch[key] = new Kind(Math.max(size, 2 * scratch[key].length));
  }
  return scratch[key];
}

/**
 * For each of `values`, how many of `similarities` are above it, in two passes and no
 * sort: a histogram over the similarities' range (binning keeps order, so a higher bin
 * holds only higher similarities), then exact comparisons only in the bins the values
 * fall into.
 */
export function countAboveEach(
  similarities: ArrayLike<number>,
  values: readonly number[],
): number[] {
  const count = similarities.length;
  let low = Infinity;
  let high = -Infinity;
  for (let slot = 0; slot < count; slot += 1) {
    const similarity = similarities[slot] as number;
    if (similarity < low) low = similarity;
    if (similarity > high) high = similarity;
  }
  // A range too narrow or too wide for a finite scale puts all in one bin (all exact).
  const ratio = BINS / (high - low);
  const scale = high > low && Number.isFinite(ratio) ? ratio : 0;
  const binOf = (value: number): number =>
    Math.min(BINS - 1, Math.floor((value - low) * scale));
  const bins = scratchOf('bins', count);
  const histogram = new Int32Array(BINS + 1);
  for (let slot = 0; slot < count; slot += 1) {
    const bin = binOf(similarities[slot] as number);
    bins[slot] = bin;
    histogram[bin] = (histogram[bin] as number) + 1;
  }
  // histogram[b] becomes how many similarities are in bins above b.
  let above = 0;
  for (let bin = BINS - 1; bin >= 0; bin -= 1) {
    const inBin = histogram[bin] as number;
    histogram[bin] = above;
    above += inBin;
  }
  // The values of each bin, for the exact comparisons within it.
  const valueBins = values.map(binOf);
  const byBin = new Map<number, number[]>();
  valueBins.forEach((bin, index) => {
    const list = byBin.get(bin);
    if (list === undefined) byBin.set(bin, [index]);
    else list.push(index);
  });
  const marked = new Uint8Array(BINS);
  for (const bin of byBin.keys()) marked[bin] = 1;
  const counts = valueBins.map((bin) => histogram[bin] as number);
  for (let slot = 0; slot < count; slot += 1) {
    const bin = bins[slot] as number;
    if (marked[bin] === 0) continue;
    const similarity = similarities[slot] as number;
    for (const index of byBin.get(bin) as number[])
      if (similarity > (values[index] as number))
        counts[index] = (counts[index] as number) + 1;
  }
  return counts;
}

/**
 * The slots of the best `size` vector entries whose position `skip` leaves, best first:
 * the higher similarity, then the lower position (`byPosition`: the lower position
 * alone). A bounded heap whose root is the worst kept: about one comparison a slot.
 */
function bestSlots(options: {
  vector: FusionInput['vector'];
  size: number;
  skip: Uint8Array;
  byPosition: boolean;
}): number[] {
  const { vector, size, skip, byPosition } = options;
  const { positions, similarities } = vector;
  /** Whether slot `left` ranks after slot `right`. */
  const worse = (left: number, right: number): boolean => {
    if (!byPosition) {
      const leftSimilarity = similarities[left] as number;
      const rightSimilarity = similarities[right] as number;
      if (leftSimilarity !== rightSimilarity)
        return leftSimilarity < rightSimilarity;
    }
    return (positions[left] as number) > (positions[right] as number);
  };
  const heap: number[] = [];
  const swap = (at: number, other: number): void => {
    const kept = heap[at] as number;
    heap[at] = heap[other] as number;
    heap[other] = kept;
  };
  if (size <= 0) return heap;
  for (let slot = 0; slot < positions.length; slot += 1) {
    if (skip[positions[slot] as number] === 1) continue;
    if (heap.length < size) {
      heap.push(slot);
      for (let at = heap.length - 1; at > 0;) {
        const parent = (at - 1) >>> 1;
        if (!worse(heap[at] as number, heap[parent] as number)) break;
        swap(at, parent);
        at = parent;
      }
      continue;
    }
    if (!worse(heap[0] as number, slot)) continue;
    heap[0] = slot;
    for (let at = 0; ;) {
      const left = 2 * at + 1;
      if (left >= heap.length) break;
      const child =
        left + 1 < heap.length &&
        worse(heap[left + 1] as number, heap[left] as number)
          ? left + 1
          : left;
      if (!worse(heap[child] as number, heap[at] as number)) break;
      swap(at, child);
      at = child;
    }
  }
  return heap.sort((left, right) => (worse(left, right) ? 1 : -1));
}

/** Slots with the vector rank of each: how many similarities are above its own (ties share a rank). */
type VectorRanks = { slots: number[]; ranks: number[] };

/**
 * The vector ranks `rrf` needs, without sorting every similarity: those of the lexical
 * candidates, and of the best `limit` others (only they can make the answer: any other
 * has a lower reciprocal rank or, tied, a higher position). `undefined` when this could
 * differ from ranking by a full sort: a repeated position, a similarity that is not a
 * finite number, or reciprocal ranks too close for a double to tell apart.
 */
function rrfRanks(options: {
  vector: FusionInput['vector'];
  lexical: Uint8Array;
  limit: number;
  weight: number;
  rrfK: number;
}): VectorRanks | undefined {
  const { vector, lexical, limit, weight, rrfK } = options;
  const count = vector.positions.length;
  if (
    weight > 0 &&
    !(rrfK + count + 1 < 2 ** 50 && weight / (rrfK + count + 1) > 1e-290)
  )
    return undefined;
  const listed = scratchOf('listed', lexical.length);
  let reached = 0;
  for (; reached < count; reached += 1) {
    const position = vector.positions[reached] as number;
    if (
      listed[position] === 1 ||
      !Number.isFinite(vector.similarities[reached] as number)
    )
      break;
    listed[position] = 1;
  }
  for (let slot = 0; slot < reached; slot += 1)
    listed[vector.positions[slot] as number] = 0;
  if (reached < count) return undefined;
  // At weight 0 every vector side adds 0: the lowest positions come next.
  const slots = bestSlots({
    vector,
    size: limit,
    skip: lexical,
    byPosition: weight === 0,
  });
  for (let slot = 0; slot < count; slot += 1)
    if (lexical[vector.positions[slot] as number] === 1) slots.push(slot);
  const ranks = countAboveEach(
    vector.similarities,
    slots.map((slot) => vector.similarities[slot] as number),
  );
  return { slots, ranks };
}

/** `rrf` vector ranks by sorting every similarity (the general case). */
function rrfRanksBySort(vector: FusionInput['vector']): VectorRanks {
  const sorted = Float64Array.from(vector.similarities).sort();
  const slots = Array.from(vector.positions, (_, slot) => slot);
  return {
    slots,
    ranks: slots.map((slot) =>
      countAbove(sorted, vector.similarities[slot] as number),
    ),
  };
}

/**
 * Fuses a lexical ranking with vector similarities (pure; no state, no I/O). Every tool of
 * either side is a candidate; a tool missing from one side gets nothing from it. Costs a
 * pass over both sides; for `rrf`, a bounded heap picks the best `limit` similarities and
 * one more pass ranks those and the lexical candidates' (no sort of every similarity).
 */
export function fuseRankings(input: FusionInput): FusedRanking {
  return fuseScored(input);
}

/**
 * {@link fuseRankings}, or with `ranks` given (for `rrf`), each vector slot's rank among
 * a larger set than the one given: hybrid search passes only the similarities the answer
 * depends on, with their ranks among all.
 */
export function fuseScored(
  input: FusionInput,
  ranks?: readonly number[],
): FusedRanking {
  const { lexical, vector, fusion } = input;
  const weight = Math.min(1, Math.max(0, fusion.weight));
  const limit = Math.max(0, input.limit);
  let size = 0;
  for (let slot = 0; slot < lexical.positions.length; slot += 1)
    size = Math.max(size, (lexical.positions[slot] as number) + 1);
  for (let slot = 0; slot < vector.positions.length; slot += 1)
    size = Math.max(size, (vector.positions[slot] as number) + 1);
  const fused = scratchOf('fused', size);
  const seen = scratchOf('seen', size);
  const candidates = scratchOf(
    'candidates',
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
  try {
    if (fusion.method === 'rrf') {
      const { rrfK } = fusion;
      for (let rank = 0; rank < lexical.positions.length; rank += 1)
        add(
          lexical.positions[rank] as number,
          (1 - weight) / (rrfK + rank + 1),
        );
      // `seen` marks the lexical candidates, and nothing else, here.
      const { slots, ranks: vectorRanks } =
        ranks === undefined
          ? (rrfRanks({ vector, lexical: seen, limit, weight, rrfK }) ??
            rrfRanksBySort(vector))
          : { slots: ranks.map((_, slot) => slot), ranks };
      slots.forEach((slot, index) =>
        add(
          vector.positions[slot] as number,
          weight / (rrfK + (vectorRanks[index] as number) + 1),
        ),
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
    return bestFused({ candidates, count, fused, limit });
  } finally {
    // Zero what this call touched, for the next.
    for (let slot = 0; slot < count; slot += 1) {
      const position = candidates[slot] as number;
      fused[position] = 0;
      seen[position] = 0;
    }
  }
}

/**
 * The best `limit` of the first `count` candidates by fused score (ties by position), kept
 * sorted by insertion: a candidate rarely enters once the list is full.
 */
function bestFused({
  candidates,
  count,
  fused,
  limit,
}: {
  candidates: Int32Array;
  count: number;
  fused: Float64Array;
  limit: number;
}): FusedRanking {
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

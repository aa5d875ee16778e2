import { topPositions } from './top-positions.js';

/** The fusion knob of hybrid search. */
export type Fusion = {
  /**
   * Share of the vector side, 0..1 (0: lexical order, 1: vector order): the fused score is
   * `(1 - weight) * bm25 / best bm25 + weight * similarity`, the similarity scaled to 0..1
   * over the tools compared.
   */
  weight: number;
};

/** The default fusion: a low weight (see the catalog README's hybrid section). */
export const DEFAULT_FUSION: Readonly<Fusion> = Object.freeze({ weight: 0.3 });

/** What {@link interpolate} fuses. */
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

/**
 * Per-tool working arrays kept between calls (zeroed after each): a fusion over 10,000 tools
 * would otherwise allocate about 100 KB a call, and collecting it lands in the slowest calls.
 */
const scratch = {
  fused: new Float64Array(0),
  seen: new Uint8Array(0),
  candidates: new Int32Array(0),
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

/** Fuses a lexical ranking with vector similarities by interpolation; a tool missing from one side gets nothing from it. */
export function interpolate(input: FusionInput): FusedRanking {
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
    const positions = topPositions(
      { items: candidates, length: count },
      fused,
      limit,
    );
    return {
      positions,
      scores: positions.map((position) => fused[position] as number),
    };
  } finally {
    // Zero what this call touched, for the next.
    for (let slot = 0; slot < count; slot += 1) {
      const position = candidates[slot] as number;
      fused[position] = 0;
      seen[position] = 0;
    }
  }
}

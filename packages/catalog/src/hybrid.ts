import { invalidArgument } from './errors.js';
import { DEFAULT_FUSION, interpolate, type Fusion } from './fusion.js';
import { QuantizedRows, type VectorMatrix } from './similarity-kernel.js';
import {
  hitsOf,
  rankLexical,
  runSearch,
  searchScope,
  type SearchRun,
  type Snapshot,
} from './snapshot.js';
import type { SearchResult } from './types.js';

/** The vectors of one hybrid search (see `ToolCatalog.search`). */
export type SearchVectors = {
  /** The query's vector, from the same model as the tools' vectors. */
  query: ArrayLike<number>;
  /**
   * A tool's unit-length vector by qualified name, or `undefined` when it has none yet (it
   * then ranks by its BM25 score alone). Vectors of another dimension than the query's are
   * ignored. The catalog remembers what one function answered for one catalog state: pass
   * a new function when the vectors change.
   */
  tool: (name: string) => ArrayLike<number> | undefined;
  /** Fusion knobs; unset ones take {@link DEFAULT_FUSION}. */
  fusion?: Partial<Fusion>;
};

/** Lexical candidates a hybrid search fuses at most (BM25's best, before any cutoff). */
const LEXICAL_POOL = 50;

/** Checks `search`'s `vectors` option; returns the fusion knobs. */
export function checkSearchVectors(vectors: SearchVectors): Fusion {
  const problem =
    typeof vectors !== 'object' || vectors === null
      ? 'must be an object { query, tool, fusion? }'
      : !Array.isArray(vectors.query) && !ArrayBuffer.isView(vectors.query)
        ? '"query" must be an array of numbers'
        : typeof vectors.tool !== 'function'
          ? '"tool" must be a function from a tool name to its vector'
          : undefined;
  if (problem !== undefined)
    throw invalidArgument(`search: "vectors" ${problem}.`);
  const fusion = { ...DEFAULT_FUSION, ...vectors.fusion };
  if (!(fusion.weight >= 0 && fusion.weight <= 1))
    throw invalidArgument(
      `search: "vectors.fusion.weight" must be a number from 0 to 1, got ${String(fusion.weight)}.`,
    );
  return fusion;
}

/** The tools' vectors of `dimensions` as one float32 matrix and quantized, once per lookup function, state and dimension. */
function vectorMatrix(
  snapshot: Snapshot,
  tool: SearchVectors['tool'],
  dimensions: number,
): VectorMatrix {
  let byDimensions = snapshot.vectorMatrices.get(tool);
  if (byDimensions === undefined) {
    byDimensions = new Map();
    snapshot.vectorMatrices.set(tool, byDimensions);
  }
  const known = byDimensions.get(dimensions);
  if (known !== undefined) return known;
  const rows: (Float32Array | undefined)[] = new Array(snapshot.size);
  const exact = new Float32Array(snapshot.size * dimensions);
  const quantized = new QuantizedRows({ size: snapshot.size, dimensions });
  for (let position = 0; position < snapshot.size; position += 1) {
    const vector = tool(snapshot.nameAt(position));
    if (vector === undefined || vector.length !== dimensions) continue;
    const row = exact.subarray(
      position * dimensions,
      (position + 1) * dimensions,
    );
    row.set(vector);
    if (!row.every(Number.isFinite)) continue;
    rows[position] = row;
    quantized.setRow(position, row);
  }
  const built = { rows, exact, quantized };
  byDimensions.set(dimensions, built);
  return built;
}

/** `query` times the row of `matrix` at `offset`, four products a step. */
function dotProduct(
  query: Float32Array,
  matrix: Float32Array,
  offset: number,
): number {
  const dimensions = query.length;
  let first = 0;
  let second = 0;
  let third = 0;
  let fourth = 0;
  let dimension = 0;
  for (; dimension + 3 < dimensions; dimension += 4) {
    const row = offset + dimension;
    first += (query[dimension] as number) * (matrix[row] as number);
    second += (query[dimension + 1] as number) * (matrix[row + 1] as number);
    third += (query[dimension + 2] as number) * (matrix[row + 2] as number);
    fourth += (query[dimension + 3] as number) * (matrix[row + 3] as number);
  }
  for (; dimension < dimensions; dimension += 1)
    first +=
      (query[dimension] as number) * (matrix[offset + dimension] as number);
  return first + second + third + fourth;
}

/** What {@link vectorSide} needs: the tools in scope and the fusion that follows. */
export type VectorSideInput = {
  matrix: VectorMatrix;
  /** The query vector and its length. */
  query: Float32Array;
  norm: number;
  /** Positions of the tools in scope with a vector, ascending. */
  scope: Int32Array;
  /** Marks (1) the positions of the lexical candidates fused. */
  lexical: Uint8Array;
  limit: number;
  fusion: Fusion;
};

/** The exact similarity of the tool at `position` to the query. */
function similarity(input: VectorSideInput, position: number): number {
  const { query } = input;
  return (
    dotProduct(query, input.matrix.exact, position * query.length) / input.norm
  );
}

/** Tools in scope below which every similarity is computed exactly (the pass costs more than it saves). */
const EXACT_BELOW = 256;

/**
 * The vector side of a hybrid search: what {@link interpolate} needs to fuse exactly as if
 * every tool's exact similarity (its float32 vector times the query's, summed in doubles,
 * over the query's length) were given, while computing few of them exactly. The 8-bit
 * pass bounds every similarity; exact values are computed only for the tools the answer
 * can depend on: the lexical candidates, those that may be among the best `limit` of the
 * rest, and those that may be the lowest or highest similarity.
 */
export function vectorSide(input: VectorSideInput): {
  positions: number[];
  similarities: number[];
} {
  const { matrix, query, norm, scope, lexical, limit, fusion } = input;
  const count = scope.length;
  // At weight 0 the order is by position, not similarity.
  if (count < EXACT_BELOW || !(fusion.weight > 0)) {
    const positions = [...scope];
    const similarities = positions.map((position) =>
      similarity(input, position),
    );
    return { positions, similarities };
  }
  const { quantized } = matrix;
  const products = quantized.products(query);
  const lower = new Float64Array(count);
  const upper = new Float64Array(count);
  // The limit-th best lower bound of the tools outside the lexical candidates.
  const best = new Float64Array(Math.max(0, limit)).fill(-Infinity);
  let highestLower = -Infinity;
  let lowestUpper = Infinity;
  for (let slot = 0; slot < count; slot += 1) {
    const position = scope[slot] as number;
    const estimate =
      (products.queryScale *
        (quantized.scales[position] as number) *
        (products.products[position] as number)) /
      norm;
    const bound =
      quantized.productBound(position, products) / norm +
      Math.abs(estimate) * 2 ** -40;
    const low = estimate - bound;
    const high = estimate + bound;
    lower[slot] = low;
    upper[slot] = high;
    if (low > highestLower) highestLower = low;
    if (high < lowestUpper) lowestUpper = high;
    if (
      lexical[position] === 0 &&
      best.length > 0 &&
      low > (best[0] as number)
    ) {
      // Kept ascending; a new one enters at its place and the lowest goes.
      let at = 0;
      while (at + 1 < best.length && (best[at + 1] as number) < low) {
        best[at] = best[at + 1] as number;
        at += 1;
      }
      best[at] = low;
    }
  }
  // Less a margin: interpolated scores of two similarities this close may round equal.
  const threshold =
    best.length === 0
      ? Infinity
      : (best[0] as number) -
        2 ** -50 * (1 + Math.abs(best[0] as number) + Math.abs(lowestUpper));
  const positions: number[] = [];
  const similarities: number[] = [];
  for (let slot = 0; slot < count; slot += 1) {
    const position = scope[slot] as number;
    const high = upper[slot] as number;
    if (
      lexical[position] === 1 ||
      high >= threshold ||
      high >= highestLower ||
      (lower[slot] as number) <= lowestUpper
    ) {
      positions.push(position);
      similarities.push(similarity(input, position));
    }
  }
  return { positions, similarities };
}

/** What one hybrid search needs: the lexical search's options plus the vectors. */
export type HybridRun = SearchRun & {
  vectors: SearchVectors;
  fusion: Fusion;
};

/**
 * BM25 fused with vector similarity: exact names first, the lexical cutoff on the fused
 * scores; the lexical answer when there is no usable vector. Only the hits' tools are made.
 */
export function runHybridSearch(run: HybridRun): SearchResult {
  const { snapshot, vectors, tuning } = run;
  const query = Float32Array.from(vectors.query);
  let norm = 0;
  for (const value of query) norm += value * value;
  norm = Math.sqrt(norm);
  let scope = new Int32Array(0);
  let matrix: VectorMatrix | undefined;
  if (norm > 0 && Number.isFinite(norm) && run.query.trim() !== '') {
    matrix = vectorMatrix(snapshot, vectors.tool, query.length);
    const { filtered, accept } = searchScope(run);
    scope = new Int32Array(snapshot.size);
    let count = 0;
    for (let position = 0; position < snapshot.size; position += 1) {
      if (matrix.rows[position] === undefined) continue;
      if (filtered && !accept(position)) continue;
      scope[count] = position;
      count += 1;
    }
    scope = scope.subarray(0, count);
  }
  if (matrix === undefined || scope.length === 0) return runSearch(run);
  const lexical = rankLexical({
    ...run,
    limit: LEXICAL_POOL,
    tuning: { ...tuning, relativeCutoff: 0 },
  });
  const exact = lexical.exact.slice(0, LEXICAL_POOL);
  const marks = new Uint8Array(snapshot.size);
  for (const position of lexical.positions) marks[position] = 1;
  const vector = vectorSide({
    matrix,
    query,
    norm,
    scope,
    lexical: marks,
    limit: run.limit,
    fusion: run.fusion,
  });
  const fused = interpolate({
    lexical,
    vector,
    limit: run.limit,
    fusion: run.fusion,
  });
  const top = fused.scores[0] ?? 0;
  const positions: number[] = [];
  const scores: number[] = [];
  fused.positions.forEach((position, slot) => {
    const score = fused.scores[slot] as number;
    if (exact.includes(position) || score < top * tuning.relativeCutoff) return;
    positions.push(position);
    scores.push(score);
  });
  return {
    hits: hitsOf({ snapshot, exact, top, positions, scores, limit: run.limit }),
    unmatchedTerms: lexical.unmatchedTerms,
  };
}

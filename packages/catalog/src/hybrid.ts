import { CatalogError } from './errors.js';
import { DEFAULT_FUSION, fuseRankings, type Fusion } from './fusion.js';
import { compactDescription } from './render.js';
import { exactNamesOf } from './prepare.js';
import { CORE_PROFILE, runSearch, type Snapshot } from './snapshot.js';
import { analyzeQuery, normalizeName } from './tokenizer.js';
import type { SearchHit, SearchResult } from './types.js';

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
    throw new CatalogError({
      code: 'INVALID_ARGUMENT',
      message: `search: "vectors" ${problem}.`,
    });
  const fusion = { ...DEFAULT_FUSION, ...vectors.fusion };
  if (fusion.method !== 'interpolate' && fusion.method !== 'rrf')
    throw new CatalogError({
      code: 'INVALID_ARGUMENT',
      message: `search: "vectors.fusion.method" must be "interpolate" or "rrf", got ${JSON.stringify(fusion.method)}.`,
    });
  if (!(fusion.weight >= 0 && fusion.weight <= 1))
    throw new CatalogError({
      code: 'INVALID_ARGUMENT',
      message: `search: "vectors.fusion.weight" must be a number from 0 to 1, got ${String(fusion.weight)}.`,
    });
  if (!(fusion.rrfK > 0))
    throw new CatalogError({
      code: 'INVALID_ARGUMENT',
      message: `search: "vectors.fusion.rrfK" must be a positive number, got ${String(fusion.rrfK)}.`,
    });
  return fusion;
}

/** The tools' vectors of one catalog state, one row per position (`present` 0: none). */
type VectorMatrix = { matrix: Float32Array; present: Uint8Array };

const matrices = new WeakMap<
  SearchVectors['tool'],
  WeakMap<Snapshot, Map<number, VectorMatrix>>
>();

/**
 * The tools' vectors of `dimensions` in one contiguous matrix, built once per lookup
 * function, catalog state and dimension (a vector with a non-finite value counts as none).
 */
function vectorMatrix(
  snapshot: Snapshot,
  tool: SearchVectors['tool'],
  dimensions: number,
): VectorMatrix {
  let bySnapshot = matrices.get(tool);
  if (bySnapshot === undefined) {
    bySnapshot = new WeakMap();
    matrices.set(tool, bySnapshot);
  }
  let byDimensions = bySnapshot.get(snapshot);
  if (byDimensions === undefined) {
    byDimensions = new Map();
    bySnapshot.set(snapshot, byDimensions);
  }
  const known = byDimensions.get(dimensions);
  if (known !== undefined) return known;
  const matrix = new Float32Array(snapshot.size * dimensions);
  const present = new Uint8Array(snapshot.size);
  for (let position = 0; position < snapshot.size; position += 1) {
    const vector = tool(snapshot.toolAt(position).entry.name);
    if (vector === undefined || vector.length !== dimensions) continue;
    const offset = position * dimensions;
    let finite = true;
    for (let d = 0; d < dimensions; d += 1) {
      const value = vector[d] as number;
      if (!Number.isFinite(value)) finite = false;
      matrix[offset + d] = value;
    }
    present[position] = finite ? 1 : 0;
  }
  const built = { matrix, present };
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
  let a = 0;
  let b = 0;
  let c = 0;
  let e = 0;
  let d = 0;
  for (; d + 3 < dimensions; d += 4) {
    a += (query[d] as number) * (matrix[offset + d] as number);
    b += (query[d + 1] as number) * (matrix[offset + d + 1] as number);
    c += (query[d + 2] as number) * (matrix[offset + d + 2] as number);
    e += (query[d + 3] as number) * (matrix[offset + d + 3] as number);
  }
  for (; d < dimensions; d += 1)
    a += (query[d] as number) * (matrix[offset + d] as number);
  return a + b + c + e;
}

/** What one hybrid search needs: the lexical search's options plus the vectors. */
export type HybridRun = Parameters<typeof runSearch>[0] & {
  vectors: SearchVectors;
  fusion: Fusion;
};

/**
 * BM25 fused with vector similarity. Tools named exactly stay first, as in a lexical
 * search; the fused list keeps the lexical search's cutoff (hits below `relativeCutoff` of
 * the best fused score are dropped). Without a usable query vector or any tool vector in
 * scope, the answer is the lexical search's, unchanged.
 */
export function runHybridSearch(run: HybridRun): SearchResult {
  const { snapshot, vectors, tuning } = run;
  const query = Float32Array.from(vectors.query);
  let norm = 0;
  for (const value of query) norm += value * value;
  norm = Math.sqrt(norm);
  let positions = new Int32Array(0);
  let similarities = new Float64Array(0);
  let count = 0;
  if (norm > 0 && Number.isFinite(norm) && run.query.trim() !== '') {
    const { matrix, present } = vectorMatrix(
      snapshot,
      vectors.tool,
      query.length,
    );
    const dimensions = query.length;
    const filtered = run.profile !== undefined || run.target !== undefined;
    positions = new Int32Array(snapshot.size);
    similarities = new Float64Array(snapshot.size);
    for (let position = 0; position < snapshot.size; position += 1) {
      if (present[position] === 0) continue;
      if (filtered) {
        const entry = snapshot.toolAt(position).entry;
        if (run.target !== undefined && entry.target !== run.target) continue;
        if (
          run.profile !== undefined &&
          entry.profile !== run.profile &&
          entry.profile !== CORE_PROFILE
        )
          continue;
      }
      const dot = dotProduct(query, matrix, position * dimensions);
      positions[count] = position;
      similarities[count] = dot / norm;
      count += 1;
    }
  }
  if (count === 0) return runSearch(run);
  const lexical = runSearch({
    ...run,
    limit: LEXICAL_POOL,
    tuning: { ...tuning, relativeCutoff: 0 },
  });
  const exactNames = new Set([normalizeName(run.query)]);
  for (const word of analyzeQuery(run.query))
    if (word.identifier !== undefined) exactNames.add(word.identifier);
  const exact: SearchHit[] = [];
  const lexicalPositions: number[] = [];
  const lexicalScores: number[] = [];
  for (const hit of lexical.hits) {
    const position = snapshot.byName.get(hit.name) as number;
    if (exactNamesOf(snapshot.toolAt(position)).some((n) => exactNames.has(n)))
      exact.push(hit);
    else {
      lexicalPositions.push(position);
      lexicalScores.push(hit.score);
    }
  }
  const fused = fuseRankings({
    lexical: { positions: lexicalPositions, scores: lexicalScores },
    vector: {
      positions: positions.subarray(0, count),
      similarities: similarities.subarray(0, count),
    },
    limit: run.limit,
    fusion: run.fusion,
  });
  const pinned = new Set(exact.map((hit) => hit.name));
  const top = fused.scores[0] ?? 0;
  const hits: SearchHit[] = exact.map((hit, rank) => ({
    ...hit,
    score: top + exact.length - rank,
  }));
  fused.positions.forEach((position, slot) => {
    const score = fused.scores[slot] as number;
    const entry = snapshot.toolAt(position).entry;
    if (pinned.has(entry.name) || score < top * tuning.relativeCutoff) return;
    hits.push({
      name: entry.name,
      target: entry.target,
      description: compactDescription({ description: entry.description }),
      mutating: entry.mutating,
      score,
    });
  });
  return {
    hits: hits.slice(0, run.limit),
    unmatchedTerms: lexical.unmatchedTerms,
  };
}

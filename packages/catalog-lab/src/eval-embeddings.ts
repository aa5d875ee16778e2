import { toolEmbeddingText, type VectorProvider } from '@heretek/catalog';
import type { BenchmarkData } from './evaluate.js';

/** Texts per request when a benchmark is embedded. */
export const EMBEDDING_BATCH = 64;

/** The vectors of a benchmark's tools (by qualified name) and queries (in order). */
export type BenchmarkVectors = {
  tools: ReadonlyMap<string, Float32Array>;
  queries: readonly Float32Array[];
};

/** Embeds `texts` in batches of {@link EMBEDDING_BATCH}, one request at a time. */
async function embedAll(
  provider: VectorProvider,
  texts: readonly string[],
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += EMBEDDING_BATCH)
    vectors.push(
      ...(await provider.embed(texts.slice(start, start + EMBEDDING_BATCH))),
    );
  return vectors;
}

/**
 * Embeds every tool of a benchmark (its {@link toolEmbeddingText}) and every query.
 * Rejects with the provider's error when any request fails.
 */
export async function embedBenchmark(options: {
  data: BenchmarkData;
  provider: VectorProvider;
}): Promise<BenchmarkVectors> {
  const { data, provider } = options;
  const toolVectors = await embedAll(
    provider,
    data.entries.map((entry) => toolEmbeddingText(entry)),
  );
  const queries = await embedAll(
    provider,
    data.queries.map((query) => query.query),
  );
  const tools = new Map<string, Float32Array>();
  data.entries.forEach((entry, index) =>
    tools.set(entry.name, toolVectors[index] as Float32Array),
  );
  return { tools, queries };
}

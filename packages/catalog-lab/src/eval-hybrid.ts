import type { ToolCatalog } from '@heretek/catalog';
import { openAiEmbeddings, type VectorProvider } from '@heretek/catalog';
import { CatalogError } from '@heretek/catalog';
import { embedBenchmark } from './eval-embeddings.js';
import {
  evaluateRankings,
  type BenchmarkData,
  type EvaluationReport,
} from './evaluate.js';
import { DEFAULT_FUSION, type Fusion } from '@heretek/catalog';

/** The hybrid flags of `heretek-catalog-lab eval` as `parseArgs` reads them. */
export const HYBRID_OPTIONS = {
  'embeddings-url': { type: 'string' },
  'embeddings-model': { type: 'string' },
  'fusion-weight': { type: 'string' },
} as const;

/** Their lines in the usage text. */
export const HYBRID_USAGE = `  --embeddings-url <url>
                      OpenAI-compatible embeddings endpoint (base URL; /embeddings is
                      appended): rank with BM25 fused with its vectors as well, and print
                      the hybrid figures beside the lexical ones. The key, if the endpoint
                      needs one, is read from HERETEK_EMBEDDINGS_KEY. An endpoint that fails
                      leaves the rankings lexical (said on stderr; exit code 0)
  --embeddings-model <name>
                      the embedding model (required with --embeddings-url)
  --fusion-weight <w> share of the vector side, 0..1 (default ${DEFAULT_FUSION.weight})
`;

/** The hybrid flags' values. */
export type HybridFlags = {
  'embeddings-url'?: string;
  'embeddings-model'?: string;
  'fusion-weight'?: string;
};

/** A checked hybrid configuration of one eval run. */
export type HybridConfig = {
  url: string;
  provider: VectorProvider;
  fusion: Fusion;
  /** Set once the endpoint failed: the remaining sets are not sent to it. */
  failure?: string;
};

/** One evaluated set, as the hybrid step reads and completes it. */
export type HybridSet = {
  name: string;
  data: BenchmarkData;
  catalog: ToolCatalog;
  limit: number;
  /** The lexical figures. */
  ours: EvaluationReport;
  /** The hybrid rankings and figures, when the endpoint answered for every tool and query. */
  hybrid?: { rankings: string[][]; report: EvaluationReport };
};

/** Reads the hybrid flags; `undefined` when no endpoint is given. Bad values go to `fail` (exit 2). */
export function readHybridFlags(
  values: HybridFlags,
  fail: (message: string, code: number) => never,
): HybridConfig | undefined {
  const url = values['embeddings-url'];
  const model = values['embeddings-model'];
  if (url === undefined) {
    if (model !== undefined || values['fusion-weight'] !== undefined)
      fail(
        '--embeddings-model and --fusion-weight need --embeddings-url <url>.',
        2,
      );
    return undefined;
  }
  if (model === undefined)
    fail(
      '--embeddings-url needs --embeddings-model <name> (the model the endpoint serves).',
      2,
    );
  const weight =
    values['fusion-weight'] === undefined
      ? DEFAULT_FUSION.weight
      : Number(values['fusion-weight']);
  if (values['fusion-weight']?.trim() === '' || !(weight >= 0 && weight <= 1))
    fail(
      `--fusion-weight must be a number from 0 to 1, got ${values['fusion-weight']}.`,
      2,
    );
  const key = process.env.HERETEK_EMBEDDINGS_KEY;
  let provider: VectorProvider;
  try {
    provider = openAiEmbeddings({
      url,
      model,
      ...(key === undefined || key === '' ? {} : { key }),
    });
  } catch (error) {
    fail(
      `--embeddings-url / --embeddings-model: ${(error as Error).message}`,
      2,
    );
  }
  return {
    url,
    provider,
    fusion: { weight },
  };
}

/**
 * Embeds the set's tools and queries and ranks it hybrid. When the endpoint fails, says so
 * on stderr and leaves the set lexical (and later sets are not sent to it).
 */
export async function applyHybrid(
  set: HybridSet,
  config: HybridConfig,
): Promise<void> {
  if (config.failure !== undefined) return;
  let vectors;
  try {
    vectors = await embedBenchmark({
      data: set.data,
      provider: config.provider,
    });
  } catch (error) {
    if (!CatalogError.isInstance(error)) throw error;
    config.failure = error.message;
    process.stderr.write(
      `heretek-catalog-lab: embeddings endpoint failed (${error.message}); the rankings are lexical.\n`,
    );
    return;
  }
  const { data, catalog, limit } = set;
  // One lookup for the whole set: the catalog builds its vector matrix once per lookup.
  const tool = (name: string) => vectors.tools.get(name);
  const rankings = data.queries.map((query, index) =>
    catalog
      .search({
        query: query.query,
        limit,
        vectors: {
          query: vectors.queries[index] as Float32Array,
          tool,
          fusion: config.fusion,
        },
      })
      .hits.map((hit) => data.benchmarkName.get(hit.name) ?? hit.name),
  );
  set.hybrid = {
    rankings,
    report: evaluateRankings({ queries: data.queries, rankings }),
  };
}

const KEYS = ['nDCG@10', 'R@5', 'R@1', 'R@10', 'Hit@1', 'Hit@5'] as const;

/** Prints the hybrid figures of the sets the endpoint answered for, each beside the lexical one. */
export function printHybrid(
  sets: readonly HybridSet[],
  config: HybridConfig,
): void {
  const done = sets.filter((set) => set.hybrid !== undefined);
  if (done.length === 0) {
    process.stdout.write(
      `Hybrid ranking: not measured, the endpoint failed (${config.failure ?? 'no set'}).\n\n`,
    );
    return;
  }
  const { weight } = config.fusion;
  const lines = [
    `Hybrid ranking with ${config.provider.model} at ${config.url} (interpolate, weight ${weight}). Each cell: hybrid / lexical (difference).`,
    '',
    `| set | ${KEYS.join(' | ')} |`,
    `|---|${KEYS.map(() => '---').join('|')}|`,
  ];
  const cell = (hybrid: number, lexical: number): string =>
    `${hybrid.toFixed(3)} / ${lexical.toFixed(3)} (${hybrid >= lexical ? '+' : ''}${(hybrid - lexical).toFixed(3)})`;
  for (const set of done)
    lines.push(
      `| ${set.name} | ${KEYS.map((key) => cell(set.hybrid?.report.metrics[key] ?? 0, set.ours.metrics[key])).join(' | ')} |`,
    );
  if (done.length > 1) {
    const average = (pick: (set: HybridSet) => number): number =>
      done.reduce((sum, set) => sum + pick(set), 0) / done.length;
    lines.push(
      `| macro average | ${KEYS.map((key) =>
        cell(
          average((set) => set.hybrid?.report.metrics[key] ?? 0),
          average((set) => set.ours.metrics[key]),
        ),
      ).join(' | ')} |`,
    );
  }
  const skipped = sets.filter((set) => set.hybrid === undefined);
  if (skipped.length > 0)
    lines.push(
      '',
      `Lexical only (the endpoint failed): ${skipped.map((set) => set.name).join(', ')}.`,
    );
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

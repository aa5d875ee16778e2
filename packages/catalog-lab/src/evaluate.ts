import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolCatalog } from '@heretek/catalog';
import { toolEntryFromMcpTool } from '@heretek/catalog';
import { CatalogError } from '@heretek/catalog';
import { PlainBm25 } from './plain-bm25.js';
import type { ToolEntry } from '@heretek/catalog';

/** One tool of a benchmark `tools.jsonl`. */
export type BenchmarkTool = {
  name: string;
  description?: string;
  inputSchema?: unknown;
  server: string;
};
/** One query of a benchmark `queries.jsonl`. */
export type BenchmarkQuery = {
  id: string;
  query: string;
  relevant: string[];
  relevant_groups?: string[][];
  category?: string;
};

/** Retrieval figures averaged over queries (group-aware ones when the data has `relevant_groups`). */
export type RetrievalMetrics = {
  'R@1': number;
  'R@5': number;
  'R@10': number;
  'nDCG@10': number;
  'Hit@1': number;
  'Hit@5': number;
  'Comp@5': number;
};

/** Result of {@link evaluateRankings}. */
export type EvaluationReport = {
  /** Plain metrics over the flat `relevant` lists (the benchmark's headline figures). */
  metrics: RetrievalMetrics;
  /** Group-aware metrics (any member of a group satisfies it), when the data has groups. */
  groupAware?: Omit<RetrievalMetrics, 'Hit@1' | 'Hit@5'>;
  /** Number of queries. */
  queries: number;
};

function readJsonLines<T>(file: string): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CatalogError({
      code: 'INVALID_ARGUMENT',
      message: `Cannot read ${file}: ${(error as Error).message}`,
      cause: error,
    });
  }
  return text
    .split('\n')
    .map((line, index) => ({ line: line.trim(), index }))
    .filter(({ line }) => line !== '')
    .map(({ line, index }) => {
      try {
        return JSON.parse(line) as T;
      } catch (error) {
        throw new CatalogError({
          code: 'INVALID_ARGUMENT',
          message: `${file}:${index + 1} is not valid JSON: ${(error as Error).message}`,
          cause: error,
        });
      }
    });
}

/**
 * Gateway target for a server name, as a gateway configuration would name it: lower-cased,
 * characters other than letters, digits, `-` and `.` become `-` (a target may not contain
 * `_`), cut to 253 characters.
 */
export function targetFromServerName(server: string): string {
  const target = server
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 253)
    .replace(/-+$/, '');
  return target === '' ? 'server' : target;
}

/** A benchmark loaded as catalog entries, with the mapping back to its own tool names. */
export type BenchmarkData = {
  /** Entries as discovery would build them (qualified `<target>_<tool>` names). */
  entries: ToolEntry[];
  /** Benchmark tool name of each qualified name. */
  benchmarkName: ReadonlyMap<string, string>;
  /** Raw tools, in file order. */
  tools: BenchmarkTool[];
  /** Queries, in file order. */
  queries: BenchmarkQuery[];
};

/**
 * Loads `<directory>/tools.jsonl` and `queries.jsonl`. Each tool goes through
 * {@link toolEntryFromMcpTool} with its server as backend and target (profile `core`), and
 * its bare name is the benchmark name without the `<server>__` prefix.
 */
export function loadBenchmark(options: { directory: string }): BenchmarkData {
  const tools = readJsonLines<BenchmarkTool>(
    join(options.directory, 'tools.jsonl'),
  );
  const queries = readJsonLines<BenchmarkQuery>(
    join(options.directory, 'queries.jsonl'),
  );
  const entries: ToolEntry[] = [];
  const benchmarkName = new Map<string, string>();
  tools.forEach((tool, index) => {
    if (typeof tool.name !== 'string' || typeof tool.server !== 'string') {
      throw new CatalogError({
        code: 'INVALID_ARGUMENT',
        message: `tools.jsonl:${index + 1} needs string "name" and "server".`,
      });
    }
    const prefix = `${tool.server.replace(/[^A-Za-z0-9_-]/g, '_')}__`;
    const separator = tool.name.indexOf('__');
    const bare = tool.name.startsWith(prefix)
      ? tool.name.slice(prefix.length)
      : separator > 0
        ? tool.name.slice(separator + 2)
        : tool.name;
    const target = targetFromServerName(tool.server);
    const entry = toolEntryFromMcpTool({
      backend: { backend: tool.server, target, profile: 'core' },
      tool: {
        name: bare,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
      },
    });
    if (benchmarkName.has(entry.name)) {
      throw new CatalogError({
        code: 'DUPLICATE_TOOL',
        message: `tools.jsonl:${index + 1}: "${tool.name}" maps to "${entry.name}", which an earlier tool already has.`,
      });
    }
    benchmarkName.set(entry.name, tool.name);
    entries.push(entry);
  });
  queries.forEach((query, index) => {
    if (typeof query.query !== 'string' || !Array.isArray(query.relevant)) {
      throw new CatalogError({
        code: 'INVALID_ARGUMENT',
        message: `queries.jsonl:${index + 1} needs a string "query" and an array "relevant".`,
      });
    }
  });
  return { entries, benchmarkName, tools, queries };
}

function ndcg(
  hits: readonly boolean[],
  relevantCount: number,
  k: number,
): number {
  let dcg = 0;
  hits.slice(0, k).forEach((hit, rank) => {
    if (hit) dcg += 1 / Math.log2(rank + 2);
  });
  let ideal = 0;
  for (let rank = 0; rank < Math.min(relevantCount, k); rank += 1)
    ideal += 1 / Math.log2(rank + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

const count = (values: readonly boolean[], k: number): number =>
  values.slice(0, k).filter(Boolean).length;

/** Scores ranked lists (benchmark tool names, best first) against the queries' relevance labels. */
export function evaluateRankings(options: {
  queries: readonly BenchmarkQuery[];
  rankings: readonly (readonly string[])[];
}): EvaluationReport {
  const sums: RetrievalMetrics = {
    'R@1': 0,
    'R@5': 0,
    'R@10': 0,
    'nDCG@10': 0,
    'Hit@1': 0,
    'Hit@5': 0,
    'Comp@5': 0,
  };
  const groupSums = {
    'R@1': 0,
    'R@5': 0,
    'R@10': 0,
    'nDCG@10': 0,
    'Comp@5': 0,
  };
  let grouped = 0;
  options.queries.forEach((query, index) => {
    const ranked = (options.rankings[index] ?? []).slice(0, 10);
    const relevant = new Set(query.relevant);
    const hits = ranked.map((name) => relevant.has(name));
    const size = Math.max(1, relevant.size);
    sums['R@1'] += count(hits, 1) / size;
    sums['R@5'] += count(hits, 5) / size;
    sums['R@10'] += count(hits, 10) / size;
    sums['Hit@1'] += count(hits, 1) > 0 ? 1 : 0;
    sums['Hit@5'] += count(hits, 5) > 0 ? 1 : 0;
    sums['Comp@5'] += count(hits, 5) === relevant.size ? 1 : 0;
    sums['nDCG@10'] += ndcg(hits, relevant.size, 10);
    if (Array.isArray(query.relevant_groups)) {
      grouped += 1;
      const groups = query.relevant_groups.map((group) => new Set(group));
      const done = new Set<number>();
      const groupHits = ranked.map((name) => {
        const found = groups.findIndex(
          (group, groupIndex) => group.has(name) && !done.has(groupIndex),
        );
        if (found >= 0) done.add(found);
        return found >= 0;
      });
      const groupCount = Math.max(1, groups.length);
      groupSums['R@1'] += count(groupHits, 1) / groupCount;
      groupSums['R@5'] += count(groupHits, 5) / groupCount;
      groupSums['R@10'] += count(groupHits, 10) / groupCount;
      groupSums['Comp@5'] += count(groupHits, 5) === groups.length ? 1 : 0;
      groupSums['nDCG@10'] += ndcg(groupHits, groups.length, 10);
    }
  });
  const total = Math.max(1, options.queries.length);
  const metrics = Object.fromEntries(
    Object.entries(sums).map(([key, value]) => [key, value / total]),
  ) as RetrievalMetrics;
  const report: EvaluationReport = { metrics, queries: options.queries.length };
  if (grouped > 0) {
    report.groupAware = Object.fromEntries(
      Object.entries(groupSums).map(([key, value]) => [key, value / grouped]),
    ) as EvaluationReport['groupAware'];
  }
  return report;
}

/** The catalog given, or one built from the set's tools. */
/** What a ranking by the catalog's search takes: the set, the hits per query, and a catalog of the set (built from it when not given). */
type CatalogRanking = {
  data: BenchmarkData;
  limit: number;
  catalog?: ToolCatalog;
};

function catalogFor(options: Omit<CatalogRanking, 'limit'>): ToolCatalog {
  return options.catalog ?? new ToolCatalog({ tools: options.data.entries });
}

/** Rankings of every query by the catalog's search (benchmark tool names, best first). */
export function rankWithCatalog(options: CatalogRanking): string[][] {
  const catalog = catalogFor(options);
  return options.data.queries.map((query) =>
    catalog
      .search({ query: query.query, limit: options.limit })
      .hits.map((hit) => options.data.benchmarkName.get(hit.name) ?? hit.name),
  );
}

/** Rankings of every query by the plain BM25 reference (benchmark tool names, best first). */
export function rankWithPlainBm25(options: {
  data: BenchmarkData;
  limit: number;
}): string[][] {
  const index = new PlainBm25({
    documents: options.data.tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      server: tool.server,
      inputSchema: tool.inputSchema,
    })),
  });
  return options.data.queries.map((query) =>
    index
      .search({ query: query.query, limit: options.limit })
      .map((position) => options.data.tools[position]?.name ?? ''),
  );
}

/**
 * Reads a usage log in the `queries.jsonl` format (`{"id","query","relevant":[names]}` per
 * line; names as in the benchmark's tools.jsonl).
 */
export function loadUsageLog(options: { file: string }): BenchmarkQuery[] {
  const lines = readJsonLines<BenchmarkQuery>(options.file);
  lines.forEach((line, index) => {
    if (typeof line.query !== 'string' || !Array.isArray(line.relevant)) {
      throw new CatalogError({
        code: 'INVALID_ARGUMENT',
        message: `${options.file}:${index + 1} needs a string "query" and an array "relevant".`,
      });
    }
  });
  return lines;
}

/**
 * Records each logged request, through the public `ToolCatalog.recordUse`, for each of its
 * relevant tools. Returns how many uses were recorded and how many named a tool the
 * benchmark does not have (skipped).
 */
export function replayUsage(options: {
  catalog: ToolCatalog;
  data: BenchmarkData;
  log: readonly BenchmarkQuery[];
}): { recorded: number; skipped: number } {
  const qualified = new Map<string, string>();
  for (const [name, benchmark] of options.data.benchmarkName)
    qualified.set(benchmark, name);
  let recorded = 0;
  let skipped = 0;
  for (const line of options.log)
    for (const relevant of line.relevant) {
      const tool = qualified.get(relevant);
      if (tool === undefined) {
        skipped += 1;
        continue;
      }
      options.catalog.recordUse({ query: line.query, tool });
      recorded += 1;
    }
  return { recorded, skipped };
}

/**
 * Leave-one-out rankings for a set without a separate log: each query is ranked after the
 * other queries of the set were recorded as uses.
 */
export function rankLeaveOneOut(options: CatalogRanking): string[][] {
  const catalog = catalogFor(options);
  const { queries } = options.data;
  return queries.map((query, index) => {
    catalog.loadUsage([]);
    replayUsage({
      catalog,
      data: options.data,
      log: queries.filter((_, other) => other !== index),
    });
    return catalog
      .search({ query: query.query, limit: options.limit })
      .hits.map((hit) => options.data.benchmarkName.get(hit.name) ?? hit.name);
  });
}

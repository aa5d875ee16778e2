#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname, isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ToolCatalog } from '@heretek/catalog';
import { CatalogError } from '@heretek/catalog';
import {
  evaluateRankings,
  loadBenchmark,
  loadUsageLog,
  rankLeaveOneOut,
  rankWithPlainBm25,
  replayUsage,
  type BenchmarkData,
  type EvaluationReport,
} from './index.js';
import {
  applyHybrid,
  HYBRID_OPTIONS,
  HYBRID_USAGE,
  printHybrid,
  readHybridFlags,
  type HybridFlags,
  type HybridSet,
} from './eval-hybrid.js';
import type { SearchTuningOverrides } from '@heretek/catalog';

const USAGE = `Usage: heretek-catalog-lab eval --data <dir> [--data <dir> ...] [--tuning <file.json>]
                            [--ranked <file>] [--limit 10]
                            [--embeddings-url <url> --embeddings-model <name>
                             [--fusion-weight <0..1>]]
       heretek-catalog-lab eval --data <dir> --usage <file> [--usage-limit <n>] [...]
       heretek-catalog-lab eval --data <dir> --usage-leave-one-out [...]

Evaluates the catalog's tool search on benchmark directories, each holding tools.jsonl
({"name","description","inputSchema","server"} per line) and queries.jsonl
({"id","query","relevant":[names],"relevant_groups"?} per line), next to a plain BM25
reference computed on the same data. Prints one row per set and their macro average, with
the search latency (p50/p99) at each set's size.

Options:
  --data <dir>        benchmark directory (required; repeat for several sets)
  --tuning <file>     JSON object of scoring knobs that override the defaults
  --ranked <file>     also write one JSON line per query: {"id","ranked":[tool names]}; with
                      several --data, one file per set: <file> with ".<set>" before its extension
  --limit <n>         hits per query (default 10)
  --usage <file>      a usage log in the queries.jsonl format: each line's query is recorded
                      as a use of each of its relevant tools (ToolCatalog.recordUse) before
                      the queries are ranked; prints the learning curve at 0, 100, 1,000
                      and all lines (one --data only)
  --usage-limit <n>   use only the first n lines of the usage log (the curve stops there)
  --usage-leave-one-out
                      for a set without a log: each query is ranked with the set's other
                      queries recorded as uses
${HYBRID_USAGE}  -h, --help          show this help
`;

/** Exit codes: 0 success, 1 evaluation failed (bad data), 2 bad usage. */
function fail(message: string, code: number): never {
  process.stderr.write(`heretek-catalog-lab: ${message}\n`);
  process.exit(code);
}

function resolveInput(path: string): string {
  if (isAbsolute(path)) return path;
  const fromCwd = resolve(process.cwd(), path);
  const initial = process.env.INIT_CWD;
  if (!existsSync(fromCwd) && initial && existsSync(resolve(initial, path)))
    return resolve(initial, path);
  return fromCwd;
}

function resolveOutput(path: string): string {
  if (isAbsolute(path)) return path;
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

const format = (value: number | undefined): string =>
  value === undefined ? '-' : value.toFixed(3);

const percentile = (sorted: readonly number[], share: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;

type SetResult = HybridSet & {
  name: string;
  data: BenchmarkData;
  ours: EvaluationReport;
  plain: EvaluationReport;
  rankings: string[][];
  p50: number;
  p99: number;
  cpuP99: number;
  buildMs: number;
};

const KEYS = ['nDCG@10', 'R@5', 'R@1', 'R@10', 'Hit@1', 'Hit@5'] as const;

function evaluateSet(
  directory: string,
  tuning: SearchTuningOverrides | undefined,
  limit: number,
): SetResult {
  const data = loadBenchmark({ directory });
  const started = performance.now();
  const catalog = new ToolCatalog({
    tools: data.entries,
    ...(tuning ? { tuning } : {}),
  });
  const buildMs = performance.now() - started;
  const rankings = data.queries.map((query) =>
    catalog
      .search({ query: query.query, limit })
      .hits.map((hit) => data.benchmarkName.get(hit.name) ?? hit.name),
  );
  // Latency: a second pass over the queries, after the first one warmed the code up.
  // On a shared machine the wall clock also counts time the process was not scheduled;
  // the CPU time beside it is the search's own cost.
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (const query of data.queries) {
    const cpu = process.cpuUsage();
    const before = performance.now();
    catalog.search({ query: query.query, limit });
    times.push(performance.now() - before);
    const used = process.cpuUsage(cpu);
    cpuTimes.push((used.user + used.system) / 1000);
  }
  times.sort((left, right) => left - right);
  cpuTimes.sort((left, right) => left - right);
  return {
    name: basename(directory),
    data,
    ours: evaluateRankings({ queries: data.queries, rankings }),
    plain: evaluateRankings({
      queries: data.queries,
      rankings: rankWithPlainBm25({ data, limit }),
    }),
    rankings,
    catalog,
    limit,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    cpuP99: percentile(cpuTimes, 0.99),
    buildMs,
  };
}

function table(results: readonly SetResult[]): string {
  const header = `| set | tools | queries | ${KEYS.join(' | ')} | search p50 / p99 ms (CPU p99) |`;
  const lines = [
    'Each cell: @heretek/catalog / plain BM25 reference.',
    '',
    header,
    `|---|---|---|${KEYS.map(() => '---').join('|')}|---|`,
  ];
  for (const result of results)
    lines.push(
      `| ${result.name} | ${result.data.tools.length} | ${result.data.queries.length} | ${KEYS.map((key) => `${format(result.ours.metrics[key])} / ${format(result.plain.metrics[key])}`).join(' | ')} | ${result.p50.toFixed(3)} / ${result.p99.toFixed(3)} (${result.cpuP99.toFixed(3)}) |`,
    );
  if (results.length > 1) {
    const average = (pick: (result: SetResult) => number): number =>
      results.reduce((sum, result) => sum + pick(result), 0) / results.length;
    lines.push(
      `| macro average | | | ${KEYS.map((key) => `${format(average((result) => result.ours.metrics[key]))} / ${format(average((result) => result.plain.metrics[key]))}`).join(' | ')} | |`,
    );
  }
  const grouped = results.filter(
    (result) => result.ours.groupAware && result.plain.groupAware,
  );
  if (grouped.length > 0) {
    const groupKeys = ['nDCG@10', 'R@5', 'R@1', 'R@10'] as const;
    lines.push(
      '',
      'Group-aware (any tool of a group of same-named tools satisfies it):',
      '',
      `| set | ${groupKeys.join(' | ')} |`,
      `|---|${groupKeys.map(() => '---').join('|')}|`,
    );
    for (const result of grouped)
      lines.push(
        `| ${result.name} | ${groupKeys.map((key) => `${format(result.ours.groupAware?.[key])} / ${format(result.plain.groupAware?.[key])}`).join(' | ')} |`,
      );
  }
  return lines.join('\n');
}

function rankedFile(base: string, set: string, several: boolean): string {
  if (!several) return base;
  const extension = extname(base);
  return `${base.slice(0, base.length - extension.length)}.${set}${extension}`;
}

/** Writes one `{"id","ranked"}` JSON line per query to `file`. */
function writeRankings(
  file: string,
  queries: readonly { id: string }[],
  rankings: readonly string[][],
): void {
  const lines = queries.map((query, index) =>
    JSON.stringify({ id: query.id, ranked: rankings[index] ?? [] }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
}

function readTuning(path: string): SearchTuningOverrides {
  const file = resolveInput(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    fail(`--tuning ${file}: ${(error as Error).message}`, 2);
  }
  try {
    new ToolCatalog({ tuning: parsed as SearchTuningOverrides });
  } catch (error) {
    fail(`--tuning ${file}: ${(error as Error).message}`, 2);
  }
  return parsed as SearchTuningOverrides;
}

type EvalFlags = HybridFlags & {
  data?: string[];
  tuning?: string;
  ranked?: string;
  limit?: string;
  usage?: string;
  'usage-limit'?: string;
  'usage-leave-one-out'?: boolean;
  help?: boolean;
};

/**
 * The flags of `eval`, checked: the result limit and the data directories
 * (which exist). Undefined after `--help` has printed the usage.
 */
function parseEvalArgs(
  args: string[],
): { values: EvalFlags; limit: number; directories: string[] } | undefined {
  let values: EvalFlags;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        data: { type: 'string', multiple: true },
        tuning: { type: 'string' },
        ranked: { type: 'string' },
        limit: { type: 'string' },
        usage: { type: 'string' },
        'usage-limit': { type: 'string' },
        'usage-leave-one-out': { type: 'boolean' },
        ...HYBRID_OPTIONS,
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`, 2);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return undefined;
  }
  if (!values.data || values.data.length === 0)
    fail(`--data <dir> is required.\n\n${USAGE}`, 2);
  const limit = values.limit === undefined ? 10 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    fail(`--limit must be an integer from 1 to 200, got ${values.limit}.`, 2);
  const directories = values.data.map((path) => {
    const directory = resolveInput(path);
    if (!existsSync(directory))
      fail(`data directory ${directory} does not exist.`, 2);
    return directory;
  });
  const names = directories.map((directory) => basename(directory));
  if (values.ranked && new Set(names).size !== names.length)
    fail(
      '--ranked with several --data needs sets with distinct folder names.',
      2,
    );
  return { values, limit, directories };
}

async function runEval(args: string[]): Promise<void> {
  const parsed = parseEvalArgs(args);
  if (parsed === undefined) return;
  const { values, limit, directories } = parsed;
  const tuning = values.tuning ? readTuning(values.tuning) : undefined;
  const hybrid = readHybridFlags(values, fail);
  if (
    values.usage !== undefined ||
    values['usage-limit'] !== undefined ||
    values['usage-leave-one-out']
  ) {
    if (hybrid !== undefined)
      fail(
        '--embeddings-url applies to the plain evaluation, not to --usage or --usage-leave-one-out.',
        2,
      );
    runUsageEval({
      directory: directories[0] as string,
      several: directories.length > 1,
      tuning,
      limit,
      usage: values.usage,
      usageLimit: values['usage-limit'],
      leaveOneOut: values['usage-leave-one-out'] === true,
      ranked: values.ranked,
    });
    return;
  }

  const results = directories.map((directory) =>
    evaluateSet(directory, tuning, limit),
  );
  process.stdout.write(
    `limit ${limit}${values.tuning ? `, tuning ${resolveInput(values.tuning)}` : ', default tuning'}\n\n`,
  );
  process.stdout.write(`${table(results)}\n\n`);
  if (hybrid !== undefined) {
    for (const result of results) await applyHybrid(result, hybrid);
    printHybrid(results, hybrid);
  }
  for (const result of results)
    process.stdout.write(
      `${result.name}: catalog build ${result.buildMs.toFixed(0)} ms (${directories[results.indexOf(result)]})\n`,
    );
  if (values.ranked) {
    const base = resolveOutput(values.ranked);
    for (const result of results) {
      const file = rankedFile(base, result.name, results.length > 1);
      writeRankings(
        file,
        result.data.queries,
        result.hybrid?.rankings ?? result.rankings,
      );
      process.stdout.write(`rankings written to ${file}\n`);
    }
  }
}

type UsageEvalOptions = {
  directory: string;
  several: boolean;
  tuning: SearchTuningOverrides | undefined;
  limit: number;
  usage: string | undefined;
  usageLimit: string | undefined;
  leaveOneOut: boolean;
  ranked: string | undefined;
};

/** Checks the usage flags; returns `--usage-limit` as a number when given. */
function usageLimitOf(options: UsageEvalOptions): number | undefined {
  if (options.several)
    fail('--usage and --usage-leave-one-out take one --data.', 2);
  if (options.leaveOneOut === (options.usage !== undefined))
    fail('give either --usage <file> or --usage-leave-one-out.', 2);
  const usageLimit =
    options.usageLimit === undefined ? undefined : Number(options.usageLimit);
  if (
    usageLimit !== undefined &&
    (!Number.isInteger(usageLimit) || usageLimit < 0)
  )
    fail(
      `--usage-limit must be a non-negative integer, got ${options.usageLimit}.`,
      2,
    );
  if (usageLimit !== undefined && options.leaveOneOut)
    fail('--usage-limit applies to --usage <file> only.', 2);
  return usageLimit;
}

/** Prints the learning-curve table of `eval --usage` with the plain BM25 row under it. */
function printUsageTable(options: {
  data: BenchmarkData;
  directory: string;
  limit: number;
  source: string;
  rows: ReadonlyArray<{ label: string; report: EvaluationReport }>;
}): void {
  const { data, limit, rows } = options;
  const keys = ['nDCG@10', 'R@5', 'R@1', 'R@10', 'Hit@1', 'Hit@5'] as const;
  const plain = evaluateRankings({
    queries: data.queries,
    rankings: rankWithPlainBm25({ data, limit }),
  });
  process.stdout.write(
    `${basename(options.directory)}: ${data.tools.length} tools, ${data.queries.length} queries, limit ${limit}; usage: ${options.source}\n\n`,
  );
  process.stdout.write(
    `| logged uses | ${keys.join(' | ')} |\n|---|${keys.map(() => '---').join('|')}|\n`,
  );
  for (const row of rows)
    process.stdout.write(
      `| ${row.label} | ${keys.map((key) => format(row.report.metrics[key])).join(' | ')} |\n`,
    );
  process.stdout.write(
    `| plain BM25 reference, no usage | ${keys.map((key) => format(plain.metrics[key])).join(' | ')} |\n`,
  );
}

function runUsageEval(options: UsageEvalOptions): void {
  const usageLimit = usageLimitOf(options);
  const data = loadBenchmark({ directory: options.directory });
  const make = (): ToolCatalog =>
    new ToolCatalog({
      tools: data.entries,
      ...(options.tuning ? { tuning: options.tuning } : {}),
    });
  const rows: Array<{ label: string; report: EvaluationReport }> = [];
  let last: string[][] = [];
  const score = (label: string, rankings: string[][]): void => {
    rows.push({
      label,
      report: evaluateRankings({ queries: data.queries, rankings }),
    });
    last = rankings;
  };
  const rank = (catalog: ToolCatalog): string[][] =>
    data.queries.map((query) =>
      catalog
        .search({ query: query.query, limit: options.limit })
        .hits.map((hit) => data.benchmarkName.get(hit.name) ?? hit.name),
    );
  score('0 (no usage)', rank(make()));
  let source = 'leave-one-out (each query ranked with the others as the log)';
  if (options.leaveOneOut) {
    score(
      `${data.queries.length - 1} (leave-one-out)`,
      rankLeaveOneOut({ data, limit: options.limit, catalog: make() }),
    );
  } else {
    const file = resolveInput(options.usage as string);
    if (!existsSync(file)) fail(`usage log ${file} does not exist.`, 2);
    const log = loadUsageLog({ file });
    const end = Math.min(log.length, usageLimit ?? log.length);
    source = `${file}, ${end} of ${log.length} lines`;
    for (const count of [100, 1000, end].filter(
      (count, index, all) =>
        count > 0 && count <= end && all.indexOf(count) === index,
    )) {
      const catalog = make();
      const { skipped } = replayUsage({
        catalog,
        data,
        log: log.slice(0, count),
      });
      score(
        `${count.toLocaleString('en-US')}${count === log.length ? ' (all)' : ''}${skipped > 0 ? `, ${skipped} uses of unknown tools skipped` : ''}`,
        rank(catalog),
      );
    }
  }
  printUsageTable({
    data,
    directory: options.directory,
    limit: options.limit,
    source,
    rows,
  });
  if (options.ranked) {
    const file = resolveOutput(options.ranked);
    writeRankings(file, data.queries, last);
    process.stdout.write(`rankings of the last row written to ${file}\n`);
  }
}

function main(argv: string[]): void {
  const args = argv.filter((arg) => arg !== '--');
  const [command, ...rest] = args;
  if (
    command === undefined ||
    command === '--help' ||
    command === '-h' ||
    command === 'help'
  ) {
    process.stdout.write(USAGE);
    return;
  }
  if (command !== 'eval') fail(`unknown command "${command}".\n\n${USAGE}`, 2);
  runEval(rest).catch((error: unknown) => {
    if (CatalogError.isInstance(error)) fail(error.message, 1);
    throw error;
  });
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
main(process.argv.slice(2));

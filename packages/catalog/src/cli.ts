#!/usr/bin/env node
import { existsSync, writeFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CatalogError } from './errors.js';
import {
  evaluateRankings,
  loadBenchmark,
  rankWithCatalog,
  rankWithPlainBm25,
  type EvaluationReport,
} from './eval.js';
import { VERSION } from './version.js';

const USAGE = `Usage: heretek-catalog eval --data <dir> [--ranked <file>] [--limit 10]

Evaluates the catalog's tool search on a benchmark directory holding tools.jsonl
({"name","description","inputSchema","server"} per line) and queries.jsonl
({"id","query","relevant":[names],"relevant_groups"?} per line), next to a plain BM25
reference computed on the same data.

Options:
  --data <dir>      benchmark directory (required)
  --ranked <file>   also write one JSON line per query: {"id","ranked":[tool names]}
  --limit <n>       hits per query (default 10)
  -h, --help        show this help
  -v, --version     show the version
`;

/** Exit codes: 0 success, 1 evaluation failed (bad data), 2 bad usage. */
function fail(message: string, code: number): never {
  process.stderr.write(`heretek-catalog: ${message}\n`);
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

function table(ours: EvaluationReport, plain: EvaluationReport): string {
  const keys = ['R@1', 'R@5', 'R@10', 'nDCG@10', 'Hit@1', 'Hit@5'] as const;
  const lines = [
    `| search | ${keys.join(' | ')} |`,
    `|---|${keys.map(() => '---').join('|')}|`,
    `| @heretek/catalog | ${keys.map((key) => format(ours.metrics[key])).join(' | ')} |`,
    `| plain BM25 reference | ${keys.map((key) => format(plain.metrics[key])).join(' | ')} |`,
  ];
  if (ours.groupAware && plain.groupAware) {
    const groupKeys = ['R@1', 'R@5', 'R@10', 'nDCG@10'] as const;
    lines.push(
      '',
      'group-aware (any tool of a group of same-named tools satisfies it):',
      '',
    );
    lines.push(
      `| search | ${groupKeys.join(' | ')} |`,
      `|---|${groupKeys.map(() => '---').join('|')}|`,
    );
    lines.push(
      `| @heretek/catalog | ${groupKeys.map((key) => format(ours.groupAware?.[key])).join(' | ')} |`,
    );
    lines.push(
      `| plain BM25 reference | ${groupKeys.map((key) => format(plain.groupAware?.[key])).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function runEval(args: string[]): void {
  let values: {
    data?: string;
    ranked?: string;
    limit?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        data: { type: 'string' },
        ranked: { type: 'string' },
        limit: { type: 'string' },
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
    return;
  }
  if (!values.data) fail(`--data <dir> is required.\n\n${USAGE}`, 2);
  const limit = values.limit === undefined ? 10 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    fail(`--limit must be an integer from 1 to 200, got ${values.limit}.`, 2);
  const directory = resolveInput(values.data);
  if (!existsSync(directory))
    fail(`data directory ${directory} does not exist.`, 2);

  const data = loadBenchmark({ directory });
  const started = performance.now();
  const rankings = rankWithCatalog({ data, limit });
  const elapsed = performance.now() - started;
  const ours = evaluateRankings({ queries: data.queries, rankings });
  const plain = evaluateRankings({
    queries: data.queries,
    rankings: rankWithPlainBm25({ data, limit }),
  });
  process.stdout.write(
    `${data.tools.length} tools, ${data.queries.length} queries, limit ${limit} (${directory})\n\n`,
  );
  process.stdout.write(`${table(ours, plain)}\n\n`);
  process.stdout.write(
    `catalog build + ${data.queries.length} searches: ${elapsed.toFixed(0)} ms\n`,
  );
  if (values.ranked) {
    const file = resolveOutput(values.ranked);
    const lines = data.queries.map((query, index) =>
      JSON.stringify({ id: query.id, ranked: rankings[index] ?? [] }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    process.stdout.write(`rankings written to ${file}\n`);
  }
}

function main(argv: string[]): void {
  const args = argv.filter((arg) => arg !== '--');
  const [command, ...rest] = args;
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
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
  try {
    runEval(rest);
  } catch (error) {
    if (CatalogError.isInstance(error)) fail(error.message, 1);
    throw error;
  }
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
main(process.argv.slice(2));

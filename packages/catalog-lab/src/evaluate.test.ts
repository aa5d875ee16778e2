import { execFileSync, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  evaluateRankings,
  loadBenchmark,
  rankWithCatalog,
  rankLeaveOneOut,
  loadUsageLog,
  replayUsage,
  targetFromServerName,
} from './evaluate.js';
import { ToolCatalog } from '@heretek/catalog';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = resolve(here, '..');
const cli = join(packageRoot, 'dist/cli.js');

const directory = mkdtempSync(join(tmpdir(), 'heretek-catalog-eval-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const tools = [
  {
    name: 'weather__get_forecast',
    description: 'Weather forecast for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
    server: 'weather',
  },
  {
    name: 'weather__get_alerts',
    description: 'Storm and weather alerts.',
    inputSchema: {},
    server: 'weather',
  },
  {
    name: 'my_files__read_file',
    description: 'Read a file.',
    inputSchema: 'not a schema',
    server: 'my_files',
  },
  {
    name: 'Ant_Design__list_components',
    description: '列出组件',
    server: 'Ant Design',
  },
];
const queries = [
  {
    id: 'q1',
    query: 'forecast for Paris',
    relevant: ['weather__get_forecast'],
  },
  {
    id: 'q2',
    query: 'read a file',
    relevant: ['my_files__read_file'],
    relevant_groups: [['my_files__read_file']],
  },
  { id: 'q3', query: 'nothing matches zzz', relevant: ['weather__get_alerts'] },
];
writeFileSync(
  join(directory, 'tools.jsonl'),
  tools.map((tool) => JSON.stringify(tool)).join('\n'),
);
writeFileSync(
  join(directory, 'queries.jsonl'),
  queries.map((query) => JSON.stringify(query)).join('\n'),
);

describe('loadBenchmark', () => {
  it('loads tools as discovery would: target from server, qualified names, mapping back', () => {
    const data = loadBenchmark({ directory });
    expect(data.entries.map((entry) => entry.name)).toEqual([
      'weather_get_forecast',
      'weather_get_alerts',
      'my-files_read_file',
      'ant-design_list_components',
    ]);
    expect(data.benchmarkName.get('my-files_read_file')).toBe(
      'my_files__read_file',
    );
    expect(data.entries[2]?.inputSchema).toEqual({ type: 'object' });
    expect(targetFromServerName('Asset_Price_MCP')).toBe('asset-price-mcp');
    expect(targetFromServerName('__')).toBe('server');
  });
});

describe('evaluateRankings', () => {
  it('computes recall, hits and nDCG as the benchmark defines them', () => {
    const report = evaluateRankings({
      queries: [
        { id: 'a', query: '', relevant: ['x', 'y'] },
        { id: 'b', query: '', relevant: ['z'], relevant_groups: [['z', 'z2']] },
      ],
      rankings: [['n', 'x', 'y'], ['z2']],
    });
    expect(report.metrics['R@1']).toBeCloseTo(0);
    expect(report.metrics['R@5']).toBeCloseTo((1 + 0) / 2);
    expect(report.metrics['Hit@5']).toBeCloseTo(0.5);
    const dcg = 1 / Math.log2(3) + 1 / Math.log2(4);
    const ideal = 1 + 1 / Math.log2(3);
    expect(report.metrics['nDCG@10']).toBeCloseTo(dcg / ideal / 2);
    expect(report.groupAware?.['R@1']).toBeCloseTo(1);
  });

  it('ranks the toy set with the catalog', () => {
    const data = loadBenchmark({ directory });
    const rankings = rankWithCatalog({ data, limit: 10 });
    expect(rankings[0]?.[0]).toBe('weather__get_forecast');
    expect(rankings[1]?.[0]).toBe('my_files__read_file');
    expect(rankings[2]).toEqual([]);
  });
});

describe('heretek-catalog-lab eval', () => {
  it('prints one row per set with plain BM25 beside it and writes the rankings', () => {
    const ranked = join(directory, 'ranked.jsonl');
    const output = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--ranked', ranked, '--limit', '5'],
      { encoding: 'utf8' },
    );
    const set = basename(directory);
    // nDCG@10 then R@5: catalog / plain BM25; then the latency column.
    expect(output).toMatch(
      new RegExp(
        `\\| ${set} \\| 4 \\| 3 \\| 0\\.667 / 0\\.\\d{3} \\| 0\\.667 / `,
      ),
    );
    expect(output).toMatch(/\| [\d.]+ \/ [\d.]+ \([\d.]+\) \|\n/);
    expect(output).not.toMatch(/macro average/);
    const lines = readFileSync(ranked, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; ranked: string[] });
    expect(lines.map((line) => line.id)).toEqual(['q1', 'q2', 'q3']);
    expect(lines[0]?.ranked[0]).toBe('weather__get_forecast');
  });

  it('evaluates several sets with a macro average, one rankings file per set', () => {
    const second = join(directory, 'second');
    mkdirSync(second, { recursive: true });
    for (const file of ['tools.jsonl', 'queries.jsonl'])
      writeFileSync(join(second, file), readFileSync(join(directory, file)));
    const ranked = join(directory, 'many.jsonl');
    const output = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--data', second, '--ranked', ranked],
      { encoding: 'utf8' },
    );
    expect(output).toMatch(/\| second \| 4 \| 3 \| 0\.667 \//);
    expect(output).toMatch(/\| macro average \| \| \| 0\.667 \//);
    expect(
      readFileSync(join(directory, 'many.second.jsonl'), 'utf8'),
    ).toContain('"q1"');
    expect(
      readFileSync(
        join(directory, `many.${basename(directory)}.jsonl`),
        'utf8',
      ),
    ).toContain('"q3"');
  });

  it('applies a tuning file and refuses a bad one', () => {
    const good = join(directory, 'tuning.json');
    writeFileSync(good, JSON.stringify({ relativeCutoff: 0, k1: 0.9 }));
    const output = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--tuning', good],
      { encoding: 'utf8' },
    );
    expect(output).toContain(`tuning ${good}`);
    const bad = join(directory, 'bad-tuning.json');
    writeFileSync(bad, JSON.stringify({ bag: { name: -1 } }));
    const refused = spawnSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--tuning', bad],
      { encoding: 'utf8' },
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/"bag\.name" must be a non-negative number/);
  });

  it('fails clearly on bad usage', () => {
    const missing = spawnSync(process.execPath, [cli, 'eval'], {
      encoding: 'utf8',
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--data <dir> is required/);
    const nowhere = spawnSync(
      process.execPath,
      [cli, 'eval', '--data', join(directory, 'nope')],
      { encoding: 'utf8' },
    );
    expect(nowhere.status).toBe(2);
    const unknown = spawnSync(process.execPath, [cli, 'frobnicate'], {
      encoding: 'utf8',
    });
    expect(unknown.status).toBe(2);
  });
});

describe('learning from use on the benchmark sets', () => {
  it('MetaTool learning curve: floors at 100, 1,000 and all 4,706 logged uses', () => {
    const data = loadBenchmark({
      directory: resolve(packageRoot, 'data/metatool'),
    });
    const log = loadUsageLog({
      file: resolve(packageRoot, 'data/metatool/usage.jsonl'),
    });
    const curve = [0, 100, 1000, log.length].map((count) => {
      const catalog = new ToolCatalog({ tools: data.entries });
      const { recorded, skipped } = replayUsage({
        catalog,
        data,
        log: log.slice(0, count),
      });
      expect(skipped).toBe(0);
      expect(recorded).toBe(count);
      return evaluateRankings({
        queries: data.queries,
        rankings: rankWithCatalog({ data, limit: 10, catalog }),
      }).metrics['nDCG@10'];
    });
    // With no usage the figures are the search's own (floors in search-quality.compute.test.ts).
    expect(curve[0]).toBeGreaterThanOrEqual(0.572);
    expect(curve[1]).toBeGreaterThanOrEqual(curve[0] as number);
    expect(curve[2]).toBeGreaterThanOrEqual(0.69);
    expect(curve[3]).toBeGreaterThanOrEqual(0.83);
  });

  it('LiveMCPBench leave-one-out: each task ranked with the other 94 as the log', () => {
    const data = loadBenchmark({
      directory: resolve(packageRoot, 'data/livemcpbench'),
    });
    const metrics = evaluateRankings({
      queries: data.queries,
      rankings: rankLeaveOneOut({ data, limit: 10 }),
    }).metrics;
    expect(metrics['nDCG@10']).toBeGreaterThanOrEqual(0.564);
    expect(metrics['R@5']).toBeGreaterThanOrEqual(0.552);
  });

  it('heretek-catalog-lab eval --usage prints the learning curve', () => {
    const log = join(directory, 'usage.jsonl');
    writeFileSync(
      log,
      `${JSON.stringify({ id: 'u1', query: 'storm warning', relevant: ['weather__get_alerts'] })}\n`,
    );
    const output = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--usage', log],
      { encoding: 'utf8' },
    );
    expect(output).toMatch(/\| 0 \(no usage\) \| 0\.667 \|/);
    expect(output).toMatch(/\| 1 \(all\) \|/);
    expect(output).toMatch(/plain BM25 reference, no usage/);
    const loo = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--usage-leave-one-out'],
      { encoding: 'utf8' },
    );
    expect(loo).toMatch(/\| 2 \(leave-one-out\) \|/);
    const both = spawnSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--data', directory, '--usage', log],
      { encoding: 'utf8' },
    );
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/take one --data/);
  });
});

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  evaluateRankings,
  loadBenchmark,
  rankWithCatalog,
  rankWithPlainBm25,
  targetFromServerName,
} from './evaluate.js';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = resolve(here, '..');
const livemcpbench = resolve(packageRoot, 'bench/data/livemcpbench');
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

describe('heretek-catalog eval', () => {
  it('prints the figures and writes the rankings', () => {
    const ranked = join(directory, 'ranked.jsonl');
    const output = execFileSync(
      process.execPath,
      [cli, 'eval', '--data', directory, '--ranked', ranked, '--limit', '5'],
      { encoding: 'utf8' },
    );
    expect(output).toMatch(/\| @heretek\/catalog \| 0\.667 \|/);
    expect(output).toMatch(/plain BM25 reference/);
    const lines = readFileSync(ranked, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; ranked: string[] });
    expect(lines.map((line) => line.id)).toEqual(['q1', 'q2', 'q3']);
    expect(lines[0]?.ranked[0]).toBe('weather__get_forecast');
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
    const version = spawnSync(process.execPath, [cli, '--version'], {
      encoding: 'utf8',
    });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('LiveMCPBench regression guard', () => {
  it('keeps its measured figures (nDCG@10 0.433, R@5 0.412) and stays above plain BM25 (0.343, 0.363)', () => {
    const data = loadBenchmark({ directory: livemcpbench });
    const ours = evaluateRankings({
      queries: data.queries,
      rankings: rankWithCatalog({ data, limit: 10 }),
    }).metrics;
    const plain = evaluateRankings({
      queries: data.queries,
      rankings: rankWithPlainBm25({ data, limit: 10 }),
    }).metrics;
    expect(plain['R@5']).toBeCloseTo(0.363, 2);
    expect(plain['nDCG@10']).toBeCloseTo(0.343, 2);
    expect(ours['R@5']).toBeGreaterThan(plain['R@5']);
    expect(ours['nDCG@10']).toBeGreaterThan(plain['nDCG@10'] + 0.04);
    expect(ours['R@10']).toBeGreaterThan(plain['R@10']);
    expect(ours['Hit@1']).toBeGreaterThan(plain['Hit@1']);
    // Floors: the measured figures minus a small margin, so a change that loses ground fails.
    expect(ours['nDCG@10']).toBeGreaterThanOrEqual(0.425);
    expect(ours['R@5']).toBeGreaterThanOrEqual(0.405);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startGloveEndpoint,
  type GloveEndpoint,
} from './__fixtures__/glove.js';
import { evaluateRankings, loadBenchmark } from './evaluate.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const cli = join(packageRoot, 'dist/cli.js');
/** The four development sets: the GloVe figure holds on each. */
const ALL_SETS = ['livemcpbench', 'metatool', 'gorilla-hf', 'seal-tools'];
/** The two smaller sets, enough for what does not depend on the data. */
const SETS = ALL_SETS.slice(0, 2);
const dataOf = (set: string): string => resolve(packageRoot, 'data', set);

const directory = mkdtempSync(join(tmpdir(), 'heretek-catalog-hybrid-'));
let endpoint: GloveEndpoint;
beforeAll(async () => {
  endpoint = await startGloveEndpoint();
});
afterAll(async () => {
  await endpoint.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** Runs `heretek-catalog-lab eval` over `sets`, writing rankings to `<name>.<set>.jsonl`. */
function evaluate(
  name: string,
  extra: readonly string[],
  sets: readonly string[] = SETS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      cli,
      'eval',
      ...sets.flatMap((set) => ['--data', dataOf(set)]),
      '--ranked',
      join(directory, `${name}.jsonl`),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) =>
    child.on('close', (code) => done({ code, stdout, stderr })),
  );
}

const ranked = (name: string, set: string): string =>
  readFileSync(join(directory, `${name}.${set}.jsonl`), 'utf8');

const ndcg = (name: string, set: string): number => {
  const { queries } = loadBenchmark({ directory: dataOf(set) });
  const rankings = ranked(name, set)
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { ranked: string[] }).ranked);
  return evaluateRankings({ queries, rankings }).metrics['nDCG@10'];
};

describe('heretek-catalog-lab eval --embeddings-url', () => {
  beforeAll(async () => {
    const lexical = await evaluate('lexical', [], ALL_SETS);
    expect(lexical.code).toBe(0);
  }, 180_000);

  it('with the GloVe endpoint, is never more than 0.005 below lexical on a set and above it on one', async () => {
    const before = endpoint.requests.length;
    const run = await evaluate(
      'glove',
      ['--embeddings-url', endpoint.url, '--embeddings-model', 'glove-sif'],
      ALL_SETS,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /Hybrid ranking with glove-sif at .*interpolate, weight 0\.3/,
    );
    // Tools and queries of the four sets, in batches of 64.
    const inputs = endpoint.requests
      .slice(before)
      .reduce((sum, request) => sum + request.inputs, 0);
    expect(inputs).toBe(527 + 95 + 199 + 1960 + 907 + 911 + 4076 + 2054);
    expect(endpoint.requests.slice(before).every((r) => r.inputs <= 64)).toBe(
      true,
    );
    const gains = ALL_SETS.map(
      (set) => ndcg('glove', set) - ndcg('lexical', set),
    );
    for (const gain of gains) expect(gain).toBeGreaterThanOrEqual(-0.005);
    expect(Math.max(...gains)).toBeGreaterThan(0);
  }, 180_000);

  it('with an endpoint where nothing listens, exits 0 with the lexical rankings exactly and says so', async () => {
    // The URL of an endpoint that has exited: nothing listens on its port.
    const gone = await startGloveEndpoint();
    await gone.stop();
    const run = await evaluate('down', [
      '--embeddings-url',
      gone.url,
      '--embeddings-model',
      'glove-sif',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /embeddings endpoint failed .*; the rankings are lexical/,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    for (const set of SETS)
      expect(ranked('down', set)).toBe(ranked('lexical', set));
  }, 120_000);

  it('refuses incomplete or bad hybrid flags with exit code 2', async () => {
    const refused = async (extra: string[], message: RegExp) => {
      const run = await evaluate('refused', extra);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
    };
    await refused(
      ['--embeddings-url', endpoint.url],
      /needs --embeddings-model/,
    );
    await refused(['--embeddings-model', 'm'], /need --embeddings-url/);
    await refused(
      [
        '--embeddings-url',
        endpoint.url,
        '--embeddings-model',
        'm',
        '--fusion',
        'interpolate',
      ],
      /Unknown option '--fusion'/,
    );
    await refused(
      [
        '--embeddings-url',
        endpoint.url,
        '--embeddings-model',
        'm',
        '--fusion-weight',
        '1.5',
      ],
      /--fusion-weight must be a number from 0 to 1/,
    );
    await refused(
      ['--embeddings-url', 'ftp://x', '--embeddings-model', 'm'],
      /http or https/,
    );
  }, 120_000);
});

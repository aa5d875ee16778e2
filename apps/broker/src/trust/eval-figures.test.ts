import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const brokerRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);

async function evaluate(script: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [script, '--json'], {
    cwd: brokerRoot,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('injection rule figures (eval/)', () => {
  it('flag at most 1 % of the 760 real tools of LiveMCPBench, MetaTool and the seed', async () => {
    const figures = await evaluate('eval/flag-rate.mjs');
    expect(figures.tools).toBe(760);
    expect(figures.rate as number).toBeLessThanOrEqual(0.01);
  });

  it('flag the poisoned descriptions they are written for', async () => {
    const figures = await evaluate('eval/attack-recall.mjs');
    expect(figures.attacks).toBe(26);
    expect(figures.flagged as number).toBeGreaterThanOrEqual(25);
  });

  it('meet the targets on MSB, an attack set written elsewhere', async () => {
    type Tally = { total: number; flagged: number; rate: number };
    const figures = (await evaluate('eval/msb.mjs')) as Record<string, Tally>;
    expect(figures.descriptionAttacks!.total).toBe(144);
    expect(figures.descriptionAttacks!.rate).toBeGreaterThanOrEqual(0.8);
    expect(figures.resultAttacks!.total).toBe(68);
    expect(figures.resultAttacks!.rate).toBeGreaterThanOrEqual(0.8);
    expect(figures.cleanTwins!.total).toBe(18);
    expect(figures.cleanTwins!.rate).toBeLessThanOrEqual(0.01);
    expect(figures.cleanResults!.total).toBe(4);
    expect(figures.cleanResults!.flagged).toBe(0);
    expect(figures.realTools!.total).toBe(760);
    expect(figures.realTools!.rate).toBeLessThanOrEqual(0.01);
  });
});

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

type Tally = { total: number; flagged: number; rate: number };
type Figures = {
  shippedIsChosen: boolean;
  attackSets: Array<{ set: string; heldOut: Tally; shipped: Tally }>;
  cleanSets: Array<{
    set: string;
    real: boolean;
    heldOut: Tally;
    shipped: Tally;
  }>;
  realToolsHeldOut: Tally;
  resultGuard: {
    msb: { all: Tally; honest: Tally };
    guardbench: { injections: Tally; honest: Tally };
    realDescriptionsAsResults: Tally;
  };
};

async function evaluate(): Promise<Figures> {
  const { stdout } = await run(
    process.execPath,
    ['eval/select-detector.mjs', '--json'],
    { cwd: brokerRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as Figures;
}

describe('detector figures (eval/select-detector.mjs)', () => {
  it('ship the detector chosen on every set, and hold on each set left out of the choice', async () => {
    const figures = await evaluate();
    expect(figures.shippedIsChosen).toBe(true);
    const attack = new Map(figures.attackSets.map((row) => [row.set, row]));
    expect(attack.get('MSB')!.heldOut.total).toBe(144);
    expect(attack.get('mcp-guardbench')!.heldOut.total).toBe(8);
    expect(attack.get('attacks.jsonl')!.heldOut.total).toBe(26);
    for (const row of figures.attackSets) {
      expect(row.heldOut.rate, row.set).toBeGreaterThanOrEqual(0.8);
    }
    expect(figures.realToolsHeldOut.total).toBe(760);
    expect(figures.realToolsHeldOut.rate).toBeLessThanOrEqual(0.01);
    for (const row of figures.cleanSets) {
      expect(row.heldOut.rate, row.set).toBeLessThanOrEqual(0.01);
      expect(row.shipped.rate, row.set).toBeLessThanOrEqual(0.01);
    }
    const guard = figures.resultGuard;
    expect(guard.msb.all.total).toBe(68);
    expect(guard.msb.all.flagged).toBeGreaterThanOrEqual(58);
    expect(guard.msb.honest).toMatchObject({ total: 4, flagged: 0 });
    expect(guard.guardbench.injections.total).toBe(12);
    expect(guard.guardbench.injections.rate).toBeGreaterThanOrEqual(0.8);
    expect(guard.guardbench.honest).toMatchObject({ total: 10, flagged: 0 });
    expect(guard.realDescriptionsAsResults.rate).toBeLessThanOrEqual(0.01);
  }, 120_000);
});

import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { SEED_TOOLS } from './entries.js';
import { INDEX_PART_VERSION, type BackendIndexPart } from './index-part.js';
import { codeOf } from './__fixtures__/error-code.js';

const QUERIES = [
  'android adb install apk',
  'decompile function ghidra',
  'take a screenshot of the page',
  'list_devices',
];

function seedTargets(): string[] {
  return [...new Set(SEED_TOOLS.map((tool) => tool.target))];
}

function results(catalog: ToolCatalog): unknown[] {
  return QUERIES.map((query) => catalog.search({ query, limit: 20 }));
}

/** Every target's part, through JSON as a file would carry it. */
function savedParts(catalog: ToolCatalog): unknown[] {
  return seedTargets().map(
    (target) =>
      JSON.parse(JSON.stringify(catalog.exportBackend(target))) as unknown,
  );
}

describe('exportBackend / importBackends', () => {
  it('restores a catalog that answers every search as the original does', () => {
    const original = ToolCatalog.fromSeed();
    const restored = new ToolCatalog();
    restored.importBackends(savedParts(original));
    expect(restored.size).toBe(original.size);
    expect(restored.list().map((entry) => entry.name)).toEqual(
      original.list().map((entry) => entry.name),
    );
    expect(results(restored)).toEqual(results(original));
    expect(original.exportBackend('no-such-target')).toBeUndefined();
  });

  it('refuses corrupt, foreign and inconsistent parts, and changes nothing', () => {
    const original = ToolCatalog.fromSeed();
    const good = savedParts(original);
    const catalog = new ToolCatalog();
    const edit = (change: (part: BackendIndexPart) => void): (() => void) => {
      const parts = JSON.parse(JSON.stringify(good)) as BackendIndexPart[];
      change(parts[1] as BackendIndexPart);
      return () => catalog.importBackends(parts);
    };
    expect(codeOf(() => catalog.importBackends([42]))).toBe(
      'INVALID_INDEX_PART',
    );
    expect(
      codeOf(
        edit((part) => {
          part.version = INDEX_PART_VERSION + 1;
        }),
      ),
    ).toBe('INDEX_PART_VERSION');
    expect(
      codeOf(
        edit((part) => {
          part.catalogVersion = '0.0.1-other';
        }),
      ),
    ).toBe('INDEX_PART_VERSION');
    // A changed term without a matching digest: corrupt.
    expect(
      codeOf(
        edit((part) => {
          part.tools[0]?.fields.description.push('extra');
        }),
      ),
    ).toBe('INVALID_INDEX_PART');
    // Terms that disagree with the entry, digest recomputed: still refused.
    expect(
      codeOf(
        edit((part) => {
          const tool = part.tools[0];
          if (tool) tool.fields.name = ['other'];
          part.digest = 'x';
        }),
      ),
    ).toBe('INVALID_INDEX_PART');
    expect(
      codeOf(() =>
        catalog.importBackends([good[0], JSON.parse(JSON.stringify(good[0]))]),
      ),
    ).toBe('INVALID_INDEX_PART');
    expect(catalog.size).toBe(0);
  });
});

describe('replaceBackends', () => {
  it('applies many listings in one call like one replaceBackend after another', () => {
    const stepwise = new ToolCatalog();
    const batched = new ToolCatalog();
    const listings = new Map(
      seedTargets().map((target) => [
        target,
        SEED_TOOLS.filter((tool) => tool.target === target),
      ]),
    );
    for (const [target, tools] of listings)
      stepwise.replaceBackend(target, tools);
    batched.replaceBackends(listings);
    expect(batched.list()).toEqual(stepwise.list());
    expect(results(batched)).toEqual(results(stepwise));
  });

  it('checks every listing before changing anything', async () => {
    const catalog = ToolCatalog.fromSeed();
    const bad = new Map([
      ['adb', SEED_TOOLS.filter((tool) => tool.target === 'adb')],
      ['ghidra', SEED_TOOLS.filter((tool) => tool.target === 'adb')],
    ]);
    expect(codeOf(() => catalog.replaceBackends(bad))).toBe('INVALID_TOOL');
    await expect(catalog.replaceBackendsAsync(bad)).rejects.toThrow(
      /belongs to target "adb"/,
    );
    expect(catalog.list()).toEqual(ToolCatalog.fromSeed().list());
  });
});

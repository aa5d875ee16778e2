import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
import { CatalogError } from './errors.js';
import type { Backend, ToolEntry } from './types.js';
import { codeOf } from './__fixtures__/error-code.js';

const adb: Backend = {
  backend: 'iksnerd/adb-mcp',
  target: 'adb',
  profile: 'android',
};

function many(count: number, prefix: string): ToolEntry[] {
  return Array.from({ length: count }, (_, index) =>
    toolEntryFromMcpTool({
      backend: adb,
      tool: {
        name: `${prefix}_${index}`,
        description: `Android device action number ${index} over adb.`,
      },
    }),
  );
}

describe('replaceBackendAsync', () => {
  it('lets searches run while it prepares, and they see the old or the new catalog, never a mix', async () => {
    const catalog = ToolCatalog.fromSeed();
    const oldNames = new Set(
      SEED_TOOLS.filter((tool) => tool.target === 'adb').map(
        (tool) => tool.name,
      ),
    );
    const replacement = many(1500, 'fresh');
    const newNames = new Set(replacement.map((tool) => tool.name));
    const seen: Array<'old' | 'new'> = [];
    let finished = false;
    const job = catalog.replaceBackendAsync('adb', replacement).then(() => {
      finished = true;
    });
    while (!finished) {
      const hits = catalog
        .search({ query: 'android adb device', target: 'adb', limit: 50 })
        .hits.map((hit) => hit.name);
      const allOld = hits.every((name) => oldNames.has(name));
      const allNew = hits.every((name) => newNames.has(name));
      expect(allOld || allNew).toBe(true);
      expect([34, 34 - 3 + 1500]).toContain(catalog.size);
      seen.push(allOld ? 'old' : 'new');
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await job;
    expect(seen[0]).toBe('old');
    expect(seen.length).toBeGreaterThan(1);
    expect(catalog.size).toBe(34 - 3 + 1500);
    expect(catalog.get('adb_fresh_7')).toBeDefined();
    expect(catalog.get('adb_tap')).toBeUndefined();
  });

  it('applies a batch of backends in one swap: searches in between see all of the old catalog or all of the new', async () => {
    const catalog = ToolCatalog.fromSeed();
    const targets = Array.from(
      { length: 40 },
      (_, index) => `android-${index}`,
    );
    const listings = new Map(
      targets.map((target) => [
        target,
        many(50, 'device').map((entry) => ({
          ...entry,
          target,
          name: `${target}_${entry.tool}`,
        })),
      ]),
    );
    let finished = false;
    const job = catalog.replaceBackendsAsync(listings).then(() => {
      finished = true;
    });
    let searchesDuring = 0;
    while (!finished) {
      const hits = catalog.search({
        query: 'android device action',
        limit: 200,
      });
      const fresh = hits.hits.filter((hit) =>
        hit.target.startsWith('android-'),
      );
      expect([34, 34 + 40 * 50]).toContain(catalog.size);
      expect(fresh.length > 0).toBe(catalog.size > 34);
      if (catalog.size === 34) searchesDuring += 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await job;
    expect(searchesDuring).toBeGreaterThan(1);
    expect(catalog.size).toBe(34 + 40 * 50);
    expect(catalog.get('android-39_device_49')).toBeDefined();
  });

  it('applies calls in order and rejects bad input before changing anything', async () => {
    const catalog = ToolCatalog.fromSeed();
    const first = catalog.replaceBackendAsync('adb', many(10, 'first'));
    const second = catalog.replaceBackendAsync('adb', many(2, 'second'));
    await Promise.all([first, second]);
    expect(
      catalog
        .list()
        .filter((tool) => tool.target === 'adb')
        .map((tool) => tool.tool),
    ).toEqual(['second_0', 'second_1']);
    const duplicate = [...many(1, 'dup'), ...many(1, 'dup')];
    await expect(
      catalog.replaceBackendAsync('adb', duplicate),
    ).rejects.toSatisfy(
      (error) =>
        CatalogError.isInstance(error) && error.code === 'DUPLICATE_TOOL',
    );
    expect(catalog.size).toBe(34 - 3 + 2);
  });
});

describe('replaceBackend keeps order and reuses prepared tools', () => {
  it('keeps the replaced target where it was', () => {
    const catalog = ToolCatalog.fromSeed();
    const before = catalog.list().map((tool) => tool.target);
    catalog.replaceBackend(
      'ghidra',
      SEED_TOOLS.filter((tool) => tool.target === 'ghidra').map((tool) => ({
        ...tool,
        source: 'discovered' as const,
      })),
    );
    expect(catalog.list().map((tool) => tool.target)).toEqual(before);
    expect(catalog.get('ghidra_decompile_function')?.source).toBe('discovered');
  });

  it('gives the same ranking after a rediscovery of equal tools', () => {
    const catalog = ToolCatalog.fromSeed();
    const before = catalog.search({ query: 'decompile function at address' });
    for (const target of new Set(SEED_TOOLS.map((tool) => tool.target))) {
      catalog.replaceBackend(
        target,
        SEED_TOOLS.filter((tool) => tool.target === target).map((tool) => ({
          ...tool,
        })),
      );
    }
    expect(catalog.search({ query: 'decompile function at address' })).toEqual(
      before,
    );
  });

  it('returns a list that cannot be changed from outside', () => {
    const catalog = ToolCatalog.fromSeed();
    expect(() => (catalog.list() as ToolEntry[]).pop()).toThrow();
    expect(catalog.size).toBe(34);
  });
});

describe('replaceBackends', () => {
  const targets = [...new Set(SEED_TOOLS.map((tool) => tool.target))];
  const queries = [
    'android adb install apk',
    'decompile function ghidra',
    'take a screenshot of the page',
    'list_devices',
  ];
  const results = (catalog: ToolCatalog): unknown[] =>
    queries.map((query) => catalog.search({ query, limit: 20 }));

  it('applies many listings in one call like one replaceBackend after another', () => {
    const stepwise = new ToolCatalog();
    const batched = new ToolCatalog();
    const listings = new Map(
      targets.map((target) => [
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

import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { benchmarkSet } from './__fixtures__/benchmark-set.js';
import { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
import {
  readSavedCatalog,
  restoreSavedCatalog,
  type SavedCatalogHeader,
  type SavedCatalogStream,
} from './saved-catalog.js';
import type { ToolEntry } from './types.js';
import { VERSION } from './version.js';
import { searchesDuring } from './__fixtures__/searches-during.js';
import { targetCopies } from './__fixtures__/target-copies.js';
import { SavedTools } from './saved-tools.js';

const SETS = ['livemcpbench', 'metatool'].map((name) => ({
  name,
  data: benchmarkSet(name),
}));
const LIVE = (SETS[0] as (typeof SETS)[number]).data;

function keysOf(catalog: ToolCatalog): Map<string, string> {
  return new Map(
    catalog.list().map((entry) => [entry.target, `key-${entry.target}`]),
  );
}

/** Every query of a set, answered by `catalog`. */
function answers(
  catalog: ToolCatalog,
  queries: readonly { query: string }[],
): unknown[] {
  return queries.map(({ query }) => catalog.search({ query, limit: 20 }));
}

/** A saved catalog as a file keeps it: its header (through JSON) and its bytes. */
type Saved = { header: SavedCatalogHeader; bytes: Uint8Array };

/** The header and bytes of a streamed saved catalog, and how many pieces came. */
async function streamed(
  stream: SavedCatalogStream,
): Promise<{ saved: Saved; pieces: number }> {
  const pieces: Buffer[] = [];
  for await (const piece of stream.chunks()) {
    expect(piece.length).toBeLessThanOrEqual(1 << 20);
    // Copied: each piece is a view of one buffer, reused for the next.
    pieces.push(Buffer.from(piece));
  }
  const header = JSON.parse(JSON.stringify(stream.header)) as Saved['header'];
  const bytes = new Uint8Array(Buffer.concat(pieces));
  return { saved: { header, bytes }, pieces: pieces.length };
}

/** The saved form of `catalog`'s targets of `keys`, whole. */
async function save(
  catalog: ToolCatalog,
  keys: ReadonlyMap<string, string>,
): Promise<Saved> {
  return (await streamed(await catalog.saveCatalogStream(keys))).saved;
}

/** The code a restore of `bytes` into `catalog` rejects with (`undefined` when it restores). */
async function refusedCode(
  catalog: ToolCatalog,
  bytes: unknown,
  options?: object,
): Promise<string | undefined> {
  try {
    await catalog.restoreCatalogAsync(bytes as Saved, options);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe.each(SETS)('a saved catalog of $name', ({ data }) => {
  const cold = new ToolCatalog({ tools: data.entries });
  let saved: Saved;
  beforeAll(async () => {
    saved = await save(cold, keysOf(cold));
  });

  it('restores a catalog that answers every query as the cold build does', async () => {
    const restored = new ToolCatalog();
    expect(await restored.restoreCatalogAsync(saved)).toEqual({
      restored: [...keysOf(cold).keys()],
      dropped: [],
    });
    expect(restored.list()).toEqual(cold.list());
    expect(answers(restored, data.queries)).toEqual(
      answers(cold, data.queries),
    );
    // Saved again, the restored catalog writes the same bytes.
    expect(await save(restored, keysOf(cold))).toEqual(saved);
  });

  it('keeps only the targets the caller accepts, with the statistics of a build of those', async () => {
    const targets = [...keysOf(cold).keys()];
    const gone = new Set(targets.filter((_, index) => index % 3 === 1));
    const restored = new ToolCatalog();
    const seen: string[] = [];
    const result = await restored.restoreCatalogAsync(saved, {
      keep: (target, key, info) => {
        seen.push(`${target}:${key}:${info.tools}`);
        return !gone.has(target);
      },
    });
    expect(seen).toEqual(
      targets.map(
        (target) =>
          `${target}:key-${target}:${cold.list().filter((entry) => entry.target === target).length}`,
      ),
    );
    expect(result.dropped).toEqual([...gone]);
    expect(result.restored).toEqual(targets.filter((t) => !gone.has(t)));
    const rest = new ToolCatalog({
      tools: data.entries.filter((entry) => !gone.has(entry.target)),
    });
    expect(restored.list()).toEqual(rest.list());
    expect(restored.list().some((entry) => gone.has(entry.target))).toBe(false);
    expect(answers(restored, data.queries)).toEqual(
      answers(rest, data.queries),
    );
  });

  it('admits, once decoded, only the targets the caller admits, with the statistics of a build of those', async () => {
    const targets = [...keysOf(cold).keys()];
    const gone = new Set(targets.filter((_, index) => index % 3 === 1));
    const first = targets[0] as string;
    const restored = new ToolCatalog();
    // A thenable: the restore calls its `then` when it awaits the admission.
    let admit: ((decide: (target: string) => boolean) => void) | undefined;
    const admission = {
      then(resolve: (decide: (target: string) => boolean) => void) {
        admit = resolve;
      },
    } as unknown as Promise<(target: string) => boolean>;
    const result = restored.restoreCatalogAsync(saved, {
      keep: (target) => target !== first,
      admit: admission,
    });
    // Decoded and waiting for the admission: nothing is swapped in yet.
    await expect.poll(() => admit).toBeDefined();
    expect(restored.size).toBe(0);
    if (admit === undefined) throw new Error('not awaited');
    admit((target) => !gone.has(target));
    const kept = targets.filter((t) => t !== first && !gone.has(t));
    expect(await result).toEqual({
      restored: kept,
      dropped: [first, ...targets.filter((t) => t !== first && gone.has(t))],
    });
    const rest = new ToolCatalog({
      tools: data.entries.filter((entry) => kept.includes(entry.target)),
    });
    expect(restored.list()).toEqual(rest.list());
    expect(answers(restored, data.queries)).toEqual(
      answers(rest, data.queries),
    );
  });
});

describe('a saved catalog', () => {
  const cold = new ToolCatalog({ tools: LIVE.entries });
  const keys = keysOf(cold);
  const targets = [...keys.keys()];
  let saved: Saved;
  beforeAll(async () => {
    saved = await save(cold, keys);
  });

  it('says its targets, keys and tools in its header', async () => {
    const info = saved.header;
    expect(info.catalogVersion).toBe(VERSION);
    expect(info.counts.tools).toBe(cold.size);
    expect(info.targets.map((target) => target.target)).toEqual(targets);
    const first = targets[0] as string;
    const tools = cold.list().filter((entry) => entry.target === first);
    expect(info.targets[0]).toEqual({
      target: first,
      key: `key-${first}`,
      tools: tools.length,
      backends: [...new Set(tools.map((entry) => entry.backend))],
      profiles: ['core'],
    });
    // Only the targets given keys are saved (targets without tools are left out).
    const two = await save(
      cold,
      new Map([
        [targets[2] as string, 'b'],
        ['no-such-target', 'c'],
        [targets[1] as string, 'a'],
      ]),
    );
    expect(two.header.targets.map(({ target, key }) => [target, key])).toEqual([
      [targets[1], 'a'],
      [targets[2], 'b'],
    ]);
    await expect(
      cold.saveCatalogStream(
        new Map([['x', 1]]) as unknown as Map<string, string>,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('restores the same from an odd offset of a larger buffer, and into a catalog that has tools', async () => {
    // A Buffer, as a file is read (its `slice` is a view, not a copy).
    const file = Buffer.alloc(saved.bytes.length + 3);
    file.set(saved.bytes, 3);
    const shifted = new ToolCatalog();
    await shifted.restoreCatalogAsync({
      header: saved.header,
      bytes: file.subarray(3),
    });
    expect(await save(shifted, keys)).toEqual(saved);
    // A catalog with other tools of one saved target and a target of its own: the saved
    // target is replaced in place, the other stays.
    const first = targets[0] as string;
    const own: ToolEntry = {
      ...(cold.list()[0] as ToolEntry),
      target: 'own',
      name: `own_${(cold.list()[0] as ToolEntry).tool}`,
    };
    const mixed = new ToolCatalog({
      tools: [
        own,
        ...cold.list().filter((entry) => entry.target === targets[1]),
      ],
    });
    await mixed.restoreCatalogAsync(saved, {
      keep: (target) => target !== first,
    });
    const expected = new ToolCatalog({
      tools: [
        own,
        ...cold.list().filter((entry) => entry.target === targets[1]),
        ...cold
          .list()
          .filter(
            (entry) => entry.target !== first && entry.target !== targets[1],
          ),
      ],
    });
    expect(mixed.list()).toEqual(expected.list());
    expect(answers(mixed, LIVE.queries)).toEqual(
      answers(expected, LIVE.queries),
    );
  });

  it('ranks as a cold build when the restoring catalog weighs the fields otherwise', async () => {
    const tuning = { bag: { description: 2, parameterText: 0.5 } };
    const restored = new ToolCatalog({ tuning });
    await restored.restoreCatalogAsync(saved);
    const rebuilt = new ToolCatalog({ tools: LIVE.entries, tuning });
    expect(answers(restored, LIVE.queries)).toEqual(
      answers(rebuilt, LIVE.queries),
    );
  });

  it('is refused when corrupt, truncated, foreign or inconsistent, and nothing changes', async () => {
    const catalog = ToolCatalog.fromSeed();
    const before = catalog.list();
    const refused = (bad: unknown): Promise<string | undefined> =>
      refusedCode(catalog, bad);
    const { header, bytes } = saved;
    await expect(
      catalog.restoreCatalogAsync({
        header,
        bytes: bytes.subarray(0, bytes.length - 1),
      }),
    ).rejects.toThrow(
      /restoreCatalogAsync: its bytes are \d+ long, its header says \d+ \(truncated or corrupt\); save the catalog again, or build it from the backends' listings/,
    );
    expect(
      await refused({ header, bytes: new Uint8Array([...bytes, 0]) }),
    ).toBe('INVALID_SAVED_CATALOG');
    expect(await refused({ header, bytes: 'not bytes' })).toBe(
      'INVALID_SAVED_CATALOG',
    );
    expect(await refused(bytes)).toBe('INVALID_SAVED_CATALOG');
    await expect(
      catalog.restoreCatalogAsync({ header: 'a header', bytes }),
    ).rejects.toThrow(/its header is not a saved catalog's/);
    // Written by another layout or another version of the package.
    const layout = { ...header, layout: header.layout + 1 };
    await expect(
      catalog.restoreCatalogAsync({ header: layout, bytes }),
    ).rejects.toThrow(new RegExp(`written in layout ${header.layout + 1}`));
    expect(await refused({ header: layout, bytes })).toBe(
      'SAVED_CATALOG_VERSION',
    );
    const foreign = { ...header, catalogVersion: `9${VERSION}` };
    expect(await refused({ header: foreign, bytes })).toBe(
      'SAVED_CATALOG_VERSION',
    );
    // A header with a malformed field, or one that disagrees with itself.
    const negative = { ...header, counts: { ...header.counts, tools: -1 } };
    await expect(
      catalog.restoreCatalogAsync({ header: negative, bytes }),
    ).rejects.toThrow(/its header's counts\.tools is malformed/);
    const twice = {
      ...header,
      targets: header.targets.map((target, index) =>
        index === 1 ? { ...target, target: targets[0] as string } : target,
      ),
    };
    expect(await refused({ header: twice, bytes })).toBe(
      'INVALID_SAVED_CATALOG',
    );
    // Bytes that disagree with themselves: the first section is the running total of each
    // target's tools.
    const totals = bytes.slice();
    new DataView(totals.buffer).setUint32(4, 1, true);
    await expect(
      catalog.restoreCatalogAsync({ header, bytes: totals }),
    ).rejects.toThrow(/does not match|out of order|another number of tools/);
    const renamed = {
      ...header,
      targets: header.targets.map((target, index) =>
        index === 0 ? { ...target, target: `Z${target.target}` } : target,
      ),
    };
    expect(await refused({ header: renamed, bytes })).toBe(
      'INVALID_SAVED_CATALOG',
    );
    expect(catalog.list()).toEqual(before);
    expect(
      await refusedCode(catalog, saved, { keep: 'all' } as unknown as object),
    ).toBe('INVALID_ARGUMENT');
  });

  it('restores asynchronously, letting other work run, and swaps the catalog in at the end', async () => {
    // 5,270 tools: the set's tools under ten targets each.
    const tools = targetCopies(LIVE.entries, 10);
    const big = new ToolCatalog({ tools });
    const catalog = ToolCatalog.fromSeed();
    const query = { query: 'android adb install apk', limit: 5 };
    const before = catalog.search(query);
    const { result, answers: during } = await searchesDuring(
      catalog,
      query,
      async () => catalog.restoreCatalogAsync(await save(big, keysOf(big))),
    );
    expect(result.restored).toEqual([...keysOf(big).keys()]);
    expect(during.length).toBeGreaterThan(1);
    for (const answer of during) expect(answer).toEqual(before);
    expect(catalog.size).toBe(34 + tools.length);
    expect(catalog.search({ query: 'weather forecast', limit: 5 })).toEqual(
      new ToolCatalog({
        tools: [...ToolCatalog.fromSeed().list(), ...tools],
      }).search({ query: 'weather forecast', limit: 5 }),
    );
  });
});

describe('a saved catalog written a piece at a time', () => {
  it('comes in pieces, the catalog as it was when asked', async () => {
    // 5,270 tools: the set's tools under ten targets each, over 6 MB saved.
    const catalog = new ToolCatalog({ tools: targetCopies(LIVE.entries, 10) });
    const keys = keysOf(catalog);
    // A twin left unchanged writes what the catalog held when asked.
    const expected = await save(
      new ToolCatalog({ tools: targetCopies(LIVE.entries, 10) }),
      keys,
    );
    const stream = await catalog.saveCatalogStream(keys);
    // A change made while the catalog is being written is not in what is written.
    catalog.removeBackend([...keys.keys()][0] as string);
    expect(stream.byteLength).toBe(expected.bytes.length);
    const { saved: written, pieces } = await streamed(stream);
    expect(pieces).toBeGreaterThan(1);
    expect(written.header).toEqual(expected.header);
    expect(Buffer.from(written.bytes).equals(Buffer.from(expected.bytes))).toBe(
      true,
    );
    await expect(stream.chunks().next()).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      catalog.saveCatalogStream([] as unknown as Map<string, string>),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('writes a restored catalog, whose tools keep their saved terms, as it was saved', async () => {
    const cold = new ToolCatalog({ tools: LIVE.entries });
    const saved = await save(cold, keysOf(cold));
    const restored = new ToolCatalog();
    await restored.restoreCatalogAsync(saved);
    const again = await save(restored, keysOf(restored));
    expect(again.header).toEqual(saved.header);
    expect(Buffer.from(again.bytes).equals(Buffer.from(saved.bytes))).toBe(
      true,
    );
  });
});

const ALL_SETS = ['livemcpbench', 'metatool', 'gorilla-hf', 'seal-tools'].map(
  (name) => ({
    name,
    data: benchmarkSet(name),
  }),
);

/** Every query of a set, also narrowed to the profile and to the target of its best hit. */
function narrowedAnswers(
  catalog: ToolCatalog,
  reference: ToolCatalog,
  queries: readonly { query: string }[],
): unknown[] {
  return queries.flatMap(({ query }) => {
    const best = reference.search({ query, limit: 1 }).hits[0];
    const entry = best === undefined ? undefined : reference.get(best.name);
    return [
      catalog.search({ query, limit: 20 }),
      catalog.search({ query, limit: 20, profile: entry?.profile ?? 'core' }),
      catalog.search({ query, limit: 5, target: entry?.target ?? 'none' }),
    ];
  });
}

describe.each(ALL_SETS)('a lazily restored catalog of $name', ({ data }) => {
  const cold = new ToolCatalog({ tools: data.entries });
  const keys = keysOf(cold);
  let saved: Saved;
  beforeAll(async () => {
    saved = await save(cold, keys);
  });

  it('makes only the tools asked for, and answers every query as the cold build does', async () => {
    const read = readSavedCatalog(saved, 'test');
    const steps = restoreSavedCatalog({
      read,
      keep: () => true,
      where: 'test',
    });
    let step = steps.next();
    while (step.done !== true) step = steps.next();
    // Each target's first tool is made to check its terms; no other.
    for (const target of step.value.kept) expect(target.tools.made).toBe(1);
    const restored = new ToolCatalog();
    await restored.restoreCatalogAsync(saved);
    // Searched before any entry is asked for (profile and target filters
    // read the saved records), then every entry compared.
    expect(narrowedAnswers(restored, cold, data.queries)).toEqual(
      narrowedAnswers(cold, cold, data.queries),
    );
    const name = cold.list()[0]?.name as string;
    expect(restored.get(name)).toBe(restored.get(name));
    expect(restored.get(name)).toEqual(cold.get(name));
    expect(restored.list()).toEqual(cold.list());
  });
});

describe.each(SETS)('a restored catalog of $name, saved again', ({ data }) => {
  const cold = new ToolCatalog({ tools: data.entries });
  const keys = keysOf(cold);
  let saved: Saved;
  beforeAll(async () => {
    saved = await save(cold, keys);
  });

  it('saves, after some tools were made and a target re-listed, the bytes of the cold build in the same state', async () => {
    const restored = new ToolCatalog();
    await restored.restoreCatalogAsync(saved);
    for (const { query } of data.queries.slice(0, 20))
      restored.search({ query, limit: 10 });
    const [first, second] = [...keys.keys()] as [string, string];
    const relisted = cold
      .list()
      .filter((entry) => entry.target === second)
      .slice(1);
    const again = new ToolCatalog({ tools: data.entries });
    for (const catalog of [restored, again])
      catalog.replaceBackend(second, relisted);
    expect(restored.get(`${first}_x`)).toBeUndefined();
    const [left, right] = [await save(restored, keys), await save(again, keys)];
    expect(left.header).toEqual(right.header);
    expect(Buffer.from(left.bytes)).toEqual(Buffer.from(right.bytes));
  });
});

describe('a saved catalog whose tools disagree with themselves', () => {
  /** A saved catalog of one target with two tools, and the place of each tool's texts in it. */
  function twoTools(): Promise<Saved> {
    const backend = { backend: 'b/two', target: 'two', profile: 'core' };
    const tool = (name: string, description: string): ToolEntry =>
      toolEntryFromMcpTool({
        backend,
        tool: {
          name,
          description,
          annotations: { readOnlyHint: true },
        },
      });
    const catalog = new ToolCatalog({
      tools: [
        tool('qqfirst', 'Reads one thing.'),
        tool('qqsecnd', 'Reads another thing.'),
      ],
    });
    return save(catalog, new Map([['two', 'key']]));
  }

  it('is refused when a target names a tool twice or its annotations are not an object, though its counts add up', async () => {
    const saved = await twoTools();
    const { header } = saved;
    const text = Buffer.from(saved.bytes);
    const repeated = saved.bytes.slice();
    // The bare names are the last of their kind in the text table (the terms come first).
    repeated.set(Buffer.from('qqfirst'), text.lastIndexOf('qqsecnd'));
    await expect(
      new ToolCatalog().restoreCatalogAsync({ header, bytes: repeated }),
    ).rejects.toThrow(
      /target "two" has an empty or repeated tool name \(corrupt\)/,
    );
    const malformed = saved.bytes.slice();
    malformed.set(Buffer.from('truX'), text.lastIndexOf('true'));
    await expect(
      new ToolCatalog().restoreCatalogAsync({ header, bytes: malformed }),
    ).rejects.toThrow(/tool "two_qqsecnd" has malformed annotations/);
    expect(
      (await new ToolCatalog().restoreCatalogAsync(saved)).restored,
    ).toEqual(['two']);
  });
});

describe('a saved catalog written by an earlier release (as index-cache.bin files hold)', () => {
  const fixture = (extension: string) =>
    readFileSync(
      new URL(
        `./__fixtures__/saved-catalog-layout-2.${extension}`,
        import.meta.url,
      ),
    );
  const written: Saved = {
    header: JSON.parse(fixture('json').toString()) as Saved['header'],
    bytes: new Uint8Array(fixture('bin')),
  };
  const tools = SEED_TOOLS.filter((entry) =>
    ['core', 'adb', 'gui'].includes(entry.target),
  );
  const cold = new ToolCatalog({ tools });
  const keys = new Map(
    ['core', 'adb', 'gui'].map((target) => [target, `key-${target}`]),
  );

  it('has the layout this release writes, and restores, or is refused as another version', async () => {
    const now = await save(cold, keys);
    expect({ ...written.header, catalogVersion: VERSION }).toEqual(now.header);
    expect(Buffer.from(written.bytes).equals(Buffer.from(now.bytes))).toBe(
      true,
    );
    const catalog = new ToolCatalog();
    if (written.header.catalogVersion === VERSION) {
      await catalog.restoreCatalogAsync(written);
      expect(answers(catalog, [{ query: 'install apk' }])).toEqual(
        answers(cold, [{ query: 'install apk' }]),
      );
    } else
      expect(await refusedCode(catalog, written)).toBe('SAVED_CATALOG_VERSION');
  });
});

describe('a hybrid search on a restored catalog', () => {
  it('makes no restored tool beyond its own hits and what the lexical search makes', async () => {
    const cold = new ToolCatalog({ tools: LIVE.entries });
    const restored = new ToolCatalog();
    await restored.restoreCatalogAsync(await save(cold, keysOf(cold)));
    const tool = (name: string): Float32Array =>
      Float32Array.of(name.length % 7, name.charCodeAt(1) % 5, 1);
    const made = vi.spyOn(SavedTools.prototype, 'at');
    const madeNames = (from: number): Set<string> =>
      new Set(
        made.mock.calls
          .slice(from)
          .map(([local], call) =>
            (made.mock.contexts[from + call] as SavedTools).nameOf(local),
          ),
      );
    try {
      for (const { query } of LIVE.queries.slice(0, 30)) {
        restored.search({ query });
        const before = made.mock.calls.length;
        const { hits } = restored.search({
          query,
          vectors: { query: [1, 1, 1], tool },
        });
        expect(hits.length).toBeGreaterThan(0);
        const names = new Set(hits.map((hit) => hit.name));
        for (const name of madeNames(before)) expect(names).toContain(name);
      }
      expect(restored.size).toBe(cold.size);
    } finally {
      made.mockRestore();
    }
  });
});

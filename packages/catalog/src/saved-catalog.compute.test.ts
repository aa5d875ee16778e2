import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { loadBenchmark } from './evaluate.js';
import { toolEntryFromMcpTool } from './entries.js';
import {
  describeSavedCatalog,
  readSavedCatalog,
  restoreSavedCatalog,
  SAVED_CATALOG_VERSION,
  type SavedCatalogStream,
} from './saved-catalog.js';
import type { ToolEntry } from './types.js';
import { VERSION } from './version.js';
import { codeOf } from './__fixtures__/error-code.js';
import { searchesDuring } from './__fixtures__/searches-during.js';
import { expectForeignVersionsRefused } from './__fixtures__/foreign-versions.js';
import { targetCopies } from './__fixtures__/target-copies.js';

const here = dirname(fileURLToPath(import.meta.url));
const SETS = ['livemcpbench', 'metatool'].map((name) => ({
  name,
  data: loadBenchmark({ directory: resolve(here, `../bench/data/${name}`) }),
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

/** A copy with its digest recomputed, as a writer with other content would have it. */
function redigested(saved: Uint8Array): Uint8Array {
  const copy = saved.slice();
  copy.set(createHash('sha256').update(copy.subarray(48)).digest(), 16);
  return copy;
}

describe.each(SETS)('a saved catalog of $name', ({ data }) => {
  const cold = new ToolCatalog({ tools: data.entries });
  const saved = cold.saveCatalog(keysOf(cold));

  it('restores, in one call, a catalog that answers every query as the cold build does', async () => {
    const restored = new ToolCatalog();
    expect(restored.restoreCatalog(saved)).toEqual({
      restored: [...keysOf(cold).keys()],
      dropped: [],
    });
    expect(restored.list()).toEqual(cold.list());
    expect(answers(restored, data.queries)).toEqual(
      answers(cold, data.queries),
    );
    // Saved again, the restored catalog writes the same bytes.
    expect(restored.saveCatalog(keysOf(cold))).toEqual(saved);
    const later = new ToolCatalog();
    await later.restoreCatalogAsync(saved);
    expect(answers(later, data.queries)).toEqual(answers(cold, data.queries));
  });

  it('keeps only the targets the caller accepts, with the statistics of a build of those', () => {
    const targets = [...keysOf(cold).keys()];
    const gone = new Set(targets.filter((_, index) => index % 3 === 1));
    const restored = new ToolCatalog();
    const seen: string[] = [];
    const result = restored.restoreCatalog(saved, {
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
    let admit!: (decide: (target: string) => boolean) => void;
    const result = restored.restoreCatalogAsync(saved, {
      keep: (target) => target !== first,
      admit: new Promise((resolve) => (admit = resolve)),
    });
    // Not swapped in while the admission is undecided.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(restored.size).toBe(0);
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
  const saved = cold.saveCatalog(keys);
  const targets = [...keys.keys()];

  it('says its targets, keys and tools without being restored', () => {
    const info = describeSavedCatalog(saved);
    expect(info.version).toBe(SAVED_CATALOG_VERSION);
    expect(info.catalogVersion).toBe(VERSION);
    expect(info.tools).toBe(cold.size);
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
    const two = cold.saveCatalog(
      new Map([
        [targets[2] as string, 'b'],
        ['no-such-target', 'c'],
        [targets[1] as string, 'a'],
      ]),
    );
    expect(
      describeSavedCatalog(two).targets.map(({ target, key }) => [target, key]),
    ).toEqual([
      [targets[1], 'a'],
      [targets[2], 'b'],
    ]);
    expect(
      codeOf(() =>
        cold.saveCatalog(new Map([['x', 1]]) as unknown as Map<string, string>),
      ),
    ).toBe('INVALID_ARGUMENT');
  });

  it('restores the same from an odd offset of a larger buffer, and into a catalog that has tools', () => {
    // A Buffer, as a file is read (its `slice` is a view, not a copy).
    const file = Buffer.alloc(saved.length + 3);
    file.set(saved, 3);
    const shifted = new ToolCatalog();
    shifted.restoreCatalog(file.subarray(3));
    expect(shifted.saveCatalog(keys)).toEqual(saved);
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
    mixed.restoreCatalog(saved, { keep: (target) => target !== first });
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

  it('ranks as a cold build when the restoring catalog weighs the fields otherwise', () => {
    const tuning = { bag: { description: 2, parameterText: 0.5 } };
    const restored = new ToolCatalog({ tuning });
    restored.restoreCatalog(saved);
    const rebuilt = new ToolCatalog({ tools: LIVE.entries, tuning });
    expect(answers(restored, LIVE.queries)).toEqual(
      answers(rebuilt, LIVE.queries),
    );
  });

  it('is refused when corrupt, truncated, foreign or inconsistent, and nothing changes', async () => {
    const catalog = ToolCatalog.fromSeed();
    const before = catalog.list();
    const refused = (bad: unknown): string | undefined =>
      codeOf(() => catalog.restoreCatalog(bad as Uint8Array));
    const flipped = saved.slice();
    flipped[saved.length >> 1] = (flipped[saved.length >> 1] as number) ^ 0x20;
    expect(refused(flipped)).toBe('INVALID_INDEX_PART');
    expect(() => catalog.restoreCatalog(flipped)).toThrow(
      /restoreCatalog: its digest does not match its content \(corrupt\); save the catalog again, or build it from the backends' listings/,
    );
    await expect(catalog.restoreCatalogAsync(flipped)).rejects.toThrow(
      /restoreCatalogAsync: its digest does not match/,
    );
    expect(refused(saved.subarray(0, saved.length - 1))).toBe(
      'INVALID_INDEX_PART',
    );
    expect(() => catalog.restoreCatalog(saved.subarray(0, 60))).toThrow(
      /truncated: 60 of \d+ bytes/,
    );
    expect(refused(new Uint8Array([...saved, 0]))).toBe('INVALID_INDEX_PART');
    expect(refused('not bytes')).toBe('INVALID_INDEX_PART');
    const part = cold.saveBackend({ target: targets[0] as string, key: 'k' });
    expect(() => catalog.restoreCatalog(part as Uint8Array)).toThrow(
      /not a saved catalog/,
    );
    expectForeignVersionsRefused({
      saved: saved,
      layout: SAVED_CATALOG_VERSION,
      refused,
      describe: describeSavedCatalog,
      redigested,
    });
    // A valid digest over content that disagrees with itself: still refused. The first
    // section after the header is the running total of each target's tools.
    const headerEnd = 56 + new DataView(saved.buffer).getUint32(48, true);
    const totals = saved.slice();
    new DataView(totals.buffer).setUint32(headerEnd + 4, 1, true);
    expect(() => catalog.restoreCatalog(redigested(totals))).toThrow(
      /does not match|out of order|another number of tools/,
    );
    const renamed = saved.slice();
    const name = Buffer.from(saved).indexOf('"target":"') + '"target":"'.length;
    renamed[name] = 'Z'.charCodeAt(0);
    expect(refused(redigested(renamed))).toBe('INVALID_INDEX_PART');
    expect(catalog.list()).toEqual(before);
    expect(
      codeOf(() =>
        catalog.restoreCatalog(saved, { keep: 'all' } as unknown as object),
      ),
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
      () => catalog.restoreCatalogAsync(big.saveCatalog(keysOf(big))),
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

  it('saves asynchronously the same bytes, letting other work run, as the catalog was when asked', async () => {
    // 5,270 tools: the set's tools under ten targets each.
    const catalog = new ToolCatalog({ tools: targetCopies(LIVE.entries, 10) });
    const keys = keysOf(catalog);
    const expected = catalog.saveCatalog(keys);
    const query = { query: 'android adb install apk', limit: 5 };
    const before = catalog.search(query);
    const { result, answers: during } = await searchesDuring(
      catalog,
      query,
      async () => {
        const saving = catalog.saveCatalogAsync(keys);
        // A change made while the catalog is being saved is not in what is saved.
        catalog.removeBackend([...keys.keys()][0] as string);
        return saving;
      },
    );
    // Compared as bytes at once: element by element, megabytes take long.
    expect(Buffer.from(result).equals(Buffer.from(expected))).toBe(true);
    expect(during.length).toBeGreaterThan(1);
    expect(during[0]).not.toEqual(before);
    await expect(
      catalog.saveCatalogAsync([] as unknown as Map<string, string>),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

/** The bytes of a streamed saved catalog, its digest put in place, and how many pieces came. */
async function streamed(
  stream: SavedCatalogStream,
): Promise<{ bytes: Buffer; pieces: number; digestArea: Buffer }> {
  const pieces: Buffer[] = [];
  const chunks = stream.chunks();
  let step = await chunks.next();
  for (; step.done !== true; step = await chunks.next()) {
    expect(step.value.length).toBeLessThanOrEqual(1 << 20);
    // Copied: each piece is a view of one buffer, reused for the next.
    pieces.push(Buffer.from(step.value));
  }
  const bytes = Buffer.concat(pieces);
  const { digestAt } = stream;
  const digestArea = Buffer.from(bytes.subarray(digestAt, digestAt + 32));
  bytes.set(step.value, digestAt);
  return { bytes, pieces: pieces.length, digestArea };
}

describe('a saved catalog written a piece at a time', () => {
  it('is the bytes saveCatalog returns, its digest put where it says, the catalog as it was when asked', async () => {
    // 5,270 tools: the set's tools under ten targets each, over 6 MB saved.
    const catalog = new ToolCatalog({ tools: targetCopies(LIVE.entries, 10) });
    const keys = keysOf(catalog);
    const expected = catalog.saveCatalog(keys);
    const stream = await catalog.saveCatalogStream(keys);
    // A change made while the catalog is being written is not in what is written.
    catalog.removeBackend([...keys.keys()][0] as string);
    expect(stream.byteLength).toBe(expected.length);
    expect(stream.targets).toEqual(describeSavedCatalog(expected).targets);
    const { bytes, pieces, digestArea } = await streamed(stream);
    expect(pieces).toBeGreaterThan(1);
    expect(digestArea.equals(Buffer.alloc(32))).toBe(true);
    expect(bytes.equals(Buffer.from(expected))).toBe(true);
    await expect(stream.chunks().next()).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      catalog.saveCatalogStream([] as unknown as Map<string, string>),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('writes a restored catalog, whose tools keep their saved terms, as it was saved', async () => {
    const cold = new ToolCatalog({ tools: LIVE.entries });
    const saved = cold.saveCatalog(keysOf(cold));
    const restored = new ToolCatalog();
    restored.restoreCatalog(saved);
    const { bytes } = await streamed(
      await restored.saveCatalogStream(keysOf(restored)),
    );
    expect(bytes.equals(Buffer.from(saved))).toBe(true);
  });
});

const ALL_SETS = ['livemcpbench', 'metatool', 'gorilla-hf', 'seal-tools'].map(
  (name) => ({
    name,
    data: loadBenchmark({ directory: resolve(here, `../bench/data/${name}`) }),
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
  const saved = cold.saveCatalog(keys);

  it('makes only the tools asked for, and answers every query as the cold build does', () => {
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
    restored.restoreCatalog(saved);
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
  const saved = cold.saveCatalog(keys);

  it('saves, after some tools were made and a target re-listed, the bytes of the cold build in the same state', () => {
    const restored = new ToolCatalog();
    restored.restoreCatalog(saved);
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
    expect(Buffer.from(restored.saveCatalog(keys))).toEqual(
      Buffer.from(again.saveCatalog(keys)),
    );
  });
});

describe('a saved catalog whose tools disagree with themselves', () => {
  /** A saved catalog of one target with two tools, and the place of each tool's texts in it. */
  function twoTools(): Uint8Array {
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
    return catalog.saveCatalog(new Map([['two', 'key']]));
  }

  it('is refused when a target names a tool twice or its annotations are not an object, though its digest matches', () => {
    const saved = twoTools();
    const text = Buffer.from(saved);
    const repeated = saved.slice();
    // The bare names are the last of their kind in the text table (the terms come first).
    repeated.set(Buffer.from('qqfirst'), text.lastIndexOf('qqsecnd'));
    expect(() =>
      new ToolCatalog().restoreCatalog(redigested(repeated)),
    ).toThrow(/target "two" has an empty or repeated tool name \(corrupt\)/);
    const malformed = saved.slice();
    malformed.set(Buffer.from('truX'), text.lastIndexOf('true'));
    expect(() =>
      new ToolCatalog().restoreCatalog(redigested(malformed)),
    ).toThrow(/tool "two_qqsecnd" has malformed annotations/);
    expect(new ToolCatalog().restoreCatalog(saved).restored).toEqual(['two']);
  });
});

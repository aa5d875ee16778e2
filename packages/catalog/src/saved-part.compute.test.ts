import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { loadBenchmark } from './evaluate.js';
import { describeSavedBackend, SAVED_BACKEND_VERSION } from './saved-part.js';
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

function targetsOf(catalog: ToolCatalog): string[] {
  return [...new Set(catalog.list().map((entry) => entry.target))];
}

function saveAll(catalog: ToolCatalog): Uint8Array[] {
  return targetsOf(catalog).map(
    (target) =>
      catalog.saveBackend({ target, key: `key-${target}` }) as Uint8Array,
  );
}

/** A copy of a part with its digest recomputed, as a writer with other content would have it. */
function redigested(part: Uint8Array): Uint8Array {
  const copy = part.slice();
  const digest = createHash('sha256').update(copy.subarray(80)).digest('hex');
  copy.set(new TextEncoder().encode(digest), 16);
  return copy;
}

describe.each(SETS)('saved parts of $name', ({ data }) => {
  it('restore a catalog that answers every query as the cold build does', () => {
    const cold = new ToolCatalog({ tools: data.entries });
    const parts = saveAll(cold);
    const restored = new ToolCatalog();
    restored.restoreBackends(parts);
    expect(restored.list()).toEqual(cold.list());
    for (const query of data.queries)
      expect(restored.search({ query: query.query, limit: 20 })).toEqual(
        cold.search({ query: query.query, limit: 20 }),
      );
    // Saved again, the restored catalog writes the same bytes.
    expect(saveAll(restored)).toEqual(parts);
  });
});

describe('saved parts', () => {
  const cold = new ToolCatalog({ tools: LIVE.entries });
  const parts = saveAll(cold);
  const part = parts[1] as Uint8Array;

  it('restore the same from an odd offset of a larger buffer (as read from one file)', () => {
    // A Buffer, as a file is read (its `slice` is a view, not a copy).
    const file = Buffer.alloc(
      1 + parts.reduce((sum, one) => sum + one.length, 0),
    );
    let at = 1;
    const shifted = parts.map((one) => {
      file.set(one, at);
      at += one.length;
      return file.subarray(at - one.length, at);
    });
    const fromFile = new ToolCatalog();
    fromFile.restoreBackends(shifted);
    expect(saveAll(fromFile)).toEqual(parts);
  });

  it('say their target, key and tools without being restored', () => {
    const target = targetsOf(cold)[1] as string;
    const tools = cold.list().filter((entry) => entry.target === target);
    expect(describeSavedBackend(part)).toEqual({
      target,
      key: `key-${target}`,
      catalogVersion: VERSION,
      tools: tools.length,
      backends: [...new Set(tools.map((entry) => entry.backend))],
      profiles: ['core'],
    });
    expect(cold.saveBackend({ target: 'no-such-target', key: 'k' })).toBe(
      undefined,
    );
    expect(
      codeOf(() =>
        cold.saveBackend({ target } as unknown as {
          target: string;
          key: string;
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
  });

  it('are refused when corrupt, truncated, foreign or inconsistent, and nothing changes', () => {
    const catalog = ToolCatalog.fromSeed();
    const before = catalog.list();
    const refused = (bad: unknown): string | undefined =>
      codeOf(() =>
        catalog.restoreBackends([parts[0] as Uint8Array, bad as Uint8Array]),
      );
    const flipped = part.slice();
    flipped[part.length - 7] = (flipped[part.length - 7] as number) ^ 0x20;
    expect(refused(flipped)).toBe('INVALID_INDEX_PART');
    expect(() => catalog.restoreBackends([flipped])).toThrow(
      /restoreBackends part \[0\]: its digest does not match its content \(corrupt\); rebuild it from the backend's listing/,
    );
    expect(refused(part.subarray(0, part.length - 1))).toBe(
      'INVALID_INDEX_PART',
    );
    expect(() => catalog.restoreBackends([part.subarray(0, 60)])).toThrow(
      /truncated: 60 bytes/,
    );
    expect(refused(new Uint8Array([...part, 0]))).toBe('INVALID_INDEX_PART');
    expect(refused(new TextEncoder().encode('{"format":"json"}'))).toBe(
      'INVALID_INDEX_PART',
    );
    expect(refused('not bytes')).toBe('INVALID_INDEX_PART');
    expectForeignVersionsRefused({
      saved: part,
      layout: SAVED_BACKEND_VERSION,
      refused,
      describe: describeSavedBackend,
      redigested,
    });
    // A valid digest over content that disagrees with itself: still refused.
    const view = new DataView(part.buffer, part.byteOffset);
    const headerLength = view.getUint32(80, true);
    const header = JSON.parse(
      new TextDecoder().decode(part.subarray(84, 84 + headerLength)),
    ) as { terms: number; tools: number; tokens: number };
    // Sections: string ends, three numbers and six field counts per tool, then one 16-bit
    // term per token (the part has fewer than 65,536 terms), then the string table.
    const endsAt = 84 + headerLength;
    const tokensAt =
      endsAt + 4 * (header.terms + header.tools * 4 + 1 + header.tools * 9);
    const tableAt = tokensAt + 2 * header.tokens;
    const edited = (edit: (bytes: DataView) => void): Uint8Array => {
      const copy = part.slice();
      edit(new DataView(copy.buffer));
      return redigested(copy);
    };
    const lastToken = tableAt - 2;
    expect(() =>
      catalog.restoreBackends([
        edited((bytes) => bytes.setUint16(lastToken, header.terms + 5, true)),
      ]),
    ).toThrow(/names a term out of range/);
    // The first token names the first term instead of its own: one term used by no tool.
    const firstTerm = view.getUint16(tokensAt, true);
    const unused = edited((bytes) =>
      bytes.setUint16(tokensAt, firstTerm === 0 ? 1 : 0, true),
    );
    expect(() => catalog.restoreBackends([unused])).toThrow(
      /(used by no tool|does not match)/,
    );
    // Two terms of the table with the same text: a term copied over the next one.
    const end = (string: number): number =>
      view.getUint32(endsAt + 4 * (string + 1), true);
    const start = (string: number): number =>
      string === 0 ? 0 : end(string - 1);
    const twin = [...Array(header.terms - 1).keys()].find(
      (term) => end(term) - start(term) === end(term + 1) - start(term + 1),
    ) as number;
    const repeated = part.slice();
    repeated.copyWithin(
      tableAt + start(twin + 1),
      tableAt + start(twin),
      tableAt + end(twin),
    );
    expect(() => catalog.restoreBackends([redigested(repeated)])).toThrow(
      /appears twice in its term table/,
    );
    const renamed = part.slice();
    const name = Buffer.from(part).indexOf('"target":"') + '"target":"'.length;
    renamed[name] = 'z'.charCodeAt(0);
    expect(refused(redigested(renamed))).toBe('INVALID_INDEX_PART');
    expect(refused(parts[0])).toBe('INVALID_INDEX_PART');
    expect(catalog.list()).toEqual(before);
  });

  it('restore asynchronously, letting timers run, and swap the catalog in at the end', async () => {
    // 5,270 tools: the set's tools under ten targets each.
    const tools = targetCopies(LIVE.entries, 10);
    const big = new ToolCatalog({ tools });
    const saved = saveAll(big);
    const catalog = new ToolCatalog();
    const seen: string[] = [];
    setTimeout(() => seen.push(`timer saw ${catalog.size} tools`), 0);
    // One backend is there before: every search while the others are checked, decoded and
    // staged answers from it alone (staged parts are never searched before the swap).
    catalog.restoreBackends([saved[1] as Uint8Array]);
    // Words of its first tool, which every copy of that tool has as well.
    const first = catalog.list()[0] as ToolEntry;
    const query = { query: `${first.tool} ${first.description}`, limit: 5 };
    const before = catalog.search(query);
    expect(before.hits.length).toBeGreaterThan(0);
    const { answers: during } = await searchesDuring(catalog, query, () =>
      catalog.restoreBackendsAsync(saved),
    );
    seen.push(`restored ${catalog.size} tools`);
    expect(seen).toEqual([
      `timer saw ${describeSavedBackend(saved[1] as Uint8Array).tools} tools`,
      `restored ${tools.length} tools`,
    ]);
    expect(during.length).toBeGreaterThan(1);
    for (const answer of during) expect(answer).toEqual(before);
    expect(catalog.search({ query: 'weather forecast', limit: 5 })).toEqual(
      big.search({ query: 'weather forecast', limit: 5 }),
    );
    await expect(
      catalog.restoreBackendsAsync([saved[0] as Uint8Array, part.subarray(9)]),
    ).rejects.toThrow(/restoreBackends part \[1\]/);
    expect(catalog.size).toBe(tools.length);
  });
});

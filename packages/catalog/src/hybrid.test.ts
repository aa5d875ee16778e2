import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { CatalogError } from './errors.js';
import type { SearchVectors } from './hybrid.js';

const catalog = ToolCatalog.fromSeed();
const names = catalog.list().map((entry) => entry.name);

/** A one-hot vector per tool (its position), so similarity picks tools exactly. */
const oneHot = (index: number, dimensions = names.length): Float32Array => {
  const vector = new Float32Array(dimensions);
  vector[index] = 1;
  return vector;
};
const vectorsFor = (
  wanted: string,
  fusion: SearchVectors['fusion'] = { weight: 0.5 },
): SearchVectors => ({
  query: oneHot(names.indexOf(wanted)),
  tool: (name) => oneHot(names.indexOf(name)),
  fusion,
});

describe('ToolCatalog.search with vectors', () => {
  it('finds by meaning a tool whose words the query does not share', () => {
    const query = 'phone apps';
    const lexical = catalog.search({ query });
    expect(lexical.hits.map((hit) => hit.name)).not.toContain('adb_tap');
    const hybrid = catalog.search({ query, vectors: vectorsFor('adb_tap') });
    expect(hybrid.hits[0]?.name).toBe('adb_tap');
    // Lexical hits stay in the list, and the unmatched words are the lexical search's.
    expect(hybrid.hits.map((hit) => hit.name)).toContain('gui_click');
    expect(hybrid.unmatchedTerms).toEqual(lexical.unmatchedTerms);
  });

  it('moves lexical hits by similarity at the given weight', () => {
    const query = 'decompile function';
    const lexical = catalog.search({ query }).hits.map((hit) => hit.name);
    const last = lexical.at(-1) as string;
    expect(lexical[0]).not.toBe(last);
    const strong = catalog.search({ query, vectors: vectorsFor(last) });
    expect(strong.hits[0]?.name).toBe(last);
    const none = catalog.search({
      query,
      vectors: vectorsFor(last, { weight: 0 }),
    });
    expect(none.hits.map((hit) => hit.name).slice(0, lexical.length)).toEqual(
      lexical,
    );
  });

  it('keeps exact names first whatever the vectors say', () => {
    const hits = catalog.search({
      query: 'adb_tap',
      vectors: vectorsFor('gui_click', { weight: 1 }),
    }).hits;
    expect(hits[0]?.name).toBe('adb_tap');
    expect(hits[1]?.name).toBe('gui_click');
  });

  it('keeps the profile and target scope for tools found by vector', () => {
    const inProfile = catalog.search({
      query: 'phone apps',
      profile: 'game',
      vectors: vectorsFor('adb_tap', { weight: 1 }),
    });
    expect(inProfile.hits.map((hit) => hit.name)).not.toContain('adb_tap');
    for (const hit of inProfile.hits)
      expect(['game', 'core']).toContain(catalog.get(hit.name)?.profile);
    const inTarget = catalog.search({
      query: 'phone apps',
      target: 'gui',
      vectors: vectorsFor('adb_tap', { weight: 1 }),
    });
    expect(inTarget.hits.every((hit) => hit.target === 'gui')).toBe(true);
  });

  it('answers exactly as the lexical search without a usable vector', () => {
    for (const query of ['decompile function', 'adb_tap', 'phone apps', ' '])
      for (const vectors of [
        { query: new Float32Array(names.length), tool: () => oneHot(0) },
        { query: oneHot(1), tool: () => undefined },
        { query: oneHot(1), tool: () => oneHot(1, 3) },
        { query: [Number.NaN, 1], tool: () => [1, 0] },
      ])
        expect(catalog.search({ query, vectors })).toEqual(
          catalog.search({ query }),
        );
  });

  it('refuses bad vectors and fusion knobs with a message that says what to fix', () => {
    const query = oneHot(0);
    const tool = () => oneHot(0);
    const refused = (vectors: unknown): string => {
      try {
        catalog.search({ query: 'x', vectors: vectors as SearchVectors });
      } catch (error) {
        expect(CatalogError.isInstance(error)).toBe(true);
        expect((error as CatalogError).code).toBe('INVALID_ARGUMENT');
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused({ query: 'x', tool })).toMatch(/"query" must be an array/);
    expect(refused({ query })).toMatch(/"tool" must be a function/);
    expect(refused({ query, tool, fusion: { weight: 2 } })).toMatch(
      /from 0 to 1, got 2/,
    );
  });
});

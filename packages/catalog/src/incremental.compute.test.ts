import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { benchmarkSet } from './__fixtures__/benchmark-set.js';
import { seededRandom } from './__fixtures__/random.js';
import type { SearchResult, ToolEntry } from './types.js';

const SETS = ['livemcpbench', 'metatool'].map((name) => ({
  name,
  data: benchmarkSet(name),
}));

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const next = seededRandom(seed);
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(next() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

function listings(data: {
  entries: readonly ToolEntry[];
}): Map<string, ToolEntry[]> {
  const byTarget = new Map<string, ToolEntry[]>();
  for (const entry of data.entries) {
    const list = byTarget.get(entry.target);
    if (list) list.push(entry);
    else byTarget.set(entry.target, [entry]);
  }
  return byTarget;
}

/** A different listing of the same target: the last tool gone, the first one reworded. */
function altered(tools: readonly ToolEntry[]): ToolEntry[] {
  return tools
    .slice(0, Math.max(1, tools.length - 1))
    .map((entry, index) =>
      index === 0
        ? { ...entry, description: `${entry.description} legacy variant` }
        : entry,
    );
}

/** Every query of the set, a few of them narrowed to one target. */
function answers(
  catalog: ToolCatalog,
  data: ReturnType<typeof benchmarkSet>,
): SearchResult[] {
  const targets = [
    ...new Set(catalog.list().map((entry) => entry.target)),
  ].sort();
  return data.queries.map((query, index) =>
    catalog.search({
      query: query.query,
      limit: 20,
      ...(index % 7 === 0 && targets.length > 0
        ? { target: targets[index % targets.length] }
        : {}),
    }),
  );
}

/** The catalog built in one go from the same tools in the same order. */
function fullBuild(catalog: ToolCatalog): ToolCatalog {
  return new ToolCatalog({ tools: catalog.list() });
}

function scoresOf(results: readonly SearchResult[]): number[][] {
  return results.map((result) => result.hits.map((hit) => hit.score));
}

describe.each(SETS)('incremental builds on $name', ({ data }) => {
  const all = listings(data);
  const targets = [...all.keys()];
  const full = new ToolCatalog({ tools: data.entries });
  const expected = answers(full, data);

  it('rank like a full build when backends arrive one by one, in batches, or out of order', () => {
    const forward = new ToolCatalog();
    for (const target of targets)
      forward.replaceBackend(target, all.get(target) ?? []);
    expect(forward.list()).toEqual(full.list());
    expect(answers(forward, data)).toEqual(expected);

    const batched = new ToolCatalog();
    const order = shuffled(targets, 19);
    for (let start = 0; start < order.length; start += 7)
      batched.replaceBackends(
        new Map(
          order
            .slice(start, start + 7)
            .map((target) => [target, all.get(target) ?? []]),
        ),
      );
    const batchedAnswers = answers(batched, data);
    expect(batchedAnswers).toEqual(answers(fullBuild(batched), data));
    // Another order of the same tools: the same scores (ties may list other tools first).
    expect(scoresOf(batchedAnswers)).toEqual(scoresOf(expected));
  });

  it('rank like a full build after re-listings and removals in between', async () => {
    const catalog = new ToolCatalog();
    const order = shuffled(targets, 7);
    await catalog.replaceBackendsAsync(
      new Map(order.map((target) => [target, altered(all.get(target) ?? [])])),
    );
    expect(answers(catalog, data)).toEqual(answers(fullBuild(catalog), data));
    const removed = order.filter((_, index) => index % 3 === 0);
    for (const target of removed) catalog.removeBackend(target);
    expect(catalog.list().some((entry) => removed.includes(entry.target))).toBe(
      false,
    );
    expect(answers(catalog, data)).toEqual(answers(fullBuild(catalog), data));
    for (const target of shuffled(order, 3))
      catalog.replaceBackend(target, all.get(target) ?? []);
    const final = answers(catalog, data);
    expect(final).toEqual(answers(fullBuild(catalog), data));
    expect(scoresOf(final)).toEqual(scoresOf(expected));
    expect(catalog.size).toBe(full.size);
  });
});

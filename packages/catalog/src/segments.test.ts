import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, type SearchTuning } from './search-tuning.js';
import { PositionList } from './top-positions.js';
import { toolEntryFromMcpTool } from './entries.js';
import { FIELD_NAMES, prepareTool } from './prepare.js';
import { SEED_TOOLS } from './entries.js';
import { WinkIndex } from './__fixtures__/wink-index.js';
import { Collection, IndexView, Segment } from './segments.js';
import type { PreparedTool } from './prepare.js';

/** The index of `tools` (grouped by target in order of first appearance), as a catalog builds it. */
function indexOf(
  tools: readonly PreparedTool[],
  tuning: SearchTuning,
): IndexView {
  const collection = new Collection();
  const byTarget = new Map<string, PreparedTool[]>();
  for (const tool of tools) {
    const list = byTarget.get(tool.entry.target);
    if (list) list.push(tool);
    else byTarget.set(tool.entry.target, [tool]);
  }
  const segments = [...byTarget].map(
    ([target, list]) =>
      new Segment({
        target,
        tools: list,
        tuning,
      }),
  );
  for (const segment of segments) collection.stage(segment);
  collection.commit(segments);
  return new IndexView({ segments, collection, tuning });
}

describe('the segmented BM25 index', () => {
  it('gives the same scores as wink-bm25-text-search when the bag holds one field', () => {
    const tools = SEED_TOOLS.map((entry) => prepareTool(entry));
    const tuning: SearchTuning = {
      ...DEFAULT_TUNING,
      b: 0.75,
      bag: Object.fromEntries(
        FIELD_NAMES.map((name) => [name, name === 'description' ? 1 : 0]),
      ) as SearchTuning['bag'],
    };
    const ours = indexOf(tools, tuning);
    const wink = new WinkIndex({
      tools,
      weights: {
        name: 0.000001,
        target: 0.000001,
        description: 1,
        parameters: 0.000001,
        parameterText: 0.000001,
      },
    });
    for (const query of [
      ['decompil', 'function'],
      ['screen', 'devic'],
      ['web', 'search', 'page'],
    ]) {
      const scores = new Float64Array(tools.length);
      const touched = new PositionList(tools.length);
      for (const term of query) {
        const id = ours.termId(term);
        if (id !== undefined) ours.accumulate(id, 1, scores, touched);
      }
      const expected = wink.search({
        terms: query,
        accept: () => true,
        limit: tools.length,
      });
      expect(expected.length).toBeGreaterThan(1);
      for (const [position, score] of expected)
        expect(scores[position]).toBeCloseTo(score, 2);
    }
  });

  it('handles empty catalogs, empty fields and unknown terms', () => {
    const empty = indexOf([], DEFAULT_TUNING);
    expect(empty.termId('anything')).toBeUndefined();
    const blank = prepareTool(
      toolEntryFromMcpTool({
        backend: { backend: 'b', target: 'b', profile: 'core' },
        tool: { name: 'x' },
      }),
    );
    const index = indexOf([blank], DEFAULT_TUNING);
    expect(index.termId('x')).toBeDefined();
    expect(index.termId('y')).toBeUndefined();
  });

  it('searches a staged segment only once it is committed', () => {
    const tools = SEED_TOOLS.map((entry) => prepareTool(entry));
    const [first, ...others] = [
      ...new Set(tools.map((tool) => tool.entry.target)),
    ].map(
      (target) =>
        new Segment({
          target,
          tools: tools.filter((tool) => tool.entry.target === target),
          tuning: DEFAULT_TUNING,
        }),
    ) as [Segment, ...Segment[]];
    const collection = new Collection();
    collection.stage(first);
    collection.commit([first]);
    const before = new IndexView({
      segments: [first],
      collection,
      tuning: DEFAULT_TUNING,
    });
    const touchedBy = (view: IndexView, term: string): number[] => {
      const touched = new PositionList(tools.length);
      const id = view.termId(term) as number;
      view.accumulate(id, 1, new Float64Array(tools.length), touched);
      return [...touched.items.subarray(0, touched.length)].sort(
        (left, right) => left - right,
      );
    };
    // A term of the first segment that the others have too.
    const term = 'list';
    const alone = touchedBy(before, term);
    expect(alone.length).toBeGreaterThan(0);
    const id = before.termId(term) as number;
    const holding = others.filter((segment) => segment.localTerm(id) >= 0);
    const last = holding[holding.length - 1] as Segment;
    others.splice(others.indexOf(last), 1);
    expect(holding.length).toBeGreaterThan(1);
    for (const segment of others) collection.stage(segment);
    expect(touchedBy(before, term)).toEqual(alone);
    // Another segment committed meanwhile (its places come after the staged ones).
    collection.stage(last);
    collection.commit([last]);
    const beside = new IndexView({
      segments: [first, last],
      collection,
      tuning: DEFAULT_TUNING,
    });
    const both = touchedBy(beside, term);
    expect(both.length).toBe(beside.documentFrequency(id));
    expect(both.length).toBeGreaterThan(alone.length);
    expect(both.every((position) => position < beside.size)).toBe(true);
    collection.commit(others);
    const after = new IndexView({
      segments: [first, last, ...others],
      collection,
      tuning: DEFAULT_TUNING,
    });
    expect(touchedBy(after, term).length).toBeGreaterThan(both.length);
  });
});

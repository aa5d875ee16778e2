import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, PositionList, type SearchTuning } from './bm25f.js';
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
});

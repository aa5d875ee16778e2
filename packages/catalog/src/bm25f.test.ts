import { describe, expect, it } from 'vitest';
import {
  Bm25fIndex,
  DEFAULT_TUNING,
  PositionList,
  type SearchTuning,
} from './bm25f.js';
import { toolEntryFromMcpTool } from './entries.js';
import { FIELD_NAMES, prepareTool } from './prepare.js';
import { SEED_TOOLS } from './entries.js';
import { WinkIndex } from './__fixtures__/wink-index.js';

describe('Bm25fIndex', () => {
  it('gives the same scores as wink-bm25-text-search when the bag holds one field', () => {
    const tools = SEED_TOOLS.map((entry) => prepareTool(entry));
    const tuning: SearchTuning = {
      ...DEFAULT_TUNING,
      b: 0.75,
      bag: Object.fromEntries(
        FIELD_NAMES.map((name) => [name, name === 'description' ? 1 : 0]),
      ) as SearchTuning['bag'],
      groupIdfWeight: 0,
    };
    const ours = new Bm25fIndex({ tools, tuning });
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
    const empty = new Bm25fIndex({ tools: [], tuning: DEFAULT_TUNING });
    expect(empty.termId('anything')).toBeUndefined();
    const blank = prepareTool(
      toolEntryFromMcpTool({
        backend: { backend: 'b', target: 'b', profile: 'core' },
        tool: { name: 'x' },
      }),
    );
    const index = new Bm25fIndex({ tools: [blank], tuning: DEFAULT_TUNING });
    expect(index.termId('x')).toBeDefined();
    expect(index.termId('y')).toBeUndefined();
  });
});

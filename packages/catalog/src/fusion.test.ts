import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, interpolate, type Fusion } from './fusion.js';

const lexical = { positions: [4, 2, 7], scores: [10, 5, 1] };
const vector = { positions: [2, 4, 7, 9], similarities: [0.9, 0.1, 0.5, 0.7] };
const fuse = (fusion: Partial<Fusion>, limit = 10) =>
  interpolate({
    lexical,
    vector,
    limit,
    fusion: { ...DEFAULT_FUSION, ...fusion },
  });

describe('interpolate', () => {
  it('at weight 0 keeps the lexical order, at weight 1 takes the vector order', () => {
    expect(fuse({ weight: 0 }).positions.slice(0, 3)).toEqual([4, 2, 7]);
    expect(fuse({ weight: 1 }).positions).toEqual([2, 9, 7, 4]);
  });

  it('interpolates BM25 over its best score with the similarity scaled to 0..1', () => {
    const { positions, scores } = fuse({ weight: 0.5 });
    // 2: 0.5*0.5 + 0.5*1 = 0.75; 4: 0.5*1 + 0 = 0.5; 9: 0.5*0.75 = 0.375; 7: 0.05 + 0.25 = 0.3
    expect(positions).toEqual([2, 4, 9, 7]);
    expect(scores.map((score) => Number(score.toFixed(4)))).toEqual([
      0.75, 0.5, 0.375, 0.3,
    ]);
  });

  it('returns at most limit positions, ties broken by position', () => {
    expect(fuse({ weight: 0.5 }, 2).positions).toEqual([2, 4]);
    const tied = interpolate({
      lexical: { positions: [], scores: [] },
      vector: { positions: [8, 3, 5], similarities: [0.5, 0.5, 0.5] },
      limit: 2,
      fusion: DEFAULT_FUSION,
    });
    expect(tied.positions).toEqual([3, 5]);
  });

  it('works with one side empty', () => {
    expect(
      interpolate({
        lexical,
        vector: { positions: [], similarities: [] },
        limit: 5,
        fusion: DEFAULT_FUSION,
      }).positions,
    ).toEqual([4, 2, 7]);
  });
});

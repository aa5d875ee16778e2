import { describe, expect, it } from 'vitest';
import { CatalogError } from '@heretek/catalog';
import {
  chooseRefinement,
  crossValidate,
  foldAssignment,
  leaveOneSetOut,
  queryObjectives,
} from './selection.js';

describe('queryObjectives', () => {
  it('is the mean of nDCG@10 and Recall@5 per query', () => {
    const values = queryObjectives({
      queries: [
        { id: 'a', query: '', relevant: ['x'] },
        { id: 'b', query: '', relevant: ['x', 'y'] },
        { id: 'c', query: '', relevant: ['z'] },
      ],
      rankings: [['x'], ['n', 'n', 'n', 'n', 'n', 'x'], []],
    });
    expect(values[0]).toBeCloseTo(1);
    const ideal = 1 + 1 / Math.log2(3);
    expect(values[1]).toBeCloseTo((1 / Math.log2(7) / ideal + 0) / 2);
    expect(values[2]).toBe(0);
  });
});

describe('foldAssignment', () => {
  it('spreads queries evenly and deterministically', () => {
    const folds = foldAssignment({ count: 23, folds: 5, seed: 7 });
    const sizes = [0, 0, 0, 0, 0];
    for (const fold of folds) sizes[fold] = (sizes[fold] as number) + 1;
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    expect(foldAssignment({ count: 23, folds: 5, seed: 7 })).toEqual(folds);
    expect(foldAssignment({ count: 23, folds: 5, seed: 8 })).not.toEqual(folds);
  });

  it('refuses a fold count that cannot work', () => {
    expect(() => foldAssignment({ count: 10, folds: 1 })).toThrow(
      /"folds" must be an integer from 2/,
    );
    try {
      foldAssignment({ count: 3, folds: 9 });
    } catch (error) {
      expect(CatalogError.isInstance(error)).toBe(true);
    }
  });
});

describe('crossValidate', () => {
  it('chooses on the other folds and scores the held-out one', () => {
    // Candidate "a" wins queries 0-1, "b" wins queries 2-3; two folds {0,2}, {1,3}.
    const objectives = {
      a: Float64Array.from([1, 1, 0, 0.2]),
      b: Float64Array.from([0, 0.1, 1, 1]),
    };
    const folds = Int32Array.from([0, 1, 0, 1]);
    const result = crossValidate({
      candidates: ['a', 'b'] as const,
      objectives: (candidate) => objectives[candidate],
      folds,
    });
    // Fold 0 is chosen on queries 1 and 3: a 0.6, b 0.55 -> a; scored on 0 and 2: 1, 0.
    // Fold 1 is chosen on queries 0 and 2: a 0.5, b 0.5 -> a (tie, earlier); scored 1, 0.2.
    expect(result.chosen).toEqual(['a', 'a']);
    expect(result.heldOut).toBeCloseTo((1 + 1 + 0 + 0.2) / 4);
  });
});

describe('chooseRefinement', () => {
  const table: Record<string, Record<string, number>> = {
    off: { a: 0.5, b: 0.5, c: 0.5 },
    // Highest macro average, but lowers c by 0.01.
    sharp: { a: 0.7, b: 0.6, c: 0.49 },
    // Raises the macro average, lowers c by 0.004 only.
    mild: { a: 0.55, b: 0.55, c: 0.496 },
    // Lowers nothing, raises the macro average by less than 0.001.
    flat: { a: 0.501, b: 0.5, c: 0.5 },
  };
  const choose = (
    candidates: string[],
    rule: { tolerance?: number; slack?: number } = {},
  ) =>
    chooseRefinement({
      candidates,
      sets: ['a', 'b', 'c'],
      score: (candidate, set) => table[candidate]?.[set] ?? 0,
      ...rule,
    });

  it('takes the best variant that lowers no set by more than the tolerance', () => {
    expect(choose(['off', 'sharp', 'mild', 'flat'])).toBe('mild');
    expect(choose(['off', 'sharp', 'mild'], { tolerance: 0.02 })).toBe('sharp');
  });

  it('takes the mildest variant within the slack of the best', () => {
    // Macro averages: mild 0.532, sharp 0.597.
    expect(
      choose(['off', 'mild', 'sharp'], { tolerance: 0.02, slack: 0.1 }),
    ).toBe('mild');
    expect(
      choose(['off', 'mild', 'sharp'], { tolerance: 0.02, slack: 0.05 }),
    ).toBe('sharp');
  });

  it('keeps "off" when no variant raises the macro average enough', () => {
    expect(choose(['off', 'flat'])).toBeUndefined();
  });
});

describe('leaveOneSetOut', () => {
  it('chooses on the other sets and checks the held-out one, for every set', () => {
    const table: Record<string, Record<string, number>> = {
      off: { a: 0.5, b: 0.5, c: 0.5 },
      // Chosen whenever c is held out; lowers c by 0.1.
      strong: { a: 0.7, b: 0.7, c: 0.4 },
      mild: { a: 0.55, b: 0.55, c: 0.51 },
    };
    const result = leaveOneSetOut({
      candidates: ['off', 'strong', 'mild'],
      sets: ['a', 'b', 'c'],
      score: (candidate, set) => table[candidate]?.[set] ?? 0,
    });
    expect(result.chosen).toBe('mild');
    expect(
      result.splits.map(({ heldOut, chosen }) => [heldOut, chosen]),
    ).toEqual([
      ['a', 'mild'],
      ['b', 'mild'],
      ['c', 'strong'],
    ]);
    expect(result.splits[2]?.change).toBeCloseTo(-0.1);
    expect(result.qualifies).toBe(false);
    const withoutStrong = leaveOneSetOut({
      candidates: ['off', 'mild'],
      sets: ['a', 'b', 'c'],
      score: (candidate, set) => table[candidate]?.[set] ?? 0,
    });
    expect(withoutStrong.qualifies).toBe(true);
    expect(withoutStrong.splits.map((split) => split.score)).toEqual([
      0.55, 0.55, 0.51,
    ]);
  });
});

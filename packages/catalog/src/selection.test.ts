import { describe, expect, it } from 'vitest';
import { CatalogError } from './errors.js';
import {
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

describe('leaveOneSetOut', () => {
  it('tunes on one set and scores on the other, both ways', () => {
    const table: Record<string, Record<string, number>> = {
      off: { first: 0.5, second: 0.5 },
      strong: { first: 0.7, second: 0.4 },
      mild: { first: 0.6, second: 0.6 },
    };
    const splits = leaveOneSetOut({
      candidates: ['off', 'strong', 'mild'],
      sets: ['first', 'second'],
      score: (candidate, set) => table[candidate]?.[set] ?? 0,
    });
    expect(splits).toEqual([
      { train: 'first', test: 'second', chosen: 'strong', heldOut: 0.4 },
      { train: 'second', test: 'first', chosen: 'mild', heldOut: 0.6 },
    ]);
  });
});

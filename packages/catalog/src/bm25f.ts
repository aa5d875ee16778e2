import type { FieldName } from './prepare.js';
import { grown } from './terms.js';

/** Scoring knobs of {@link Bm25fIndex}; the defaults are {@link DEFAULT_TUNING}. */
export type SearchTuning = {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** Length normalization of the bag, 0 (none) to 1 (full). */
  b: number;
  /**
   * Term-frequency multiplier of each field inside the single bag of words (0 leaves the
   * field out of the bag). The bag is the model: one document per tool, Okapi BM25 over it.
   */
  bag: Readonly<Record<FieldName, number>>;
  /** Bonus for the share of a tool's name words that the query contains (times the best plain score). */
  nameCoverageWeight: number;
  /** The name-coverage bonus of a tool is at most this multiple of its own score (0: no cap). */
  nameCoverageCap: number;
  /** A term found in at least this share of the tools counts as common (see the padding rule of search). */
  commonTermShare: number;
  /**
   * Weight of the usage field: the search terms of past requests after which a tool was
   * called (see `ToolCatalog.recordUse`). A usage term's length-normalized frequency, times
   * this weight, joins the term's frequency in the tool's bag before BM25 saturation, so a
   * word counts at most as much as a word the tool's own text repeats (0 ignores usage).
   */
  usageWeight: number;
  /** Hits scoring below this share of the best hit are cut (0 keeps everything up to `limit`). */
  relativeCutoff: number;
};

/** Partial tuning: any knob, and any subset of the bag's fields, overrides {@link DEFAULT_TUNING}. */
export type SearchTuningOverrides = Partial<Omit<SearchTuning, 'bag'>> & {
  bag?: Partial<Record<FieldName, number>>;
};

/**
 * Tuning used by default: the plain single bag of words with the one refinement that the
 * leave-one-set-out selection over four development sets kept (record in the package
 * README): a capped name-coverage bonus.
 */
export const DEFAULT_TUNING: SearchTuning = {
  k1: 1.2,
  b: 0.75,
  bag: {
    name: 1,
    identifier: 0,
    target: 1,
    description: 1,
    parameters: 1,
    parameterText: 1,
  },
  nameCoverageWeight: 0.5,
  nameCoverageCap: 1,
  usageWeight: 1.5,
  relativeCutoff: 0.2,
  commonTermShare: 0.2,
};

/** {@link DEFAULT_TUNING} with `overrides` applied (the bag merged field by field). */
export function resolveTuning(
  overrides: SearchTuningOverrides | undefined,
): SearchTuning {
  return {
    ...DEFAULT_TUNING,
    ...overrides,
    bag: { ...DEFAULT_TUNING.bag, ...overrides?.bag },
  };
}

/** A growable list of tool positions over a preallocated typed array (no garbage per search). */
export class PositionList {
  /** Backing store; the first `length` items are valid. */
  items: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.items = new Int32Array(Math.max(1, capacity));
  }
  /** Appends a position (grows when full). */
  push(position: number): void {
    if (this.length === this.items.length)
      this.items = grown(this.items, this.length + 1);
    this.items[this.length] = position;
    this.length += 1;
  }
}

/** The `size` best positions of `candidates` by score, best first; ties go to the earlier position. */
export function topPositions(
  candidates: Pick<PositionList, 'items' | 'length'>,
  scores: Float64Array,
  size: number,
): number[] {
  const better = (left: number, right: number): boolean => {
    const difference = (scores[left] as number) - (scores[right] as number);
    return difference > 0 || (difference === 0 && left < right);
  };
  const best: number[] = [];
  const items = candidates.items;
  for (let index = 0; index < candidates.length; index += 1) {
    const candidate = items[index] as number;
    // Most candidates lose to the worst kept one: tell at once.
    if (best.length === size && !better(candidate, best[size - 1] as number))
      continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (better(candidate, best[middle] as number)) high = middle;
      else low = middle + 1;
    }
    best.splice(low, 0, candidate);
    if (best.length > size) best.pop();
  }
  return best;
}

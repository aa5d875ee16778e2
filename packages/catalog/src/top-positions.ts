import { grown } from './terms.js';

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

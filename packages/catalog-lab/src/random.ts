/**
 * A small deterministic generator of numbers in [0, 1) (mulberry32), so shuffles and
 * generated benchmark data are the same on every run for the same `seed`.
 *
 * @example
 * ```ts
 * const next = seededRandom(19);
 * next(); // the same number on every run
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), state | 1);
    value = (value + Math.imul(value ^ (value >>> 7), value | 61)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

// Test fixture: numbers in [0, 1) drawn the same on every run for the same seed.
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** A seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  const generator = xoroshiro128plus(seed);
  return () => (generator.next() >>> 0) / 4294967296;
}

import type { UserConfig } from 'vitest/config';

/** The vitest preset of every @heretek package. */
export function packageTestConfig(options?: {
  testTimeout?: number;
  hookTimeout?: number;
}): UserConfig;

/** The vitest preset of an editor plugin's `pnpm bench` (the `*.bench-run.ts` files under `bench/`, one at a time). */
export function benchRunConfig(options: {
  /** The package folder. */
  root: URL;
  /** The tests' `resolve` (their fixture aliases). */
  resolve?: UserConfig['resolve'];
}): UserConfig;

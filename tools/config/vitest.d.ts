import type { UserConfig } from 'vitest/config';

/** The vitest preset of every @heretek package. */
export function packageTestConfig(options?: {
  testTimeout?: number;
  hookTimeout?: number;
}): UserConfig;

// The vitest preset of every @heretek package: node environment, tests beside
// the code, the package version as __PACKAGE_VERSION__. Timeouts are ceilings
// for a loaded 2-core CI machine, not timings.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * @param {{ testTimeout?: number, hookTimeout?: number }} [options]
 */
export function packageTestConfig({
  testTimeout = 30_000,
  hookTimeout = 30_000,
} = {}) {
  const { version } = JSON.parse(readFileSync(resolve('package.json'), 'utf8'));
  return defineConfig({
    define: { __PACKAGE_VERSION__: JSON.stringify(version) },
    test: {
      environment: 'node',
      include: ['src/**/*.test.ts'],
      testTimeout,
      hookTimeout,
    },
  });
}

// The vitest preset of every @heretek package: node environment, tests beside
// the code, the package version as __PACKAGE_VERSION__. Timeouts are ceilings
// for a loaded 2-core CI machine, not timings.
//
// Two projects split the tests by what they prove (`vitest run` runs both):
// - `compute`: files named `*.compute.test.ts`, suites whose time goes to
//   computation (ranking evaluations over the benchmark sets, property tests
//   over pure functions, encoding and decoding in memory). Nothing they prove
//   depends on the Node version; any process, file or network use in them is
//   also made by a `runtime` test.
// - `runtime`: every other test file.
// CI runs every test on its first Node version and `vitest run --project
// runtime` (each package's `test:runtime` script) on the second.
//
// At least two test files run at once: vitest's default of one worker per
// core but one leaves a 2-core machine running files one at a time, while
// most files spend their time waiting on the processes and servers they start
// (the broker's suite used 70 % of one core, the gateway client's 37 %).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const COMPUTE = 'src/**/*.compute.test.ts';

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
      maxWorkers: Math.max(2, availableParallelism() - 1),
      testTimeout,
      hookTimeout,
      // Tests wait for a state with `expect.poll`, the one polling helper:
      // checked every 20 ms, failed after 30 s (a ceiling, not a timing).
      expect: { poll: { interval: 20, timeout: 30_000 } },
      projects: [
        {
          extends: true,
          test: {
            name: 'runtime',
            include: ['src/**/*.test.ts'],
            exclude: [COMPUTE],
          },
        },
        { extends: true, test: { name: 'compute', include: [COMPUTE] } },
      ],
    },
  });
}

/**
 * The vitest preset of an editor plugin's `pnpm bench`: the files named
 * `*.bench-run.ts` under `bench/`, one at a time (each runs the editor many
 * times), with the tests' `resolve` (their fixture aliases). Timeouts are
 * ceilings for a loaded 2-core machine, not timings.
 *
 * @param {{ root: URL, resolve?: import('vitest/config').UserConfig['resolve'] }} options
 */
export function benchRunConfig({ root, resolve: resolveOptions }) {
  return defineConfig({
    root: fileURLToPath(root),
    ...(resolveOptions === undefined ? {} : { resolve: resolveOptions }),
    test: {
      environment: 'node',
      include: ['bench/**/*.bench-run.ts'],
      fileParallelism: false,
      testTimeout: 1_800_000,
      hookTimeout: 120_000,
    },
  });
}

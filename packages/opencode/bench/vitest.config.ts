import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `pnpm bench`: the OpenCode runs of bench/opencode.bench-run.ts, one at a
// time. `#broker-fixtures/*` is the broker's test fixtures, as in the tests.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  resolve: {
    alias: {
      '#broker-fixtures': fileURLToPath(
        new URL('../../../apps/broker/src/__fixtures__', import.meta.url),
      ),
    },
  },
  test: {
    environment: 'node',
    include: ['bench/**/*.bench-run.ts'],
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
  },
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `pnpm bench`: the Claude Code runs of bench/claude-code.bench-run.ts, one
// at a time. The aliases are the tests' (loopback fixtures).
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  resolve: {
    alias: {
      '#broker-fixtures': fileURLToPath(
        new URL('../../../apps/broker/src/__fixtures__', import.meta.url),
      ),
      '#opencode-fixtures': fileURLToPath(
        new URL('../../opencode/src/__fixtures__', import.meta.url),
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

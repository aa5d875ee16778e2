import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import packageConfig from '../vitest.config.js';

// `pnpm bench`: the Claude Code runs of bench/claude-code.bench-run.ts, one
// at a time, with the tests' fixture aliases.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  resolve: packageConfig.resolve,
  test: {
    environment: 'node',
    include: ['bench/**/*.bench-run.ts'],
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
  },
});

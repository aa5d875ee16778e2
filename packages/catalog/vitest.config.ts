import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  define: { __PACKAGE_VERSION__: JSON.stringify(version) },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // Some tests spawn the CLI (a fresh Node process each); on a loaded 2-core CI runner
    // that can take several seconds, so allow well beyond vitest's 5 s default.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

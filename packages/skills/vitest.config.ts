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
    // The CLI and cross-implementation tests spawn processes; a shared 2-core machine can be slow.
    testTimeout: 30_000,
  },
});

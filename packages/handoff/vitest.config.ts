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
    // Ceilings, not timings: CI runs this suite beside other packages on 2
    // shared cores, where importing @a2a-js/sdk and the property runs can take
    // several times longer than on an idle machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

// The tsup preset of every published @heretek package: ESM for Node 20,
// declarations, source maps, the package version as __PACKAGE_VERSION__, and
// the private @heretek/internal sources bundled in (JavaScript and types), so
// no published package depends on an unpublished one.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'tsup';

const INTERNAL = '@heretek/internal';

/**
 * @param {{ entry: string[], bundleDependencies?: boolean } & import('tsup').Options} options
 */
export function libraryConfig({ entry, ...overrides }) {
  const { version } = JSON.parse(readFileSync(resolve('package.json'), 'utf8'));
  const internalIndex = resolve(
    import.meta.dirname ?? new URL('.', import.meta.url).pathname,
    '../../packages/internal/src/index.ts',
  );
  return defineConfig({
    entry,
    format: ['esm'],
    dts: {
      resolve: [INTERNAL],
      compilerOptions: { paths: { [INTERNAL]: [internalIndex] } },
    },
    sourcemap: true,
    clean: true,
    platform: 'node',
    target: 'node20',
    noExternal: [INTERNAL],
    define: { __PACKAGE_VERSION__: JSON.stringify(version) },
    ...overrides,
  });
}

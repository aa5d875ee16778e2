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
  const { dts: dtsOverrides, ...rest } = overrides;
  const dts =
    dtsOverrides === false
      ? false
      : {
          ...(typeof dtsOverrides === 'object' ? dtsOverrides : {}),
          resolve: [
            INTERNAL,
            ...(typeof dtsOverrides === 'object' &&
            Array.isArray(dtsOverrides.resolve)
              ? dtsOverrides.resolve
              : []),
          ],
          compilerOptions: {
            // The packages' tsconfig files are composite projects (for
            // `tsc -b`); the declaration bundle is a separate, plain build.
            composite: false,
            incremental: false,
            paths: {
              [INTERNAL]: [internalIndex],
              ...(typeof dtsOverrides === 'object'
                ? dtsOverrides.compilerOptions?.paths
                : {}),
            },
          },
        };
  return defineConfig({
    entry,
    format: ['esm'],
    dts,
    sourcemap: true,
    clean: true,
    platform: 'node',
    target: 'node20',
    noExternal: [INTERNAL],
    define: { __PACKAGE_VERSION__: JSON.stringify(version) },
    ...rest,
  });
}

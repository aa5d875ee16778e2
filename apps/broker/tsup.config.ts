import { libraryConfig } from '@heretek/config/tsup';
import { writeThirdPartyNotices } from './scripts/third-party-notices.mjs';

// One build for the library entry and the bin, with every dependency bundled
// and tree-shaken, split into shared chunks. The published package then has
// no runtime dependencies: `npx @heretek/broker` installs one package, and a
// cold start compiles a few modules instead of resolving and linking several
// hundred (see bench/cold-start.mjs). Bundled CommonJS code (ajv, undici) gets
// a real `require` for Node's builtins. Whitespace and syntax are minified
// (names kept, so stack traces still name functions): less to read and
// compile at a cold start. The source maps name the original files but leave
// their text out. The licences of everything bundled are
// collected into dist/THIRD-PARTY-NOTICES.md from esbuild's metafile.
export default libraryConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  noExternal: [/.*/],
  splitting: true,
  metafile: true,
  dts: {
    entry: 'src/index.ts',
    // The public types name types of the bundled workspace packages: inline
    // them from those packages' declarations so none is needed at install.
    resolve: [/^@heretek\//],
    compilerOptions: {
      paths: Object.fromEntries(
        ['catalog', 'gateway-client', 'prefix', 'skills'].map((name) => [
          `@heretek/${name}`,
          [`../../packages/${name}/dist/index.d.ts`],
        ]),
      ),
    },
  },
  banner: {
    js: "import { createRequire as __brokerCreateRequire } from 'node:module';\nconst require = __brokerCreateRequire(import.meta.url);",
  },
  esbuildOptions(options) {
    options.sourcesContent = false;
    options.minifyWhitespace = true;
    options.minifySyntax = true;
  },
  async onSuccess() {
    await writeThirdPartyNotices({
      metafile: 'dist/metafile-esm.json',
      out: 'dist/THIRD-PARTY-NOTICES.md',
    });
  },
});

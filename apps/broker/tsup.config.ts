import { libraryConfig } from '@heretek/config/tsup';
import { rmSync } from 'node:fs';

// Both builds write to dist/, so dist/ is emptied once here rather than by
// each build (whichever finished first would delete the other's files).
rmSync('dist', { recursive: true, force: true });

export default [
  // The library entry: dependencies stay external, as a library's should.
  libraryConfig({ entry: ['src/index.ts'], clean: false }),
  // The bin: one ESM file with every dependency bundled and tree-shaken, so a
  // cold start compiles one module instead of resolving and linking several
  // hundred (see bench/cold-start.mjs). Bundled CommonJS code (ajv, undici)
  // gets a real `require` for Node's builtins. The source map names the
  // original files but leaves their text out (the dependencies ship their own).
  libraryConfig({
    entry: ['src/cli.ts'],
    clean: false,
    dts: false,
    noExternal: [/.*/],
    splitting: true,
    banner: {
      js: "import { createRequire as __brokerCreateRequire } from 'node:module';\nconst require = __brokerCreateRequire(import.meta.url);",
    },
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
  }),
];

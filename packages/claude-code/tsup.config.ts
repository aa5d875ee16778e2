import { libraryConfig } from '@heretek/config/tsup';

// Two programs, each one file with everything bundled: the hook Claude Code
// runs, and the build step that writes the plugin folder (`plugin/`) with it.
export default libraryConfig({
  entry: ['src/heretek-hook.ts', 'src/write-plugin.ts'],
  dts: false,
  sourcemap: false,
  noExternal: [/.*/],
  splitting: false,
  outExtension: () => ({ js: '.mjs' }),
});

import { libraryConfig } from '@heretek/config/tsup';

// Two programs, each one file with everything bundled: the hook Claude Code
// runs, and the build step that writes the plugin folder (`plugin/`) with it.
// The build step reads the broker's meta-tool table from the installed
// broker, which the plugin folder gets a copy of anyway.
export default libraryConfig({
  entry: ['src/heretek-hook.ts', 'src/write-plugin.ts'],
  dts: false,
  sourcemap: false,
  noExternal: [/^(?!@heretek\/broker$).*/],
  external: ['@heretek/broker'],
  splitting: false,
  outExtension: () => ({ js: '.mjs' }),
});

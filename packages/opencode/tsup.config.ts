import { cpSync, rmSync } from 'node:fs';
import { listedMetaTools } from '@heretek/broker';
import { libraryConfig } from '@heretek/config/tsup';

// The plugin runs inside OpenCode (Bun). The repository's roles/ is copied
// beside the bundle: the prompts of a project that has no roles/ of its own.
// The broker's meta-tool definitions are written into the bundle, so
// OpenCode lists the tools without loading the broker's code, which is
// imported on the first meta-tool call.
export default libraryConfig({
  entry: ['src/index.ts'],
  define: { __HERETEK_META_TOOLS__: JSON.stringify(listedMetaTools()) },
  async onSuccess() {
    rmSync('dist/roles', { recursive: true, force: true });
    cpSync('../../roles', 'dist/roles', { recursive: true });
  },
});

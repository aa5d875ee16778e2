import { cpSync, rmSync } from 'node:fs';
import { libraryConfig } from '@heretek/config/tsup';

// The plugin runs inside OpenCode (Bun). The repository's roles/ is copied
// beside the bundle: the prompts of a project that has no roles/ of its own.
export default libraryConfig({
  entry: ['src/index.ts'],
  async onSuccess() {
    rmSync('dist/roles', { recursive: true, force: true });
    cpSync('../../roles', 'dist/roles', { recursive: true });
  },
});

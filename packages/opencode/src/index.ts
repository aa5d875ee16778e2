import type { PluginModule } from '@opencode-ai/plugin';
import { heretekPlugin } from './server.js';
import { setup } from './setup.js';

export type { HeretekPluginOptions } from './options.js';

/**
 * The OpenCode plugin, for both lines: OpenCode 1 calls `server()`
 * (`"plugin": ["@heretek/opencode"]` in `opencode.json`), OpenCode 2 calls
 * `setup(ctx)` (`"plugins": ["@heretek/opencode"]`). OpenCode 1.18.29 and
 * later call both; `setup()` then registers nothing.
 */
const plugin: PluginModule & { setup: typeof setup } = {
  id: '@heretek/opencode',
  server: heretekPlugin,
  setup,
};

export default plugin;

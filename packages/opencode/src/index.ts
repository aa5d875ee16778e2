import type { PluginModule } from '@opencode-ai/plugin';
import { heretekPlugin } from './plugin.js';

export type { HeretekPluginOptions } from './options.js';

/**
 * The OpenCode plugin: `"plugin": ["@heretek/opencode"]` in `opencode.json`,
 * or `["@heretek/opencode", { "profile": "android" }]` with options.
 */
const plugin: PluginModule = { id: '@heretek/opencode', server: heretekPlugin };

export default plugin;

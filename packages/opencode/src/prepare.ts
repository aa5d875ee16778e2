import type { PluginLog } from './meta-tools.js';
import { parsePluginOptions, type HeretekOptions } from './options.js';
import { loadRolePrompts, type RolePrompts } from './roles.js';

/**
 * What both OpenCode lines start from: the options over OpenCode's
 * environment (bad options are logged and ignored) and the six role prompts
 * (`undefined`, with a log line, when they cannot be assembled).
 */
export function preparePlugin(options: {
  rawOptions: unknown;
  directory: string;
  log: PluginLog;
}): { options: HeretekOptions; prompts: RolePrompts | undefined } {
  const { log } = options;
  let parsed: HeretekOptions;
  try {
    parsed = parsePluginOptions(options.rawOptions, process.env);
  } catch (error) {
    log('error', (error as Error).message);
    parsed = parsePluginOptions(undefined, process.env, { lenient: true });
  }
  try {
    return {
      options: parsed,
      prompts: loadRolePrompts({
        directory: options.directory,
        profile: parsed.profile,
      }),
    };
  } catch (error) {
    log(
      'error',
      `role agents not installed: ${(error as Error).message}. Fix it and restart OpenCode.`,
    );
    return { options: parsed, prompts: undefined };
  }
}

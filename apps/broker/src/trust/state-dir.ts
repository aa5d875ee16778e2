import { homedir } from 'node:os';
import path from 'node:path';

/**
 * The broker's state directory: `$XDG_STATE_HOME/heretek` when
 * `XDG_STATE_HOME` is an absolute path (the XDG Base Directory rule: a
 * relative value is ignored), else `~/.local/state/heretek`.
 */
export function heretekStateDir(
  options: { env?: NodeJS.ProcessEnv; home?: string } = {},
): string {
  const env = options.env ?? process.env;
  const xdg = env.XDG_STATE_HOME;
  const base =
    xdg !== undefined && path.isAbsolute(xdg)
      ? xdg
      : path.join(options.home ?? homedir(), '.local', 'state');
  return path.join(base, 'heretek');
}

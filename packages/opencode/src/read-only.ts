import {
  HARNESS_TOOLS,
  READ_ONLY_SHELL_VARIABLE,
  decideHarnessToolCall,
  parseReadOnlyShellPolicy,
  type ReadOnlyShellPolicy,
  type RoleName,
} from '@heretek/prefix';
import { metaToolList, type PluginLog } from './meta-tools.js';

/** One call of an OpenCode tool by one of the plugin's role agents. */
export type RoleToolCall = {
  role: RoleName;
  /** The tool's name as OpenCode gives it to the hook. */
  tool: string;
  /** The call's input (`args` in OpenCode 1, `input` in OpenCode 2). */
  input: unknown;
};

/**
 * The read-only rule for OpenCode's own tools, as a role agent calls them:
 * the refusal the model reads as the tool's result (`ROLE_FORBIDDEN: Role
 * "director" is read-only: ...`), or `undefined` when the call may run.
 */
export type ReadOnlyGuard = (call: RoleToolCall) => string | undefined;

/**
 * The guard of one OpenCode line, with the shell policy read once from
 * `HERETEK_READONLY_SHELL` in the plugin's environment. A value that is no
 * policy is logged and closes the shell to the read-only roles; their shell
 * refusals then say why. The broker's meta-tools are never refused here: the
 * broker gates each of their calls by role.
 */
export function createReadOnlyGuard(options: {
  harness: 'opencode-1' | 'opencode-2';
  env: NodeJS.ProcessEnv;
  log: PluginLog;
}): ReadOnlyGuard {
  const { harness } = options;
  let policy: ReadOnlyShellPolicy;
  let problem: string | undefined;
  try {
    policy = parseReadOnlyShellPolicy(options.env[READ_ONLY_SHELL_VARIABLE]);
  } catch (error) {
    policy = 'refuse';
    problem = (error as Error).message;
    options.log(
      'error',
      `${problem} Until then the shell runs nothing for director and qa-adversary.`,
    );
  }
  const metaTools = new Set<string>(metaToolList().map((tool) => tool.name));
  return ({ role, tool, input }) => {
    if (metaTools.has(tool)) return undefined;
    const decision = decideHarnessToolCall({
      harness,
      role,
      tool,
      input,
      shellPolicy: policy,
    });
    if (decision.allowed) return undefined;
    const shell = HARNESS_TOOLS[harness][tool] === 'shell';
    return `${decision.code}: ${decision.message}${shell && problem !== undefined ? ` (${problem})` : ''}`;
  };
}

/**
 * The plugin's generated files, made from `@heretek/prefix` at build time so
 * they never drift from the role prompts: six agents whose bodies are the
 * frozen prefix (layers 1+2) and whose `tools:` lines are one list, each
 * role's layers 3+4 for the `SubagentStart` hook, the hook table and the
 * MCP server entry.
 */
import { listedMetaTools, type MetaToolName } from '@heretek/broker';
import {
  PROFILE_NAMES,
  ROLE_NAMES,
  assemblePrefixCachedPrompt,
  roleDescription,
  splitAtFrozenPrefix,
  type RoleName,
} from '@heretek/prefix';
import {
  BROKER_BIN,
  CLAUDE_CODE_TOOLS,
  HOOK_ROLES_DIR_VARIABLE,
  HOOK_SCRIPT,
  PLUGIN_NAME,
  ROLE_LAYERS_FILE,
  ROLES_DIR,
  SERVER_NAME,
  claudeCodeToolName,
} from './layout.js';

/** The broker's meta-tools, from its table, as Claude Code names them for this plugin. */
export const BROKER_TOOLS = (
  Object.keys(listedMetaTools()) as MetaToolName[]
).map(claudeCodeToolName);

/** Layers 3+4 of every role, by profile then role. */
export type RoleLayers = Record<string, Record<RoleName, string>>;

/** The frozen prefix and every role's own layers, from the `roles/` of `workspaceRoot`. */
export function readRolePrompts(workspaceRoot: string): {
  frozen: string;
  layers: RoleLayers;
} {
  let frozen: string | undefined;
  const layers: RoleLayers = {};
  for (const profile of PROFILE_NAMES) {
    const byRole = {} as Record<RoleName, string>;
    for (const role of ROLE_NAMES) {
      const split = splitAtFrozenPrefix(
        assemblePrefixCachedPrompt({
          role,
          workspaceRoot,
          activeProfile: profile,
        }),
      );
      if (frozen !== undefined && split.frozen !== frozen)
        throw new Error(
          `the frozen prefix of ${role} (${profile}) differs from the others`,
        );
      frozen = split.frozen;
      byRole[role] = split.rest;
    }
    layers[profile] = byRole;
  }
  return { frozen: frozen!, layers };
}

/**
 * An agent file: front matter (its name and description; the one `tools:`
 * line of every role) and the frozen prefix as its body, the same bytes for
 * all six.
 */
export function agentFile(role: RoleName, frozen: string): string {
  return [
    '---',
    `name: ${role}`,
    `description: ${JSON.stringify(roleDescription(role))}`,
    `tools: ${[...CLAUDE_CODE_TOOLS, ...BROKER_TOOLS].join(', ')}`,
    '---',
    frozen,
  ].join('\n');
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The hook program run with `args` (exec form: no shell, paths with spaces stay whole). */
const hook = (...args: string[]) => ({
  type: 'command',
  command: 'node',
  args: [`\${CLAUDE_PLUGIN_ROOT}/${HOOK_SCRIPT}`, ...args],
});

/** Every generated file of the plugin folder, by path relative to it. */
export function pluginFiles(options: {
  workspaceRoot: string;
  version: string;
}): Record<string, string> {
  const { frozen, layers } = readRolePrompts(options.workspaceRoot);
  const files: Record<string, string> = {
    '.claude-plugin/plugin.json': json({
      name: PLUGIN_NAME,
      version: options.version,
      description:
        "The six heretek roles as subagents sharing one cached prompt prefix, and the broker's three lazy tools gated by each subagent's own role.",
      author: { name: 'heretek' },
      license: 'Apache-2.0',
      homepage:
        'https://github.com/heretek-ai/heretek-context-router/tree/main/packages/claude-code',
      repository: 'https://github.com/heretek-ai/heretek-context-router',
    }),
    '.mcp.json': json({
      mcpServers: {
        [SERVER_NAME]: {
          command: 'node',
          args: [`\${CLAUDE_PLUGIN_ROOT}/${BROKER_BIN}`],
          env: { [HOOK_ROLES_DIR_VARIABLE]: ROLES_DIR },
          alwaysLoad: true,
        },
      },
    }),
    'hooks/hooks.json': json({
      description:
        "Gives each heretek role its own prompt layers, hands the calling agent's role to the broker for every mcp_call_tool, and refuses a read-only role's own tool calls that would change the workspace.",
      hooks: {
        SessionStart: [{ hooks: [hook('session-start')] }],
        SubagentStart: [{ hooks: [hook('subagent-start')] }],
        PreToolUse: [
          // Every tool: a read-only role's call of any tool the rule does
          // not know to leave the workspace alone is refused.
          { matcher: '*', hooks: [hook('pre-tool-use', ROLES_DIR)] },
        ],
      },
    }),
    [ROLE_LAYERS_FILE]: json(layers),
  };
  for (const role of ROLE_NAMES)
    files[`agents/${role}.md`] = agentFile(role, frozen);
  return files;
}

/**
 * The plugin's names as Claude Code derives them: one home for each, so the
 * agents' `tools:` lines, the hook matchers and the MCP server's key agree.
 */
import type { MetaToolName } from '@heretek/broker';
import { HOOK_ROLES_DIR_VARIABLE } from '@heretek/internal';
import { isRoleName, type RoleName } from '@heretek/prefix';

/** The plugin's name: agents are `heretek:<role>`. */
export const PLUGIN_NAME = 'heretek';

/** The broker's key in `.mcp.json`: Claude Code names the server `plugin:heretek:broker`. */
export const SERVER_NAME = 'broker';

/**
 * How Claude Code prefixes the tools of this plugin's server
 * (`mcp__plugin_<plugin>_<server>__`, for `heretek` and `broker`); the
 * end-to-end tests check it against the names in Claude Code's requests.
 */
const TOOL_PREFIX = 'mcp__plugin_heretek_broker__';

/** A broker meta-tool as Claude Code names it for this plugin. */
export function claudeCodeToolName(name: MetaToolName): string {
  return `${TOOL_PREFIX}${name}`;
}

/** True for a tool of this plugin's broker server (the broker gates those itself). */
export function isBrokerToolName(name: string): boolean {
  return name.startsWith(TOOL_PREFIX);
}

/** The broker tool whose calls need the caller's role. */
export const CALL_TOOL = claudeCodeToolName('mcp_call_tool');

/**
 * Claude Code's own tools every role gets: the same list for all six, so
 * their requests share one tools array (a cache prefix).
 */
export const CLAUDE_CODE_TOOLS = ['Bash', 'Edit', 'Read', 'Write', 'WebFetch'];

/** The hook program, relative to the plugin folder. */
export const HOOK_SCRIPT = 'hooks/heretek-hook.mjs';

/** Each role's layers 3+4 per profile, relative to the plugin folder. */
export const ROLE_LAYERS_FILE = 'hooks/role-layers.json';

/** The broker's bundle, relative to the plugin folder. */
export const BROKER_BIN = 'broker/cli.js';

/**
 * The folder of the per-call role records, as Claude Code expands it for the
 * hook and the MCP server alike (`${CLAUDE_PLUGIN_DATA}` is the plugin's own
 * data folder under `~/.claude/plugins/data`).
 */
export const ROLES_DIR = '${CLAUDE_PLUGIN_DATA}/caller-roles';

/** The broker variable that takes the folder. */
export { HOOK_ROLES_DIR_VARIABLE };

/** The role of a Claude Code `agent_type`: `heretek:<role>`, else none. */
export function roleOfAgentType(agentType: unknown): RoleName | undefined {
  if (typeof agentType !== 'string') return undefined;
  const prefix = `${PLUGIN_NAME}:`;
  if (!agentType.startsWith(prefix)) return undefined;
  const role = agentType.slice(prefix.length);
  return isRoleName(role) ? role : undefined;
}

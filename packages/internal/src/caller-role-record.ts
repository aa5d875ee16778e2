/**
 * How a Claude Code hook hands the role of the agent behind a tool call to
 * the broker, out of the model's reach: the plugin's `PreToolUse` hook
 * (which Claude Code runs with the calling agent's `agent_type` and the
 * call's `tool_use_id`) writes one small JSON file per call into a folder,
 * and the broker, given that folder, reads and removes the file named after
 * the `tools/call` request's `_meta["claudecode/toolUseId"]`.
 */
import { join } from 'node:path';

/** The broker's variable naming the folder; set, every `mcp_call_tool` needs a record there. */
export const HOOK_ROLES_DIR_VARIABLE = 'HERETEK_HOOK_ROLES_DIR';

/** The `_meta` key of Claude Code's `tools/call` requests that carries the call's `tool_use_id`. */
export const TOOL_USE_ID_META_KEY = 'claudecode/toolUseId';

/** What the hook records for one call: the caller's role, or `null` for an agent that is not one of the roles. */
export type CallerRoleRecord = { role: string | null };

const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * The record's file for a `tool_use_id`, or `undefined` when the id could
 * name something other than one file in the folder (a path, an empty name).
 */
export function callerRoleRecordPath(
  directory: string,
  toolUseId: unknown,
): string | undefined {
  return typeof toolUseId === 'string' && TOOL_USE_ID.test(toolUseId)
    ? join(directory, `${toolUseId}.json`)
    : undefined;
}

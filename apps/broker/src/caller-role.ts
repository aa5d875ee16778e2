import { readFile, rm } from 'node:fs/promises';
import {
  HOOK_ROLES_DIR_VARIABLE,
  TOOL_USE_ID_META_KEY,
  callerRoleRecordPath,
  type CallerRoleRecord,
} from '@heretek/internal';
import { isRoleName, type RoleName } from '@heretek/prefix';
import { BrokerError } from './errors.js';

/**
 * The role of one `tools/call`, from the request's `_meta`: a role, or
 * `undefined` for the broker's own role. Throws `ROLE_UNVERIFIED` when no
 * trustworthy role arrived.
 */
export type CallerRole = (
  meta: Readonly<Record<string, unknown>> | undefined,
) => Promise<RoleName | undefined>;

const unverified = (why: string) =>
  new BrokerError({
    code: 'ROLE_UNVERIFIED',
    message: `${why} Nothing was sent. This broker takes each call's role from the Claude Code plugin's PreToolUse hook (${HOOK_ROLES_DIR_VARIABLE} is set): run Claude Code with hooks on (not --bare, no "disableAllHooks") and the @heretek/claude-code plugin enabled. A role written into the call's arguments is never used.`,
  });

/**
 * Reads each call's role from the record the Claude Code plugin's `PreToolUse` hook wrote for
 * its `tool_use_id`, used once and removed. Without a record naming a role the call is refused:
 * the model can write any argument, but not the hook's record.
 */
export function hookCallerRole(directory: string): CallerRole {
  return async (meta) => {
    const toolUseId = meta?.[TOOL_USE_ID_META_KEY];
    const file = callerRoleRecordPath(directory, toolUseId);
    if (file === undefined)
      throw unverified(
        `The call carries no Claude Code tool use id (_meta["${TOOL_USE_ID_META_KEY}"]), so its caller is unknown.`,
      );
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw unverified(
        `No role was recorded for this call (tool use ${toolUseId as string}): the plugin's PreToolUse hook did not run.`,
      );
    }
    await rm(file, { force: true });
    let record: CallerRoleRecord;
    try {
      record = JSON.parse(text) as CallerRoleRecord;
    } catch {
      throw unverified(`The role record of this call is not JSON.`);
    }
    if (record.role === null) return undefined;
    if (!isRoleName(record.role))
      throw unverified(
        `The role record of this call names no known role (${JSON.stringify(record.role).slice(0, 60)}).`,
      );
    return record.role;
  };
}

/** The server's `callerRole` option for a configuration: the hook's records when `HERETEK_HOOK_ROLES_DIR` is set. */
export function callerRoleOption(config: {
  hookRolesDir: string | undefined;
}): { callerRole?: CallerRole } {
  return config.hookRolesDir === undefined
    ? {}
    : { callerRole: hookCallerRole(config.hookRolesDir) };
}

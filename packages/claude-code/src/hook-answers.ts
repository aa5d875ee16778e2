/**
 * What the plugin's hook program answers, for each event: the role's own
 * layers as context; before a tool call, the call's role record (the
 * broker's `mcp_call_tool`) or the read-only rule's decision (Claude Code's
 * own tools).
 */
import {
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { callerRoleRecordPath, type CallerRoleRecord } from '@heretek/internal';
import {
  HARNESS_TOOLS,
  decideHarnessToolCall,
  parseReadOnlyShellPolicy,
  type ReadOnlyShellPolicy,
} from '@heretek/prefix';
import { CALL_TOOL, isBrokerToolName, roleOfAgentType } from './layout.js';
import type { RoleLayers } from './plugin-files.js';

/** What Claude Code sends a hook; only the fields read here. */
export type HookInput = {
  agent_type?: unknown;
  tool_use_id?: unknown;
  tool_name?: unknown;
  tool_input?: unknown;
};

/** What the hook answers: its stdout, and an exit code (1: a problem Claude Code shows, the session goes on). */
export type HookAnswer = { stdout?: string; stderr?: string; code: 0 | 1 };

export const EVENT_NAMES = {
  'subagent-start': 'SubagentStart',
  'session-start': 'SessionStart',
} as const;

/** The role's own layers as the hook's `additionalContext`, or nothing for an agent that is not a role. */
export function roleContext(options: {
  event: keyof typeof EVENT_NAMES;
  input: HookInput;
  layers: RoleLayers;
  profile: string | undefined;
}): HookAnswer {
  const role = roleOfAgentType(options.input.agent_type);
  if (role === undefined) return { code: 0 };
  const profile =
    options.profile === undefined || options.profile === ''
      ? 'core'
      : options.profile;
  const text = options.layers[profile]?.[role];
  if (text === undefined)
    return {
      code: 1,
      stderr: `heretek: HERETEK_BROKER_PROFILE=${JSON.stringify(profile)} is no profile (${Object.keys(options.layers).join(', ')}); ${role} starts without its role layers. Set one of them and restart Claude Code.\n`,
    };
  return {
    code: 0,
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: EVENT_NAMES[options.event],
        additionalContext: text,
      },
    }),
  };
}

/**
 * How long a record may wait for its call. A record is removed when the
 * broker reads it; one whose call never reached the broker (the user denied
 * it) is removed by a later hook run once it is this old.
 */
const RECORD_LIFETIME_MS = 3_600_000;

/** Removes the records older than {@link RECORD_LIFETIME_MS}; a file that went away meanwhile is fine. */
function pruneRecords(directory: string, now: number): void {
  for (const name of readdirSync(directory)) {
    const file = join(directory, name);
    try {
      if (now - statSync(file).mtimeMs > RECORD_LIFETIME_MS)
        rmSync(file, { force: true });
    } catch {
      // Read and removed by the broker between the listing and the stat.
    }
  }
}

/** Writes the call's role record (atomically: a file of its own, then renamed), and prunes stale ones. */
export function recordCallerRole(options: {
  input: HookInput;
  directory: string;
}): HookAnswer {
  const file = callerRoleRecordPath(
    options.directory,
    options.input.tool_use_id,
  );
  if (file === undefined)
    return {
      code: 1,
      stderr: `heretek: the PreToolUse input carries no usable tool_use_id; the broker will refuse this call (ROLE_UNVERIFIED).\n`,
    };
  const record: CallerRoleRecord = {
    role: roleOfAgentType(options.input.agent_type) ?? null,
  };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(record), { mode: 0o600 });
  renameSync(partial, file);
  pruneRecords(dirname(file), Date.now());
  return { code: 0 };
}

/** The shell policy the variable names; a bad value closes the shell and says why. */
function shellPolicyOf(value: string | undefined): {
  policy: ReadOnlyShellPolicy;
  problem?: string;
} {
  try {
    return { policy: parseReadOnlyShellPolicy(value) };
  } catch (error) {
    return { policy: 'refuse', problem: (error as Error).message };
  }
}

/**
 * The read-only rule for one of Claude Code's own tools: for a plugin agent
 * whose role is read-only, a `deny` with the rule's message for a tool that
 * changes the workspace (or one the rule does not know, or a shell command
 * outside the policy); nothing for every other call and every other agent.
 */
export function guardOwnTool(options: {
  input: HookInput;
  /** `HERETEK_READONLY_SHELL` as the hook's environment has it. */
  shellPolicy: string | undefined;
}): HookAnswer {
  const { input } = options;
  const role = roleOfAgentType(input.agent_type);
  if (role === undefined || typeof input.tool_name !== 'string')
    return { code: 0 };
  const { policy, problem } = shellPolicyOf(options.shellPolicy);
  const decision = decideHarnessToolCall({
    harness: 'claude-code',
    role,
    tool: input.tool_name,
    input: input.tool_input,
    shellPolicy: policy,
  });
  if (decision.allowed) return { code: 0 };
  const shell = HARNESS_TOOLS['claude-code'][input.tool_name] === 'shell';
  const reason = `${decision.code}: ${decision.message}${shell && problem !== undefined ? ` (${problem})` : ''}`;
  return {
    code: 0,
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason,
      },
    }),
  };
}

/**
 * `PreToolUse`, run for every tool call: `mcp_call_tool` gets its caller's
 * role record, the broker's other tools pass (the broker needs no role for
 * them), and Claude Code's own tools go through {@link guardOwnTool}.
 */
export function preToolUse(options: {
  input: HookInput;
  directory: string;
  shellPolicy: string | undefined;
}): HookAnswer {
  const tool = options.input.tool_name;
  if (tool === CALL_TOOL) return recordCallerRole(options);
  if (typeof tool === 'string' && isBrokerToolName(tool)) return { code: 0 };
  return guardOwnTool(options);
}

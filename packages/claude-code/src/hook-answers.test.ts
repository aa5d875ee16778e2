import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  guardOwnTool,
  preToolUse,
  recordCallerRole,
  roleContext,
} from './hook-answers.js';
import { CALL_TOOL } from './layout.js';
import { BROKER_TOOLS } from './plugin-files.js';

const layers = {
  core: { director: 'DIRECTOR CORE' },
  android: { director: 'DIRECTOR ANDROID' },
} as never;

describe('roleContext', () => {
  it('answers a role agent with its layers for HERETEK_BROKER_PROFILE, core by default', () => {
    const answer = (profile: string | undefined) =>
      JSON.parse(
        roleContext({
          event: 'subagent-start',
          input: { agent_type: 'heretek:director' },
          layers,
          profile,
        }).stdout!,
      );
    expect(answer(undefined)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'SubagentStart',
        additionalContext: 'DIRECTOR CORE',
      },
    });
    expect(answer('android').hookSpecificOutput.additionalContext).toBe(
      'DIRECTOR ANDROID',
    );
  });

  it('leaves other agents alone and names a bad profile', () => {
    expect(
      roleContext({
        event: 'session-start',
        input: {},
        layers,
        profile: undefined,
      }),
    ).toEqual({ code: 0 });
    const bad = roleContext({
      event: 'session-start',
      input: { agent_type: 'heretek:director' },
      layers,
      profile: 'gaming',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'HERETEK_BROKER_PROFILE="gaming" is no profile (core, android)',
    );
  });
});

describe('recordCallerRole', () => {
  it("writes the caller's role (null outside the roles) under the tool use id, and nothing for an id that is a path", () => {
    const directory = join(
      mkdtempSync(join(tmpdir(), 'heretek-hook-')),
      'roles',
    );
    expect(
      recordCallerRole({
        input: { agent_type: 'heretek:staff-backend', tool_use_id: 'toolu_1' },
        directory,
      }),
    ).toEqual({ code: 0 });
    recordCallerRole({
      input: { agent_type: 'general-purpose', tool_use_id: 'toolu_2' },
      directory,
    });
    expect(readFileSync(join(directory, 'toolu_1.json'), 'utf8')).toBe(
      '{"role":"staff-backend"}',
    );
    expect(readFileSync(join(directory, 'toolu_2.json'), 'utf8')).toBe(
      '{"role":null}',
    );
    expect(
      recordCallerRole({
        input: { agent_type: 'heretek:staff-backend', tool_use_id: '../x' },
        directory,
      }).code,
    ).toBe(1);
    expect(readdirSync(directory).sort()).toEqual([
      'toolu_1.json',
      'toolu_2.json',
    ]);
  });

  it('removes records left an hour or more by calls that never reached the broker', () => {
    const directory = mkdtempSync(join(tmpdir(), 'heretek-hook-'));
    const stale = join(directory, 'toolu_old.json');
    const recent = join(directory, 'toolu_recent.json');
    writeFileSync(stale, '{"role":null}');
    writeFileSync(recent, '{"role":null}');
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    recordCallerRole({
      input: { agent_type: 'heretek:director', tool_use_id: 'toolu_new' },
      directory,
    });
    expect(readdirSync(directory).sort()).toEqual([
      'toolu_new.json',
      'toolu_recent.json',
    ]);
  });
});

/** The deny reason of an answer, or undefined when the call may go on. */
const denied = (answer: { stdout?: string; code: number }) => {
  expect(answer.code).toBe(0);
  if (answer.stdout === undefined) return undefined;
  const { hookSpecificOutput } = JSON.parse(answer.stdout) as {
    hookSpecificOutput: Record<string, string>;
  };
  expect(hookSpecificOutput).toMatchObject({
    hookEventName: 'PreToolUse',
    permissionDecision: 'deny',
  });
  return hookSpecificOutput.permissionDecisionReason;
};

describe('guardOwnTool', () => {
  const guard = (
    agent_type: unknown,
    tool_name: string,
    tool_input: unknown = {},
    shellPolicy?: string,
  ) =>
    denied(
      guardOwnTool({
        input: { agent_type, tool_name, tool_input },
        shellPolicy,
      }),
    );

  it("denies the plugin's read-only roles a write, naming the role and the writer roles", () => {
    for (const role of ['director', 'qa-adversary']) {
      const reason = guard(`heretek:${role}`, 'Write', {
        file_path: '/tmp/x',
        content: 'x',
      });
      expect(reason).toMatch(
        new RegExp(`^ROLE_FORBIDDEN: Role "${role}" is read-only: Write`),
      );
      expect(reason).toContain('staff-backend');
    }
    expect(guard('heretek:director', 'NotebookEdit')).toBeDefined();
    expect(guard('heretek:director', 'mcp__other__tool')).toContain(
      'not known to leave the workspace unchanged',
    );
  });

  it("lets the writer roles, Claude Code's agents and the user's agents (a role name without the plugin prefix too) use every tool", () => {
    for (const agent of [
      'heretek:staff-backend',
      'heretek:security-researcher',
      'director',
      'qa-adversary',
      'general-purpose',
      undefined,
    ]) {
      expect(guard(agent, 'Write')).toBeUndefined();
      expect(guard(agent, 'Bash', { command: 'rm -rf x' })).toBeUndefined();
    }
  });

  it('lets a read-only role read, and run the shell as HERETEK_READONLY_SHELL says; a bad value closes the shell and names the fix', () => {
    expect(guard('heretek:director', 'Read', { file_path: '/x' })).toBe(
      undefined,
    );
    const ls = { command: 'ls -la' };
    expect(guard('heretek:director', 'Bash', ls)).toBeUndefined();
    expect(
      guard('heretek:director', 'Bash', { command: 'echo x > y' }),
    ).toContain('output redirection');
    expect(guard('heretek:director', 'Bash', ls, 'refuse')).toContain(
      'closed to read-only roles',
    );
    expect(
      guard('heretek:director', 'Bash', { command: 'rm x' }, 'allow'),
    ).toBeUndefined();
    const bad = guard('heretek:director', 'Bash', ls, 'sometimes');
    expect(bad).toContain('closed to read-only roles');
    expect(bad).toContain(
      'HERETEK_READONLY_SHELL="sometimes" is not a shell policy',
    );
    // A bad value never opens or closes anything but the shell.
    expect(guard('heretek:director', 'Read', {}, 'sometimes')).toBeUndefined();
  });
});

describe('preToolUse', () => {
  it("records mcp_call_tool's caller, passes the broker's other tools, and guards Claude Code's own", () => {
    const directory = mkdtempSync(join(tmpdir(), 'heretek-hook-'));
    const run = (tool_name: string) =>
      preToolUse({
        input: {
          agent_type: 'heretek:director',
          tool_use_id: `toolu_${tool_name.length}`,
          tool_name,
          tool_input: {},
        },
        directory,
        shellPolicy: undefined,
      });
    expect(run(CALL_TOOL)).toEqual({ code: 0 });
    expect(readdirSync(directory)).toEqual([`toolu_${CALL_TOOL.length}.json`]);
    for (const tool of BROKER_TOOLS.slice(0, 2))
      expect(run(tool)).toEqual({ code: 0 });
    expect(denied(run('Edit'))).toContain('Role "director" is read-only');
    expect(readdirSync(directory)).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import {
  HARNESS_NAMES,
  HARNESS_TOOLS,
  InvalidArgumentError,
  ROLE_NAMES,
  UnknownRoleError,
  decideHarnessToolCall,
  isReadOnlyRole,
  parseReadOnlyShellPolicy,
  type HarnessName,
  type ReadOnlyShellPolicy,
} from './index.js';

const WRITERS = ROLE_NAMES.filter((role) => !isReadOnlyRole(role));
const READ_ONLY = ['director', 'qa-adversary'] as const;

/** The shell tool of each harness. */
const SHELL: Record<HarnessName, string> = {
  'claude-code': 'Bash',
  'opencode-1': 'bash',
  'opencode-2': 'shell',
};

const decide = (
  harness: HarnessName,
  role: string,
  tool: string,
  input: unknown = {},
  shellPolicy?: ReadOnlyShellPolicy,
) =>
  decideHarnessToolCall({
    harness,
    role,
    tool,
    input,
    ...(shellPolicy === undefined ? {} : { shellPolicy }),
  });

const toolsOf = (harness: HarnessName, effect: string) =>
  Object.entries(HARNESS_TOOLS[harness])
    .filter(([, value]) => value === effect)
    .map(([name]) => name);

describe('decideHarnessToolCall', () => {
  it('has the write tools and the shell each harness sends, in its table', () => {
    expect(toolsOf('claude-code', 'write')).toEqual([
      'Write',
      'Edit',
      'MultiEdit',
      'NotebookEdit',
    ]);
    expect(toolsOf('opencode-1', 'write')).toEqual([
      'write',
      'edit',
      'multiedit',
      'patch',
      'apply_patch',
    ]);
    expect(toolsOf('opencode-2', 'write')).toEqual([
      'write',
      'edit',
      'patch',
      'execute',
    ]);
    for (const harness of HARNESS_NAMES)
      expect(toolsOf(harness, 'shell')).toEqual([SHELL[harness]]);
  });

  it('refuses every write tool for the read-only roles, naming the role and the writer roles to hand the change to', () => {
    for (const harness of HARNESS_NAMES)
      for (const tool of toolsOf(harness, 'write'))
        for (const role of READ_ONLY) {
          const decision = decide(harness, role, tool);
          expect(decision).toMatchObject({
            allowed: false,
            code: 'ROLE_FORBIDDEN',
          });
          const message = decision.allowed ? '' : decision.message;
          expect(message).toContain(`Role "${role}" is read-only: ${tool}`);
          expect(message).toContain(
            'staff-backend, staff-frontend, staff-mobile or security-researcher',
          );
          expect(message).toContain('handoff envelope with intent "mutating"');
        }
  });

  it('allows every tool, known or not, and any shell command, for the writer roles', () => {
    for (const harness of HARNESS_NAMES)
      for (const role of WRITERS) {
        for (const tool of [
          ...Object.keys(HARNESS_TOOLS[harness]),
          'SomethingNew',
        ])
          expect(decide(harness, role, tool)).toEqual({ allowed: true });
        expect(
          decide(harness, role, SHELL[harness], { command: 'rm -rf x' }),
        ).toEqual({ allowed: true });
      }
  });

  it('allows the reading tools for the read-only roles', () => {
    for (const harness of HARNESS_NAMES) {
      const reading = toolsOf(harness, 'read');
      expect(reading.length).toBeGreaterThan(5);
      for (const tool of reading)
        for (const role of READ_ONLY)
          expect(decide(harness, role, tool)).toEqual({ allowed: true });
    }
    // Delegating is how the director works.
    expect(HARNESS_TOOLS['claude-code'].Agent).toBe('read');
    expect(HARNESS_TOOLS['opencode-1'].task).toBe('read');
    expect(HARNESS_TOOLS['opencode-2'].subagent).toBe('read');
  });

  it('counts a tool the table does not know as changing the workspace, also one named like a tool of another harness', () => {
    for (const tool of [
      'mcp__github__create_issue',
      'EnterWorktree',
      'toString',
    ])
      expect(decide('claude-code', 'director', tool)).toMatchObject({
        allowed: false,
        message: expect.stringContaining(
          `${tool} is not known to leave the workspace unchanged`,
        ),
      });
    expect(decide('claude-code', 'qa-adversary', 'write').allowed).toBe(false);
    expect(decide('opencode-2', 'qa-adversary', 'bash').allowed).toBe(false);
    expect(decide('opencode-2', 'qa-adversary', 'apply_patch').allowed).toBe(
      false,
    );
  });

  it('runs read-only shell commands for the read-only roles under allow-list (the default), and refuses the rest with the reason', () => {
    for (const harness of HARNESS_NAMES) {
      const shell = SHELL[harness];
      expect(
        decide(harness, 'qa-adversary', shell, { command: 'git diff' }),
      ).toEqual({ allowed: true });
      const refused = decide(harness, 'qa-adversary', shell, {
        command: 'echo x > file.txt',
      });
      expect(refused.allowed).toBe(false);
      expect(refused.allowed ? '' : refused.message).toMatch(
        new RegExp(
          `^Role "qa-adversary" is read-only: ${shell} runs only read-only commands for it, and the command holds an output redirection`,
        ),
      );
      expect(refused.allowed ? '' : refused.message).toContain(
        'If the command only reads, write it with the read-only commands your permissions list',
      );
      // No command text: nothing to check.
      for (const input of [{}, { command: 7 }, null, 'ls'])
        expect(decide(harness, 'director', shell, input)).toMatchObject({
          allowed: false,
          message: expect.stringContaining(
            `${shell} runs only read-only commands for it, and this call has no command text to check`,
          ),
        });
    }
  });

  it('closes or opens the shell for the read-only roles by policy, never the write tools', () => {
    const ls = { command: 'ls' };
    const rm = { command: 'rm -rf x' };
    expect(
      decide('claude-code', 'director', 'Bash', ls, 'refuse'),
    ).toMatchObject({
      allowed: false,
      message: expect.stringContaining(
        'the shell (Bash) is closed to read-only roles here. Nothing ran. Read files with the reading tools; for a command that must run, hand it to a writer role',
      ),
    });
    expect(decide('claude-code', 'director', 'Bash', rm, 'allow')).toEqual({
      allowed: true,
    });
    expect(
      decide('claude-code', 'director', 'Write', {}, 'allow').allowed,
    ).toBe(false);
    expect(decide('claude-code', 'staff-mobile', 'Bash', rm, 'refuse')).toEqual(
      { allowed: true },
    );
  });

  it('throws for a role outside the six and for an unknown harness', () => {
    expect(() => decide('claude-code', 'heretek:director', 'Read')).toThrow(
      UnknownRoleError,
    );
    expect(() => decide('cursor' as HarnessName, 'director', 'Read')).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('parseReadOnlyShellPolicy', () => {
  it('reads the three policies, allow-list when unset or empty, and names the fix for anything else', () => {
    expect(parseReadOnlyShellPolicy(undefined)).toBe('allow-list');
    expect(parseReadOnlyShellPolicy('')).toBe('allow-list');
    for (const policy of ['allow-list', 'refuse', 'allow'])
      expect(parseReadOnlyShellPolicy(policy)).toBe(policy);
    expect(() => parseReadOnlyShellPolicy('deny')).toThrow(
      'HERETEK_READONLY_SHELL="deny" is not a shell policy: set it to allow-list, refuse, allow (unset means allow-list), then restart the harness.',
    );
  });
});

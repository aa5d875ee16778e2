import { describe, expect, it } from 'vitest';
import type { PluginLog } from './meta-tools.js';
import { createReadOnlyGuard } from './read-only.js';

/** A guard for `harness` with `HERETEK_READONLY_SHELL` set to `shell`, and the lines it logged. */
function guardWith(
  harness: 'opencode-1' | 'opencode-2',
  shell?: string,
): { guard: ReturnType<typeof createReadOnlyGuard>; logged: string[] } {
  const logged: string[] = [];
  const log: PluginLog = (level, message) =>
    logged.push(`${level}: ${message}`);
  const env = shell === undefined ? {} : { HERETEK_READONLY_SHELL: shell };
  return { guard: createReadOnlyGuard({ harness, env, log }), logged };
}

const WRITE = { filePath: '/tmp/x.txt', content: 'x' };

describe('createReadOnlyGuard', () => {
  it("refuses a read-only role's write tools with the rule's message behind ROLE_FORBIDDEN, and lets writer roles and reading tools through", () => {
    const { guard, logged } = guardWith('opencode-1');
    expect(guard({ role: 'director', tool: 'write', input: WRITE })).toMatch(
      /^ROLE_FORBIDDEN: Role "director" is read-only: write changes files\. Nothing ran\./,
    );
    expect(
      guard({ role: 'qa-adversary', tool: 'apply_patch', input: {} }),
    ).toMatch(/^ROLE_FORBIDDEN: Role "qa-adversary" is read-only/);
    expect(
      guard({ role: 'staff-backend', tool: 'write', input: WRITE }),
    ).toBeUndefined();
    expect(
      guard({ role: 'director', tool: 'read', input: { filePath: '/x' } }),
    ).toBeUndefined();
    expect(logged).toEqual([]);
  });

  it("lets a read-only role hand work to any agent, a writer role or OpenCode's own", () => {
    const v1 = guardWith('opencode-1').guard;
    for (const agent of ['staff-backend', 'general'])
      expect(
        v1({
          role: 'director',
          tool: 'task',
          input: { description: 'd', prompt: 'p', subagent_type: agent },
        }),
      ).toBeUndefined();
    const v2 = guardWith('opencode-2').guard;
    for (const agent of ['staff-backend', 'general'])
      expect(
        v2({
          role: 'qa-adversary',
          tool: 'subagent',
          input: { agent, description: 'd', prompt: 'p' },
        }),
      ).toBeUndefined();
  });

  it("never refuses the broker's meta-tools, which the broker gates itself", () => {
    const { guard } = guardWith('opencode-2');
    for (const tool of [
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ])
      expect(guard({ role: 'director', tool, input: {} })).toBeUndefined();
  });

  it("refuses OpenCode 2's Code Mode execute and tools the table does not know for a read-only role", () => {
    const { guard } = guardWith('opencode-2');
    expect(
      guard({ role: 'director', tool: 'execute', input: { code: '1' } }),
    ).toMatch(/^ROLE_FORBIDDEN: Role "director" is read-only: execute/);
    expect(
      guard({ role: 'director', tool: 'opencode_worktree_create', input: {} }),
    ).toMatch(/counts as changing it/);
  });

  it('runs the shell policy of HERETEK_READONLY_SHELL: allow-list by default, refuse, allow', () => {
    const listed = guardWith('opencode-2').guard;
    expect(
      listed({ role: 'director', tool: 'shell', input: { command: 'ls' } }),
    ).toBeUndefined();
    expect(
      listed({
        role: 'director',
        tool: 'shell',
        input: { command: 'echo x > f' },
      }),
    ).toMatch(/^ROLE_FORBIDDEN: .*output redirection/);
    const closed = guardWith('opencode-1', 'refuse').guard;
    expect(
      closed({ role: 'director', tool: 'bash', input: { command: 'ls' } }),
    ).toMatch(/the shell \(bash\) is closed to read-only roles/);
    const open = guardWith('opencode-1', 'allow').guard;
    expect(
      open({
        role: 'director',
        tool: 'bash',
        input: { command: 'echo x > f' },
      }),
    ).toBeUndefined();
  });

  it('logs a value that is no policy once, closes the shell to read-only roles, and names the variable in each shell refusal', () => {
    const { guard, logged } = guardWith('opencode-1', 'sometimes');
    expect(logged).toEqual([
      expect.stringMatching(
        /^error: HERETEK_READONLY_SHELL="sometimes" is not a shell policy: set it to allow-list, refuse, allow .* Until then the shell runs nothing for director and qa-adversary\.$/,
      ),
    ]);
    const shell = guard({
      role: 'director',
      tool: 'bash',
      input: { command: 'ls' },
    });
    expect(shell).toMatch(/is closed to read-only roles/);
    expect(shell).toContain('HERETEK_READONLY_SHELL="sometimes"');
    expect(
      guard({ role: 'director', tool: 'write', input: WRITE }),
    ).not.toContain('HERETEK_READONLY_SHELL');
    expect(
      guard({ role: 'staff-mobile', tool: 'bash', input: { command: 'make' } }),
    ).toBeUndefined();
    expect(logged).toHaveLength(1);
  });
});

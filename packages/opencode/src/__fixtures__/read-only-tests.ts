/**
 * Test fixture: the tests of the read-only rule that both OpenCode lines'
 * end-to-end files run on their own sessions, where agents tried to change
 * their project folder with OpenCode's own tools (see `workspaceScript`):
 * each role as the primary agent of its run, director also in its own run,
 * qa-adversary also as director's subagent (a second delegation, after the
 * one whose first request the cache figures measure), and, in the user's
 * run, a user's agent named after a role and OpenCode's `general` agent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ROLE_NAMES, isReadOnlyRole, type RoleName } from '@heretek/prefix';
import { expect, it } from 'vitest';
import { agentRequests } from '#broker-fixtures/model-stand-in.js';
import { SEED, attempted, workspaceResults, type Outcome } from './runs.js';

/** The name qa-adversary's attempts carry when director delegates them. */
export const DELEGATED_QA = 'delegated-qa-adversary';
/** The names the attempts of the user's run carry: their agent named after a role, OpenCode's general agent. */
export const USER_AGENTS = ['user-qa-adversary', 'general'] as const;

/** Options of {@link readOnlyRoleTests}. */
export type ReadOnlyRoleTests = {
  /** OpenCode 1 (`bash`) or OpenCode 2 (`shell`). */
  line: 1 | 2;
  /** A run's outcome by name: each role's, and `user-agents`. */
  outcome: (name: string) => Outcome;
  /** A run's project folder by name. */
  projectOf: (name: string) => string;
  /** The message of a refused call, from the tool result the model received. */
  refusalOf: (result: string | undefined) => string | undefined;
};

/** Declares the tests (inside the caller's `describe`). */
export function readOnlyRoleTests(options: ReadOnlyRoleTests): void {
  const { outcome, projectOf, refusalOf } = options;
  const shellTool = options.line === 1 ? 'bash' : 'shell';
  /** An agent's attempts in one run: their files' folder and the results the model received. */
  const attemptsOf = (run: string, agent: string) => {
    const folder = projectOf(run);
    return {
      folder,
      results: workspaceResults(
        agentRequests(outcome(run).requests),
        folder,
        agent,
      ),
    };
  };
  const readOnly: Array<{ run: string; agent: string; role: RoleName }> = [
    { run: 'director', agent: 'director', role: 'director' },
    { run: 'qa-adversary', agent: 'qa-adversary', role: 'qa-adversary' },
    { run: 'director', agent: DELEGATED_QA, role: 'qa-adversary' },
  ];

  it('leaves no file from director and qa-adversary, primary or delegated, and answers each attempt with a refusal naming the role', () => {
    for (const { run, agent, role } of readOnly) {
      const { folder, results } = attemptsOf(run, agent);
      expect(existsSync(attempted(folder, agent, 'write'))).toBe(false);
      expect(existsSync(attempted(folder, agent, 'shell'))).toBe(false);
      const [write, shell] = results.map(refusalOf);
      expect(write).toMatch(
        new RegExp(
          `^ROLE_FORBIDDEN: Role "${role}" is read-only: write changes files\\. Nothing ran\\.`,
        ),
      );
      expect(write).toContain(
        'hand it to a writer role (staff-backend, staff-frontend, staff-mobile or security-researcher)',
      );
      expect(shell).toMatch(
        new RegExp(
          `^ROLE_FORBIDDEN: Role "${role}" is read-only: ${shellTool} runs only read-only commands for it, and the command holds an output redirection`,
        ),
      );
    }
  });

  it('lets director and qa-adversary read a file and run a read-only command', () => {
    for (const { run, agent } of readOnly) {
      const [, , read, shell] = attemptsOf(run, agent).results;
      expect(read).toContain(SEED);
      expect(shell).toBe(`${SEED.length}\n`);
    }
  });

  it(`lets the four writer roles, a user's agent named after a role and OpenCode's general agent write with write and with ${shellTool}`, () => {
    const writers = ROLE_NAMES.filter((role) => !isReadOnlyRole(role));
    expect(writers).toHaveLength(4);
    const written = [
      ...writers.map((role) => ({ run: role, agent: role })),
      ...USER_AGENTS.map((agent) => ({ run: 'user-agents', agent })),
    ];
    for (const { run, agent } of written) {
      const { folder, results } = attemptsOf(run, agent);
      expect(readFileSync(attempted(folder, agent, 'write'), 'utf8')).toBe(
        agent,
      );
      expect(readFileSync(attempted(folder, agent, 'shell'), 'utf8')).toBe(
        `${agent}\n`,
      );
      expect(results).toHaveLength(2);
      expect(results.join('\n')).not.toContain('ROLE_FORBIDDEN');
    }
  });
}

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
import { recordCallerRole, roleContext } from './hook-answers.js';

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

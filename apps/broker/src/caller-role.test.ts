import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callerRoleOption, hookCallerRole } from './caller-role.js';
import { loadBrokerConfig } from './config.js';
import { BrokerError } from './errors.js';

const folder = () => mkdtempSync(join(tmpdir(), 'heretek-caller-roles-'));
const meta = (toolUseId: unknown) => ({ 'claudecode/toolUseId': toolUseId });

async function refusal(promise: Promise<unknown>): Promise<BrokerError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!BrokerError.isInstance(error)) throw new Error('expected a refusal');
  return error;
}

describe('hookCallerRole', () => {
  it("returns the role the hook recorded for the call's tool use id, once", async () => {
    const directory = folder();
    const file = join(directory, 'toolu_01Abc.json');
    writeFileSync(file, JSON.stringify({ role: 'staff-backend' }));
    const roleOf = hookCallerRole(directory);
    await expect(roleOf(meta('toolu_01Abc'))).resolves.toBe('staff-backend');
    expect(existsSync(file)).toBe(false);
    const again = await refusal(roleOf(meta('toolu_01Abc')));
    expect(again.code).toBe('ROLE_UNVERIFIED');
  });

  it("gives the broker's own role to an agent the hook saw but that is not a role", async () => {
    const directory = folder();
    writeFileSync(join(directory, 'toolu_2.json'), '{"role":null}');
    await expect(hookCallerRole(directory)(meta('toolu_2'))).resolves.toBe(
      undefined,
    );
  });

  it('refuses a call without a record, naming the hook and how to turn it on', async () => {
    const error = await refusal(hookCallerRole(folder())(meta('toolu_3')));
    expect(error.code).toBe('ROLE_UNVERIFIED');
    expect(error.message).toContain('did not run');
    expect(error.message).toContain('disableAllHooks');
  });

  it('refuses a call without a tool use id, or with one that is a path', async () => {
    const directory = folder();
    writeFileSync(join(directory, 'x.json'), '{"role":"staff-backend"}');
    const roleOf = hookCallerRole(directory);
    for (const id of [undefined, '', '../x', 'a/b', 42]) {
      const error = await refusal(roleOf(id === undefined ? {} : meta(id)));
      expect(error.code).toBe('ROLE_UNVERIFIED');
    }
    await expect(roleOf(undefined)).rejects.toThrow(
      /no Claude Code tool use id/,
    );
  });

  it('refuses a record that names no known role or is not JSON', async () => {
    const directory = folder();
    writeFileSync(join(directory, 'toolu_4.json'), '{"role":"root"}');
    writeFileSync(join(directory, 'toolu_5.json'), 'staff-backend');
    const roleOf = hookCallerRole(directory);
    expect((await refusal(roleOf(meta('toolu_4')))).message).toContain(
      'no known role',
    );
    expect((await refusal(roleOf(meta('toolu_5')))).message).toContain(
      'not JSON',
    );
  });
});

describe('HERETEK_HOOK_ROLES_DIR', () => {
  it('turns the hook records on for the server, and leaves the one role of the broker without it', async () => {
    const directory = folder();
    writeFileSync(join(directory, 'toolu_6.json'), '{"role":"staff-mobile"}');
    const on = callerRoleOption(
      loadBrokerConfig({ HERETEK_HOOK_ROLES_DIR: directory }),
    );
    await expect(on.callerRole?.(meta('toolu_6'))).resolves.toBe(
      'staff-mobile',
    );
    expect(callerRoleOption(loadBrokerConfig({}))).toEqual({});
    expect(loadBrokerConfig({ HERETEK_HOOK_ROLES_DIR: '' }).hookRolesDir).toBe(
      undefined,
    );
  });
});

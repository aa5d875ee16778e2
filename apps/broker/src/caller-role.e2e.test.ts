// The broker bin with HERETEK_HOOK_ROLES_DIR, as the Claude Code plugin starts
// it: each mcp_call_tool's role comes from the record named by the request's
// _meta["claudecode/toolUseId"], never from the broker's one role.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RENAME,
  startGhidraBackend,
  type GhidraBackend,
} from './__fixtures__/ghidra-backend.js';
import {
  resultText,
  scratchFolder,
  spawnBroker,
  type SpawnedBroker,
} from './__fixtures__/spawn-broker.js';

const records = scratchFolder('heretek-caller-role-');
let ghidra: GhidraBackend;
let broker: SpawnedBroker;

beforeAll(async () => {
  ghidra = await startGhidraBackend();
  broker = await spawnBroker({
    ...ghidra.env,
    HERETEK_BROKER_ROLE: 'staff-backend',
    HERETEK_HOOK_ROLES_DIR: records.dir,
  });
});

afterAll(async () => {
  await broker?.close();
  await ghidra?.close();
  records.remove();
});

const calls = () => ghidra.backends.calls;

/** `mcp_call_tool` of the rename as Claude Code sends it, for one tool use id. */
const rename = (toolUseId: string | undefined) =>
  broker.client.callTool({
    name: 'mcp_call_tool',
    arguments: RENAME,
    ...(toolUseId === undefined
      ? {}
      : { _meta: { 'claudecode/toolUseId': toolUseId } }),
  });

const record = (toolUseId: string, role: string | null) =>
  writeFileSync(
    join(records.dir, `${toolUseId}.json`),
    JSON.stringify({ role }),
  );

describe('a broker taking each call role from the hook records', () => {
  it("gates each call by its record's role, not the broker's own, and sends that role to the gateway", async () => {
    record('toolu_director', 'director');
    const refused = await rename('toolu_director');
    expect(resultText(refused)).toMatch(/^ROLE_FORBIDDEN: Role "director"/);
    expect(calls()).toHaveLength(0);
    record('toolu_mobile', 'staff-mobile');
    const sent = await rename('toolu_mobile');
    expect(sent.isError).not.toBe(true);
    expect(calls().map((c) => [c.tool, c.role])).toEqual([
      ['rename_function', 'staff-mobile'],
    ]);
  });

  it('refuses a call without a record, or without a tool use id, and sends nothing', async () => {
    const before = calls().length;
    for (const id of ['toolu_unrecorded', undefined]) {
      const result = await rename(id);
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^ROLE_UNVERIFIED: /);
    }
    expect(calls()).toHaveLength(before);
  });

  it("gives an agent outside the roles the broker's own role", async () => {
    record('toolu_other', null);
    const result = await rename('toolu_other');
    expect(result.isError).not.toBe(true);
    expect(calls().at(-1)?.role).toBe('staff-backend');
    expect(broker.stderr()).toContain(
      "each call's own from the Claude Code hook's records",
    );
  });
});

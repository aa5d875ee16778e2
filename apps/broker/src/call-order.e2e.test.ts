import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { spawnBroker } from './__fixtures__/spawn-broker.js';

type TextResult = {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
};
const text = (result: unknown) =>
  (result as TextResult).content.map((c) => c.text ?? '').join('\n');

const TOOLS: FixtureTool[] = [
  {
    name: 'list_packages',
    description: 'List installed Android packages',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
  },
  {
    name: 'install_apk',
    description: 'Install an APK file on a device',
    inputSchema: {
      type: 'object',
      properties: { apk_path: { type: 'string' } },
      required: ['apk_path'],
    },
  },
];

let backends: McpBackends;
let dir: string;
let file: string;

beforeAll(async () => {
  backends = await startMcpBackends({ adb: TOOLS });
  dir = mkdtempSync(join(tmpdir(), 'broker-order-'));
  file = join(dir, 'backends.json');
  writeFileSync(
    file,
    JSON.stringify([{ backend: 'adb', target: 'adb', profile: 'android' }]),
  );
});

afterAll(async () => {
  await backends.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('call order: role check, argument check, then breaker, then call', () => {
  it('refuses by role and by arguments, not "retry later", while the backend is paused', async () => {
    const spawn = (role: string) =>
      spawnBroker({
        HERETEK_GATEWAY_URL: backends.url,
        HERETEK_BACKENDS_FILE: file,
        HERETEK_BROKER_ROLE: role,
      });
    const [reader, writer] = await Promise.all([
      spawn('director'),
      spawn('staff-mobile'),
    ]);
    try {
      const call = (
        broker: typeof reader,
        name: string,
        args: Record<string, unknown>,
      ) =>
        broker.client.callTool({
          name: 'mcp_call_tool',
          arguments: { name, arguments: args },
        });
      // Discovery first, so the catalog holds the backend's own definitions.
      expect(text(await call(reader, 'adb_list_packages', {}))).toMatch(
        /list_packages ok/,
      );
      expect(text(await call(writer, 'adb_list_packages', {}))).toMatch(
        /list_packages ok/,
      );
      backends.failing.add('adb');
      for (const broker of [reader, writer]) {
        for (let i = 0; i < 3; i++)
          expect(text(await call(broker, 'adb_list_packages', {}))).toMatch(
            /^BACKEND_FAILED: /,
          );
        expect(text(await call(broker, 'adb_list_packages', {}))).toMatch(
          /^CIRCUIT_OPEN: Backend "adb" failed 3 times in a row and is paused for \d+ s more/,
        );
      }
      const sent = backends.calls.length;
      // The read-only director asks for a mutating tool of the paused backend.
      expect(
        text(await call(reader, 'adb_install_apk', { apk_path: 'a.apk' })),
      ).toMatch(/^ROLE_FORBIDDEN: Role "director" is read-only/);
      // A writer with bad arguments is told to fix them, not to retry later.
      expect(text(await call(writer, 'adb_install_apk', {}))).toMatch(
        /^INVALID_ARGUMENTS: .*missing required property "apk_path"/s,
      );
      // Only a call that passes both checks meets the open circuit.
      expect(
        text(await call(writer, 'adb_install_apk', { apk_path: 'a.apk' })),
      ).toMatch(/^CIRCUIT_OPEN: /);
      expect(backends.calls.length).toBe(sent);
    } finally {
      backends.failing.delete('adb');
      await Promise.all([reader.close(), writer.close()]);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import {
  resultText,
  scratchFolder,
  spawnBroker,
} from './__fixtures__/spawn-broker.js';

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
const scratch = scratchFolder('broker-order-');
const file = scratch.backends([
  { backend: 'adb', target: 'adb', profile: 'android' },
]);

beforeAll(async () => {
  backends = await startMcpBackends({ adb: TOOLS });
});

afterAll(async () => {
  await backends.close();
  scratch.remove();
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
      expect(resultText(await call(reader, 'adb_list_packages', {}))).toMatch(
        /list_packages ok/,
      );
      expect(resultText(await call(writer, 'adb_list_packages', {}))).toMatch(
        /list_packages ok/,
      );
      backends.failing.add('adb');
      for (const broker of [reader, writer]) {
        for (let i = 0; i < 3; i++)
          expect(
            resultText(await call(broker, 'adb_list_packages', {})),
          ).toMatch(/^BACKEND_FAILED: /);
        expect(resultText(await call(broker, 'adb_list_packages', {}))).toMatch(
          /^CIRCUIT_OPEN: Backend "adb" failed 3 times in a row and is paused for \d+ s more/,
        );
      }
      const sent = backends.calls.length;
      // The read-only director asks for a mutating tool of the paused backend.
      expect(
        resultText(
          await call(reader, 'adb_install_apk', { apk_path: 'a.apk' }),
        ),
      ).toMatch(/^ROLE_FORBIDDEN: Role "director" is read-only/);
      // A writer with bad arguments is told to fix them, not to retry later.
      expect(resultText(await call(writer, 'adb_install_apk', {}))).toMatch(
        /^INVALID_ARGUMENTS: .*missing required property "apk_path"/s,
      );
      // Only a call that passes both checks meets the open circuit.
      expect(
        resultText(
          await call(writer, 'adb_install_apk', { apk_path: 'a.apk' }),
        ),
      ).toMatch(/^CIRCUIT_OPEN: /);
      expect(backends.calls.length).toBe(sent);
    } finally {
      backends.failing.delete('adb');
      await Promise.all([reader.close(), writer.close()]);
    }
  });
});

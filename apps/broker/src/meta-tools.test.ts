import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { BrokerConfigError } from './errors.js';
import { META_TOOLS, answerMetaTool } from './meta-tools.js';
import {
  openBroker,
  readBrokerSetup,
  type OpenedBroker,
} from './open-broker.js';

const text = (result: { content: ReadonlyArray<object> }) =>
  (result.content[0] as { text: string }).text;

describe('one broker, a role per call', () => {
  let backends: McpBackends;
  let opened: OpenedBroker;

  beforeEach(async () => {
    backends = await startMcpBackends({
      adb: [
        {
          name: 'install_apk',
          description: 'Install an APK file on a connected Android device',
          inputSchema: {
            type: 'object',
            properties: { apk_path: { type: 'string' } },
            required: ['apk_path'],
          },
        },
      ],
    });
    const state = mkdtempSync(join(tmpdir(), 'heretek-meta-tools-'));
    const backendsFile = join(state, 'backends.json');
    writeFileSync(
      backendsFile,
      JSON.stringify([{ backend: 'adb-mcp', target: 'adb', profile: 'core' }]),
    );
    opened = await openBroker({
      setup: readBrokerSetup({
        env: {
          HERETEK_GATEWAY_URL: backends.url,
          HERETEK_BACKENDS_FILE: backendsFile,
          HERETEK_PINS_FILE: join(state, 'pins.json'),
          HERETEK_USAGE_FILE: 'off',
        },
      }),
      log: () => {},
    });
    opened.broker.start();
    // The tests ask about a listed backend: a first answer waits at most 1 s
    // for start-up discovery, which a loaded machine can take longer than.
    await opened.broker.discover();
  });

  afterEach(async () => {
    await opened.broker.close();
    await backends.close();
  });

  it('refuses a read-only role and sends the same call for a writer role', async () => {
    const input = {
      name: 'adb_install_apk',
      arguments: { apk_path: '/a.apk' },
    };
    const refused = await answerMetaTool({
      broker: opened.broker,
      name: 'mcp_call_tool',
      input,
      role: 'director',
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^ROLE_FORBIDDEN: Role "director"/);
    expect(backends.calls).toEqual([]);

    const sent = await answerMetaTool({
      broker: opened.broker,
      name: 'mcp_call_tool',
      input,
      role: 'staff-mobile',
    });
    expect(sent.isError).not.toBe(true);
    expect(text(sent)).toBe('install_apk ok {"apk_path":"/a.apk"}');
    expect(backends.calls.map((c) => c.tool)).toEqual(['install_apk']);
  });

  it('answers search and inspect like the stdio server, and refusals with their code', async () => {
    const search = await answerMetaTool({
      broker: opened.broker,
      name: 'mcp_search_tools',
      input: { query: 'install apk' },
    });
    expect(text(search)).toMatch(/^adb_install_apk \[mutating\] - Install/);
    const inspect = await answerMetaTool({
      broker: opened.broker,
      name: 'mcp_inspect_schema',
      input: { name: 'nope' },
    });
    expect(inspect.isError).toBe(true);
    expect(text(inspect)).toMatch(/^UNKNOWN_TOOL: /);
    expect(Object.keys(META_TOOLS)).toEqual([
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ]);
  });

  it('refuses an unknown role name for a call', async () => {
    const result = await answerMetaTool({
      broker: opened.broker,
      name: 'mcp_call_tool',
      input: { name: 'adb_install_apk', arguments: { apk_path: '/a' } },
      role: 'root',
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/root/);
    expect(backends.calls).toEqual([]);
  });
});

it('names the bad variable when the environment is wrong', () => {
  expect(() =>
    readBrokerSetup({ env: { HERETEK_GATEWAY_TIMEOUT_MS: 'soon' } }),
  ).toThrow(BrokerConfigError);
  expect(() =>
    readBrokerSetup({ env: { HERETEK_GATEWAY_TIMEOUT_MS: 'soon' } }),
  ).toThrow(/HERETEK_GATEWAY_TIMEOUT_MS/);
});

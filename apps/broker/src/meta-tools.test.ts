import { MAX_SEARCH_LIMIT } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/internal';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { Broker } from './broker.js';
import { BrokerConfigError, BrokerError } from './errors.js';
import {
  META_TOOLS,
  META_TOOL_NAMES,
  answerMetaTool,
  parseMetaToolInput,
  runMetaTool,
} from './meta-tools.js';
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
    expect(inspect.code).toBe('UNKNOWN_TOOL');
    expect(Object.keys(META_TOOLS)).toEqual([
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ]);
  });

  it("sends the calling agent's role to the gateway as the call's x-heretek-role", async () => {
    // The broker's own role is the default, director; the backend reads the
    // header of the request that carried the call.
    expect(opened.broker.role).toBe('director');
    const input = {
      name: 'adb_install_apk',
      arguments: { apk_path: '/a.apk' },
    };
    for (const role of ['staff-mobile', 'staff-backend']) {
      const result = await answerMetaTool({
        broker: opened.broker,
        name: 'mcp_call_tool',
        input,
        role,
      });
      expect(result.isError).not.toBe(true);
    }
    expect(backends.calls.map((call) => call.role)).toEqual([
      'staff-mobile',
      'staff-backend',
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

const parseSearchArguments = (input: unknown) =>
  parseMetaToolInput('mcp_search_tools', input);
const parseInspectArguments = (input: unknown) =>
  parseMetaToolInput('mcp_inspect_schema', input);
const parseCallArguments = (input: unknown) =>
  parseMetaToolInput('mcp_call_tool', input);

function refusal(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(BrokerError.isInstance(error)).toBe(true);
    return `${(error as BrokerError).code}: ${(error as Error).message}`;
  }
  throw new Error('expected a refusal');
}

describe('META_TOOLS input schemas', () => {
  it('lists exactly the documented schemas, made from the zod schemas', () => {
    expect(
      Object.fromEntries(
        META_TOOL_NAMES.map((name) => [name, META_TOOLS[name].inputSchema]),
      ),
    ).toEqual({
      mcp_search_tools: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            description: 'Task in plain words, or a tool name',
          },
          profile: { type: 'string', enum: [...PROFILE_NAMES] },
          target: {
            type: 'string',
            description: 'Only this backend; without query, lists its tools',
          },
          limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT },
          offset: { type: 'integer', minimum: 0 },
        },
      },
      mcp_inspect_schema: {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
      },
      mcp_call_tool: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          arguments: { type: 'object' },
        },
        required: ['name'],
      },
    });
  });
});

describe('meta-tool arguments', () => {
  it('accepts what the schemas allow and keeps only what was given', () => {
    expect(
      parseSearchArguments({
        query: 'x',
        profile: 'core',
        limit: 5,
        offset: 3,
      }),
    ).toEqual({ query: 'x', profile: 'core', limit: 5, offset: 3 });
    expect(parseSearchArguments({ target: 'adb' })).toEqual({ target: 'adb' });
    expect(parseInspectArguments({ name: 'adb_tap' })).toEqual({
      name: 'adb_tap',
    });
    expect(parseCallArguments({ name: 'adb_tap' })).toEqual({
      name: 'adb_tap',
    });
  });

  it.each([
    [
      parseSearchArguments,
      { query: 42 },
      '- query must be a string, got number 42',
    ],
    [
      parseSearchArguments,
      { query: 'x', limit: 0 },
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got number 0`,
    ],
    [
      parseSearchArguments,
      { query: 'x', limit: 2.5 },
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got number 2.5`,
    ],
    [
      parseSearchArguments,
      { target: 'adb', offset: 100_001 },
      '- offset must be an integer from 0 to 100000, got number 100001',
    ],
    [
      parseSearchArguments,
      { query: 'x', profile: 'andr0id' },
      `- profile must be one of ${PROFILE_NAMES.join(', ')}, got the string "andr0id"`,
    ],
    [
      parseSearchArguments,
      { query: ' ' },
      '- give a query (a task in plain words, or a tool name), or a target to list its tools',
    ],
    [
      parseSearchArguments,
      { query: 'x', a: 1, b: 2 },
      '- unknown properties "a", "b"; allowed: query, profile, target, limit, offset',
    ],
    [parseSearchArguments, null, '- arguments must be an object, got null'],
    [parseInspectArguments, {}, '- missing required property "name"'],
    [
      parseInspectArguments,
      { name: '' },
      '- name is empty: give the exact tool name from mcp_search_tools',
    ],
    [
      parseCallArguments,
      { name: 'a', arguments: [1] },
      "- arguments must be an object of the tool's arguments, got an array",
    ],
    [parseCallArguments, { name: null }, '- name must be a string, got null'],
  ] as const)('%o refuses %j naming the field', (parse, input, line) => {
    const text = refusal(() => (parse as (input: unknown) => unknown)(input));
    expect(text).toMatch(
      /^INVALID_ARGUMENTS: Arguments for mcp_\w+ do not match its schema:\n- /,
    );
    expect(text.split('\n')).toContain(line);
  });

  it('names every problem at once', () => {
    const text = refusal(() =>
      parseSearchArguments({ query: 1, limit: 'ten', extra: true }),
    );
    expect(text.split('\n').slice(1)).toEqual([
      '- query must be a string, got number 1',
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got the string "ten"`,
      '- unknown property "extra"; allowed: query, profile, target, limit, offset',
    ]);
  });

  it('copies the tool arguments onto a plain object (own properties only)', async () => {
    const input = JSON.parse(
      '{"name":"core_read_file","arguments":{"__proto__":{"path":"x"},"a":1}}',
    ) as unknown;
    const sent: Array<{ arguments: Record<string, unknown> }> = [];
    await runMetaTool('mcp_call_tool', input, {
      broker: new Broker({ role: 'director' }),
      call: async (request) => {
        sent.push(request);
        return { content: [] };
      },
    });
    expect(sent).toHaveLength(1);
    const parsed = sent[0]!;
    expect(Object.getPrototypeOf(parsed.arguments)).toBe(Object.prototype);
    expect((parsed.arguments as { path?: string }).path).toBeUndefined();
  });
});

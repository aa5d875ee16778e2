// Property tests against the built broker (dist/cli.js) as ONE long-lived child
// process over stdio, in front of a loopback gateway of SDK servers: fast-check
// generates the three meta-tools' arguments (wrong types, huge strings, deep
// objects, look-alike names, `__proto__` keys) and raw garbage lines (invalid
// JSON, wrong JSON-RPC shapes, lines around the 10 MB limit). After every case
// the broker must still be running and answer a ping; every well-formed
// request gets its own reply, a result or a JSON-RPC error; refusals start with
// a stable code; stdout carries nothing but JSON-RPC.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { startBrokerProcess } from './__fixtures__/spawn-broker.js';

/** The SDK's stdio line limit, which the broker keeps (10 MiB). */
const LINE_LIMIT = 10 * 1024 * 1024;
/** No refusal or JSON-RPC error may be longer than this, whatever the input size. */
const MAX_REFUSAL_CHARS = 16 * 1024;
/** A reply that takes longer than this counts as a hang. */
const REPLY_TIMEOUT_MS = 20_000;

type JsonRpcReply = {
  jsonrpc?: unknown;
  id?: unknown;
  result?: {
    content?: Array<{ type?: string; text?: string }>;
    isError?: boolean;
  };
  error?: { code?: unknown; message?: unknown };
};

/** A bare line-delimited JSON-RPC peer on the broker's stdio (no SDK client: it must send anything). */
class RawPeer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly nonJsonStdoutLines: string[] = [];
  readonly unexpected: JsonRpcReply[] = [];
  stderr = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #buffer = '';
  #next = 0;
  #waiters = new Map<string, (reply: JsonRpcReply) => void>();
  #expected = new Set<string>();

  constructor(env: Record<string, string>) {
    this.child = startBrokerProcess(env);
    this.child.stdin.on('error', () => {});
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        this.#onLine(line);
      }
    });
    this.child.once('exit', (code, signal) => {
      this.exit = { code, signal };
    });
  }

  /** Resolves once the broker's stderr matches `pattern` (checked as each chunk arrives). */
  logged(pattern: RegExp): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!pattern.test(this.stderr)) return;
        this.child.stderr.off('data', check);
        resolve();
      };
      this.child.stderr.on('data', check);
      check();
    });
  }

  #onLine(line: string) {
    let message: JsonRpcReply;
    try {
      message = JSON.parse(line) as JsonRpcReply;
    } catch {
      this.nonJsonStdoutLines.push(line.slice(0, 200));
      return;
    }
    const key = JSON.stringify(message.id);
    const waiter = this.#waiters.get(key);
    if (waiter !== undefined) {
      this.#waiters.delete(key);
      waiter(message);
    } else if (!this.#expected.has(key)) {
      this.unexpected.push(message);
    }
  }

  /** A fresh id that no generated message uses. */
  nextId(): string {
    return `fz-${this.#next++}`;
  }

  /**
   * Writes `line` and resolves with the reply to `id`; rejects after the hang
   * timeout. The reply is awaited from before the write (it may come before
   * the pipe has taken the whole line), its timeout runs from the end of the
   * write (piping megabytes to a busy broker on a loaded machine is no part
   * of it), and a failed write leaves nothing waiting.
   */
  async exchange(line: string, id: string | number): Promise<JsonRpcReply> {
    const key = JSON.stringify(id);
    this.#expected.add(key);
    const reply = new Promise<JsonRpcReply>((resolve) =>
      this.#waiters.set(key, resolve),
    );
    try {
      await this.write(line);
    } catch (error) {
      this.#waiters.delete(key);
      throw error;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.#waiters.delete(key);
        reject(
          new Error(
            `no reply to id ${key} within ${REPLY_TIMEOUT_MS} ms (exit: ${JSON.stringify(this.exit)}); stderr tail:\n${this.stderr.slice(-2000)}`,
          ),
        );
      }, REPLY_TIMEOUT_MS);
    });
    try {
      return await Promise.race([reply, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes raw text and waits until the pipe has taken it. */
  async write(text: string): Promise<void> {
    if (this.exit !== undefined) {
      throw new Error(
        `broker exited (${JSON.stringify(this.exit)}); stderr tail:\n${this.stderr.slice(-2000)}`,
      );
    }
    if (!this.child.stdin.write(text)) {
      await new Promise<void>((resolve) =>
        this.child.stdin.once('drain', resolve),
      );
    }
  }

  async request(
    method: string,
    params?: unknown,
  ): Promise<{ id: string; reply: JsonRpcReply }> {
    const id = this.nextId();
    const line = `${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })}\n`;
    return { id, reply: await this.exchange(line, id) };
  }

  /** The broker is alive and still answering: a ping gets its empty result. */
  async assertAlive(): Promise<void> {
    const { reply } = await this.request('ping');
    expect(reply.error, JSON.stringify(reply)).toBeUndefined();
    expect(reply.result).toEqual({});
  }
}

/** A reply is a result or a JSON-RPC error; refusals start with a code and are bounded. */
function assertWellFormedReply(reply: JsonRpcReply, id: unknown): void {
  expect(reply.jsonrpc).toBe('2.0');
  expect(reply.id).toEqual(id);
  if (reply.error !== undefined) {
    expect(reply.result).toBeUndefined();
    expect(Number.isInteger(reply.error.code)).toBe(true);
    expect(typeof reply.error.message).toBe('string');
    expect((reply.error.message as string).length).toBeLessThanOrEqual(
      MAX_REFUSAL_CHARS,
    );
    return;
  }
  expect(reply.result).toBeTypeOf('object');
}

/** How the broker answered the generated tools/call requests (printed at the end). */
const outcomes: Record<string, number> = {};
const tally = (what: string) => {
  outcomes[what] = (outcomes[what] ?? 0) + 1;
};

/** A tools/call answer: content blocks; an isError answer starts with a stable code. */
function assertToolAnswer(reply: JsonRpcReply, id: unknown): void {
  assertWellFormedReply(reply, id);
  if (reply.error !== undefined) {
    tally(`JSON-RPC error ${String(reply.error.code)}`);
    return;
  }
  const content = reply.result?.content;
  expect(Array.isArray(content)).toBe(true);
  if (reply.result?.isError === true) {
    const text = content!.map((c) => c.text ?? '').join('\n');
    expect(text).toMatch(/^[A-Z][A-Z0-9_]+: /);
    expect(text.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
    tally(text.slice(0, text.indexOf(':')));
  } else {
    tally('result');
  }
}

// ---------------------------------------------------------------- fixtures

const FIXTURE_TOOLS: Record<string, FixtureTool[]> = {
  adb: [
    {
      name: 'install_apk',
      description: 'Install an APK file on a connected Android device',
      inputSchema: {
        type: 'object',
        properties: {
          apk_path: { type: 'string', minLength: 1 },
          serial: { type: 'string', pattern: '^[A-Za-z0-9:._-]+$' },
          reinstall: { type: 'boolean' },
        },
        required: ['apk_path'],
        additionalProperties: false,
      },
    },
    {
      name: 'list_packages',
      description: 'List installed Android packages on a device',
      inputSchema: {
        type: 'object',
        properties: {
          serial: { type: 'string' },
          filter: { enum: ['all', 'system', 'third-party'] },
        },
      },
      readOnly: true,
    },
  ],
  core: [
    {
      name: 'read_file',
      description: 'Read a text file from the workspace',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          path: { type: 'string', maxLength: 4096 },
          range: {
            type: 'object',
            properties: {
              start: { type: 'integer', minimum: 0 },
              end: { type: 'integer', minimum: 0 },
            },
          },
          encodings: {
            type: 'array',
            items: { $ref: '#/$defs/encoding' },
            maxItems: 4,
          },
        },
        required: ['path'],
        $defs: { encoding: { enum: ['utf8', 'latin1', 'base64'] } },
      },
      readOnly: true,
    },
  ],
};

const TOOL_NAMES = ['adb_install_apk', 'adb_list_packages', 'core_read_file'];
const META_TOOLS = [
  'mcp_search_tools',
  'mcp_inspect_schema',
  'mcp_call_tool',
] as const;

// ------------------------------------------------------------- arbitraries

/** Look-alike characters for ASCII letters (Cyrillic, Greek, fullwidth, math). */
const HOMOGLYPHS: Record<string, string[]> = {
  a: ['а', 'ɑ', 'ａ', '𝐚'],
  c: ['с', 'ϲ', 'ｃ'],
  e: ['е', 'ҽ', 'ｅ'],
  i: ['і', 'ı', 'ｉ', 'ǐ'],
  l: ['ӏ', 'ℓ', '1', 'I'],
  o: ['о', 'ο', '0', 'ｏ'],
  p: ['р', 'ρ', 'ｐ'],
  s: ['ѕ', 'ｓ'],
  d: ['ԁ', 'ｄ'],
  _: ['＿', '‗', '-', ' '],
};
const INVISIBLES = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u202e',
  '\u0301',
];

/** A known tool or meta-tool name with one or more characters swapped for look-alikes. */
const lookAlikeName = fc
  .tuple(
    fc.constantFrom(...TOOL_NAMES, ...META_TOOLS),
    fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), {
      minLength: 1,
      maxLength: 3,
    }),
    fc.constantFrom('none', 'upper', 'nfd', 'trailing-space'),
  )
  .map(([name, edits, variant]) => {
    let chars = [...name];
    for (const [position, choice, invisible] of edits) {
      const at = position % chars.length;
      if (invisible) {
        chars.splice(at, 0, INVISIBLES[choice % INVISIBLES.length]!);
      } else {
        const options = HOMOGLYPHS[chars[at]!];
        if (options !== undefined)
          chars[at] = options[choice % options.length]!;
      }
    }
    let out = chars.join('');
    if (variant === 'upper') out = out.toUpperCase();
    if (variant === 'nfd') out = out.normalize('NFD');
    if (variant === 'trailing-space') out = `${out} `;
    chars = [];
    return out;
  });

/** Keys that have bitten JavaScript object handling, plus the meta-tools' own. */
const suspiciousKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '$ref',
    '$schema',
    'query',
    'name',
    'arguments',
    'target',
    'limit',
    'profile',
    'cursor',
    'offset',
    '',
  ),
  fc.string({ maxLength: 12 }),
);

/** Any JSON value, with suspicious keys. */
const jsonValue = fc.jsonValue({ maxDepth: 4 });
const hostileObject = fc.dictionary(
  suspiciousKey,
  fc.oneof(jsonValue, lookAlikeName),
  { maxKeys: 6 },
);

// The huge and deep values are generated as recipes and sent as JSON text
// built from them: a failure names a recipe (printing a value 3,000 levels
// deep, as fast-check does with a counterexample, overflows the stack, which
// hid the failure itself), and the test process never serializes such a
// value (JSON.stringify recurses, and a deep enough value overflows it).

/** A string of 64 KiB to 2 MiB: `unit` repeated to `length` characters. */
const hugeString = fc.record({
  length: fc.integer({ min: 64 * 1024, max: 2 * 1024 * 1024 }),
  unit: fc.string({ minLength: 1, maxLength: 8 }),
});

/** An array or object nested 50 to 3,000 levels deep (objects under `key`). */
const deepValue = fc.record({
  depth: fc.integer({ min: 50, max: 3000 }),
  arrays: fc.boolean(),
  key: suspiciousKey,
});

/** The JSON text of a {@link hugeString} or {@link deepValue} recipe's value. */
function jsonOf(
  recipe:
    | { length: number; unit: string }
    | { depth: number; arrays: boolean; key: string },
): string {
  if ('length' in recipe)
    return JSON.stringify(
      recipe.unit
        .repeat(Math.ceil(recipe.length / recipe.unit.length))
        .slice(0, recipe.length),
    );
  const open = recipe.arrays ? '[' : `{${JSON.stringify(recipe.key || 'k')}:`;
  const close = recipe.arrays ? ']' : '}';
  return `${open.repeat(recipe.depth)}"bottom"${close.repeat(recipe.depth)}`;
}

/** Arguments for one meta-tool: right names with wrong values, wrong shapes, hostile values. */
function argumentsFor(tool: (typeof META_TOOLS)[number]) {
  const wrong = fc.oneof(
    jsonValue,
    lookAlikeName,
    hostileObject,
    fc.constant(null),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, 0, 1e308, -0),
  );
  const fields: Record<string, fc.Arbitrary<unknown>> = tool ===
  'mcp_search_tools'
    ? {
        query: fc.oneof(fc.string({ maxLength: 200 }), lookAlikeName, wrong),
        target: fc.oneof(
          fc.constantFrom('adb', 'core', 'ghidra'),
          lookAlikeName,
          wrong,
        ),
        profile: fc.oneof(
          fc.constantFrom('core', 'android', 'appsec'),
          lookAlikeName,
          wrong,
        ),
        limit: fc.oneof(fc.integer({ min: -5, max: 500 }), wrong),
        offset: fc.oneof(fc.integer({ min: -5, max: 200_000 }), wrong),
        cursor: fc.oneof(fc.string({ maxLength: 40 }), wrong),
      }
    : tool === 'mcp_inspect_schema'
      ? {
          name: fc.oneof(fc.constantFrom(...TOOL_NAMES), lookAlikeName, wrong),
        }
      : {
          name: fc.oneof(fc.constantFrom(...TOOL_NAMES), lookAlikeName, wrong),
          arguments: fc.oneof(
            hostileObject,
            fc.record(
              {
                apk_path: fc.oneof(fc.string(), wrong),
                serial: fc.oneof(fc.string(), wrong),
                path: fc.oneof(fc.string(), wrong),
                range: fc.oneof(hostileObject, wrong),
                encodings: fc.oneof(
                  fc.array(fc.constantFrom('utf8', 'latin1', 'x')),
                  wrong,
                ),
                filter: fc.oneof(fc.constantFrom('all', 'system'), wrong),
              },
              { requiredKeys: [] },
            ),
            wrong,
          ),
        };
  return fc.oneof(
    { weight: 6, arbitrary: fc.record(fields, { requiredKeys: [] }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.record(fields, { requiredKeys: [] }), hostileObject)
        .map(([a, b]) => ({ ...b, ...a })),
    },
    { weight: 1, arbitrary: wrong },
  );
}

// ------------------------------------------------------------------- tests

const counts: Record<string, number> = {};
const count = (what: string) => {
  counts[what] = (counts[what] ?? 0) + 1;
};

let backends: McpBackends;
let peer: RawPeer;

/** Calls `tool` with `args` over the raw peer and checks the answer (see {@link assertToolAnswer}). */
async function callChecked(tool: string, args: unknown): Promise<void> {
  const { id, reply } = await peer.request('tools/call', {
    name: tool,
    arguments: args,
  });
  assertToolAnswer(reply, id);
}

beforeAll(async () => {
  backends = await startMcpBackends(FIXTURE_TOOLS);
  peer = new RawPeer({
    HERETEK_GATEWAY_URL: backends.url,
    // A writer role, so mutating calls reach the argument check and the gateway too.
    HERETEK_BROKER_ROLE: 'staff-mobile',
    HERETEK_GATEWAY_TIMEOUT_MS: '10000',
  });
  const { id, reply } = await peer.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'broker-fuzz', version: '1.0.0' },
  });
  assertWellFormedReply(reply, id);
  await peer.write(
    `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
  );
  // Start-up discovery has ended (the first search waits for it only up to a
  // bound, which a loaded machine can exceed).
  await peer.logged(/discovery: \d+\/\d+ backends listed/);
  const { reply: search } = await peer.request('tools/call', {
    name: 'mcp_search_tools',
    arguments: { query: 'android apk install file read' },
  });
  const text = search.result?.content?.[0]?.text ?? '';
  expect(TOOL_NAMES.filter((name) => !text.includes(name))).toEqual([]);
}, 60_000);

afterAll(async () => {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `fuzz: ${total} generated cases against one broker process: ${Object.entries(
      counts,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; tools/call answers: ${Object.entries(outcomes)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  peer?.child.stdin.end();
  if (peer !== undefined && peer.exit === undefined) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        peer.child.kill('SIGKILL');
        resolve();
      }, 5_000);
      peer.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  await backends?.close();
});

describe('meta-tool arguments (fast-check, one broker process)', () => {
  for (const tool of META_TOOLS) {
    it(`${tool}: every generated argument set gets a tool answer or a JSON-RPC error`, async () => {
      await fc.assert(
        fc.asyncProperty(argumentsFor(tool), async (args) => {
          count(tool);
          await callChecked(tool, args);
        }),
        { numRuns: 2_000 },
      );
      await peer.assertAlive();
    }, 300_000);
  }

  it('look-alike and hostile tool names are refused by code, never routed as the real tool', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...META_TOOLS),
        lookAlikeName,
        async (tool, name) => {
          count('look-alike names');
          const before = backends.calls.length;
          await callChecked(
            tool,
            tool === 'mcp_search_tools'
              ? { query: name, target: name }
              : { name, arguments: { path: 'x', apk_path: 'x' } },
          );
          // A look-alike of a catalogued name never reaches that tool.
          const reached = backends.calls
            .slice(before)
            .map((c) => `${c.path.replace('/mcp/', '')}_${c.tool}`);
          for (const real of TOOL_NAMES) {
            if (name !== real) expect(reached).not.toContain(real);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  }, 300_000);

  it('huge strings and deep objects in any argument are answered with bounded refusals', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...META_TOOLS),
        fc.constantFrom(
          'query',
          'name',
          'target',
          'arguments',
          'profile',
          '__proto__',
        ),
        fc.oneof(hugeString, deepValue),
        async (tool, field, recipe) => {
          count('huge or deep');
          const value = jsonOf(recipe);
          // The last of two equal keys wins, as an assignment would.
          const args =
            field === '__proto__'
              ? `{"__proto__": ${value}, "query": "x", "name": "x"}`
              : `{"query":"x","name":"core_read_file",${JSON.stringify(field)}:${value}}`;
          const id = peer.nextId();
          const line = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":${args}}}\n`;
          assertToolAnswer(await peer.exchange(line, id), id);
        },
      ),
      { numRuns: 150 },
    );
    await peer.assertAlive();
  }, 600_000);
});

/**
 * Whether a reply is owed on the plainest reading: exactly the members
 * jsonrpc "2.0", a string or integer id, a method, and params absent or an
 * object without `_meta`. (Other JSON-RPC requests, with extra members, array
 * params or a `_meta` of the wrong shape, are owed a reply too, but the SDK's
 * stdio reader drops them before the broker sees them; until the broker
 * answers them itself they are left out here. Widen this when it does.)
 */
function obligesReply(
  message: unknown,
): message is { id: string | number; method: string } {
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return false;
  const m = message as Record<string, unknown>;
  const params = m.params as Record<string, unknown> | undefined;
  return (
    Object.keys(m).every((k) =>
      ['jsonrpc', 'id', 'method', 'params'].includes(k),
    ) &&
    m.jsonrpc === '2.0' &&
    typeof m.method === 'string' &&
    !m.method.startsWith('notifications/') &&
    (typeof m.id === 'string' || Number.isSafeInteger(m.id)) &&
    (params === undefined ||
      (typeof params === 'object' &&
        params !== null &&
        !Array.isArray(params) &&
        !Object.hasOwn(params, '_meta')))
  );
}

let garbageId = 0;
/** Ids for generated requests: a domain the peer's own `fz-` ids never use. */
const requestId = fc.oneof(
  fc.constant(null).map(() => `g-${garbageId++}`),
  fc.constant(null).map(() => 1_000_000_000 + garbageId++),
);

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'logging/setLevel',
  'completion/complete',
  'notifications/cancelled',
  'notifications/initialized',
  'notifications/progress',
  'shutdown',
  'exit',
  '__proto__',
  '',
];

/** Messages with JSON-RPC's shape and wrong details, or the right details and wrong values. */
const jsonRpcish = fc.oneof(
  // Well-formed requests with any method and params.
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: requestId,
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 })),
    params: fc.oneof(hostileObject, fc.constant(undefined)),
  }),
  // tools/call with a hostile params object.
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: requestId,
    method: fc.constant('tools/call'),
    params: fc.oneof(
      hostileObject,
      fc.record({
        name: fc.oneof(
          fc.constantFrom(...META_TOOLS),
          lookAlikeName,
          jsonValue,
        ),
        arguments: fc.oneof(hostileObject, jsonValue),
        _meta: fc.oneof(hostileObject, jsonValue),
      }),
    ),
  }),
  // Wrong shapes: bad version, id or method types, arrays as params, responses, batches.
  fc.record(
    {
      jsonrpc: fc.oneof(fc.constantFrom('2.0', '1.0', 2, null), jsonValue),
      id: fc.oneof(requestId, jsonValue, fc.double()),
      method: fc.oneof(fc.constantFrom(...METHODS), jsonValue),
      params: jsonValue,
      result: jsonValue,
      error: jsonValue,
    },
    { requiredKeys: [] },
  ),
  fc.array(
    fc.record({
      jsonrpc: fc.constant('2.0'),
      id: requestId,
      method: fc.constantFrom(...METHODS),
    }),
    {
      maxLength: 3,
    },
  ),
  jsonValue,
);

describe('garbage on stdin (fast-check, same broker process)', () => {
  it('invalid JSON lines are survived', async () => {
    const valid = JSON.stringify({
      jsonrpc: '2.0',
      id: 'never',
      method: 'tools/call',
      params: { name: 'mcp_search_tools', arguments: { query: 'apk' } },
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc.nat({ max: valid.length - 1 }).map((n) => valid.slice(0, n)),
          fc.string({ maxLength: 20 }).map((s) => `${valid}${s}x`),
          fc.constantFrom(
            '{',
            '}',
            '[',
            '"',
            '\u0000',
            '\ufeff{}',
            'null',
            '\r',
            '{"jsonrpc":"2.0"',
          ),
        ),
        async (line) => {
          count('invalid JSON');
          // Whatever the line holds (newlines included), it never carries an `fz-` id.
          await peer.write(`${line.replaceAll('fz-', 'fy-')}\n`);
          await peer.assertAlive();
        },
      ),
      { numRuns: 1_500 },
    );
  }, 300_000);

  it('wrong JSON-RPC shapes are survived, and every well-formed request is answered', async () => {
    await fc.assert(
      fc.asyncProperty(jsonRpcish, async (message) => {
        count('JSON-RPC shapes');
        const line = JSON.stringify(message) ?? 'null';
        const owed = obligesReply(message) ? message.id : undefined;
        if (owed === undefined) await peer.write(`${line}\n`);
        else
          assertWellFormedReply(await peer.exchange(`${line}\n`, owed), owed);
        await peer.assertAlive();
      }),
      { numRuns: 2_000 },
    );
  }, 300_000);

  it('lines around the 10 MiB limit: a request with an id is answered, none kills the broker', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: LINE_LIMIT - 4096, max: LINE_LIMIT + 4096 }),
        fc.constantFrom('request', 'no-id', 'not-json'),
        async (bytes, kind) => {
          count('10 MiB lines');
          const id = `g-big-${garbageId++}`;
          const head =
            kind === 'not-json'
              ? ''
              : `{"jsonrpc":"2.0",${kind === 'request' ? `"id":${JSON.stringify(id)},` : ''}"method":"tools/call","params":{"name":"mcp_search_tools","arguments":{"query":"`;
          const tail = kind === 'not-json' ? '' : '"}}}';
          const line = `${head}${'a'.repeat(Math.max(0, bytes - head.length - tail.length))}${tail}`;
          if (kind === 'request')
            assertToolAnswer(await peer.exchange(`${line}\n`, id), id);
          else await peer.write(`${line}\n`);
          await peer.assertAlive();
        },
      ),
      { numRuns: 12 },
    );
  }, 600_000);

  it('stdout carried only JSON-RPC, no request of ours got a second or late reply, and the broker never exited', () => {
    expect(peer.nonJsonStdoutLines).toEqual([]);
    const stray = peer.unexpected.filter(
      (m) => typeof m.id === 'string' && m.id.startsWith('fz-'),
    );
    expect(stray.slice(0, 3)).toEqual([]);
    expect(peer.exit).toBeUndefined();
  });
});

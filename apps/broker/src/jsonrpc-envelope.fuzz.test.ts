// Every JSON-RPC request gets a reply, even one whose envelope MCP's schema
// rejects (extra members, array params, a `_meta` of the wrong shape): the
// built broker, one long-lived child over stdio, must answer each with its id
// (an Invalid Request or Invalid Params error is fine), never drop it.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBrokerProcess } from './__fixtures__/spawn-broker.js';

type Reply = {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
};

const child = startBrokerProcess({ HERETEK_BROKER_OFFLINE: '1' });
child.stderr.resume();
const waiters = new Map<string, (reply: Reply) => void>();
let buffer = '';
child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
  buffer += chunk;
  let i: number;
  while ((i = buffer.indexOf('\n')) >= 0) {
    const reply = JSON.parse(buffer.slice(0, i)) as Reply;
    buffer = buffer.slice(i + 1);
    waiters.get(JSON.stringify(reply.id))?.(reply);
  }
});
/** Sends `message` and resolves with the reply to `id`, or 'no reply' after `timeoutMs`. */
const send = (message: unknown, id: string | number, timeoutMs = 15_000) =>
  new Promise<Reply | 'no reply'>((resolve) => {
    const key = JSON.stringify(id);
    const timer = setTimeout(() => resolve('no reply'), timeoutMs);
    waiters.set(key, (reply) => {
      clearTimeout(timer);
      waiters.delete(key);
      resolve(reply);
    });
    child.stdin.write(`${JSON.stringify(message)}\n`);
  });

beforeAll(async () => {
  const reply = await send(
    {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'fuzz', version: '1' },
      },
    },
    'init',
    // The first reply also waits for the broker process to start: over 5 s
    // on a loaded 2-core machine.
    45_000,
  );
  expect(reply).not.toBe('no reply');
});

afterAll(() => {
  child.stdin.end();
});

let next = 0;
it('answers every JSON-RPC request with its id, whatever its params and extra members', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(
        'ping',
        'tools/list',
        'tools/call',
        'initialize',
        'resources/list',
        'nope',
      ),
      fc.oneof(
        fc.constant(undefined),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
        fc.record({ _meta: fc.jsonValue({ maxDepth: 2 }) }),
        fc.record({
          name: fc.constant('mcp_search_tools'),
          arguments: fc.constant({ query: 'x' }),
          _meta: fc.jsonValue({ maxDepth: 2 }),
        }),
      ),
      fc.dictionary(
        fc.constantFrom('foo', 'meta', 'params2', 'x'),
        fc.jsonValue({ maxDepth: 1 }),
        { maxKeys: 2 },
      ),
      async (method, params, extra) => {
        const id = `env-${next++}`;
        const reply = await send(
          {
            ...extra,
            jsonrpc: '2.0',
            id,
            method,
            ...(params === undefined ? {} : { params }),
          },
          id,
        );
        expect(reply, JSON.stringify({ method, params, extra })).not.toBe(
          'no reply',
        );
      },
    ),
    { numRuns: 300 },
  );
}, 120_000);

import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BrokerStdioTransport,
  MAX_REQUEST_LINE_BYTES,
} from './stdio-transport.js';

/** A transport over in-memory pipes, with what it wrote, received and logged. */
function open(options: { onFirstToolsList?: () => void } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: JSONRPCMessage[] = [];
  let buffered = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) written.push(JSON.parse(line) as JSONRPCMessage);
  });
  const received: JSONRPCMessage[] = [];
  const logged: string[] = [];
  const transport = new BrokerStdioTransport({
    stdin,
    stdout,
    log: (line) => logged.push(line),
    ...options,
  });
  transport.onmessage = (message) => received.push(message);
  return { stdin, transport, written, received, logged };
}

let opened: ReturnType<typeof open> | undefined;
afterEach(async () => {
  await opened?.transport.close();
  opened = undefined;
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('BrokerStdioTransport', () => {
  it('passes requests through and answers over stdout', async () => {
    opened = open();
    await opened.transport.start();
    opened.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await settle();
    expect(opened.received).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ]);
    await opened.transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    await settle();
    expect(opened.written).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
  });

  it('answers a line over the limit with Invalid Request and stays open', async () => {
    opened = open();
    await opened.transport.start();
    const huge = `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"${'a'.repeat(MAX_REQUEST_LINE_BYTES)}"}}\n`;
    opened.stdin.write(huge);
    opened.stdin.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\n');
    await settle();
    expect(opened.written).toEqual([
      {
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32600,
          message: expect.stringMatching(
            /^Request too large: \d+ bytes in one line/,
          ),
        },
      },
    ]);
    expect(opened.received).toEqual([
      { jsonrpc: '2.0', id: 8, method: 'ping' },
    ]);
    expect(opened.logged[0]).toMatch(/request line of \d+ bytes dropped/);
  });

  it('answers an envelope the SDK would drop silently', async () => {
    opened = open();
    await opened.transport.start();
    opened.stdin.write(
      '{"jsonrpc":"2.0","id":3,"method":"ping","params":[]}\n',
    );
    await settle();
    expect(opened.received).toEqual([]);
    expect(opened.written).toEqual([
      {
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32600,
          message: expect.stringMatching(/^Invalid Request: /),
        },
      },
    ]);
  });

  it('caps a long error message and names its length', async () => {
    opened = open();
    await opened.transport.start();
    await opened.transport.send({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32602, message: 'x'.repeat(5_000) },
    });
    await settle();
    const [answer] = opened.written;
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32602,
        message: `${'x'.repeat(1_000)}… (5000 characters)`,
      },
    });
  });

  it('reports the first tools/list answer, and only that one', async () => {
    let calls = 0;
    opened = open({ onFirstToolsList: () => calls++ });
    await opened.transport.start();
    await opened.transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(calls).toBe(0);
    await opened.transport.send({
      jsonrpc: '2.0',
      id: 2,
      result: { tools: [] },
    });
    await opened.transport.send({
      jsonrpc: '2.0',
      id: 3,
      result: { tools: [] },
    });
    await settle();
    expect(calls).toBe(1);
    expect(opened.written).toHaveLength(3);
  });
});

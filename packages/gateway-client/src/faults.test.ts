import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestArrived, requestsOf } from './__fixtures__/requests.js';
import { GatewayClient } from './gateway-client.js';
import type { GatewayHttpError } from './errors.js';
import {
  GatewayError,
  GatewayErrorCode,
  type GatewayErrorCode as Code,
} from './errors.js';
import {
  startFaultServer,
  type Fault,
  type FaultServer,
} from './__fixtures__/fault-server.js';
import { listen } from './__fixtures__/servers.js';

/**
 * Deadline of the clients in this file. Every fault except the silent server
 * must give its own code, not TIMEOUT: a generous deadline keeps a loaded CI
 * machine from turning a slow-but-detected fault into a timeout, and a fault
 * the client failed to detect still fails the test (wrong code).
 */
const TIMEOUT_MS = 8_000;
/** The silent server's test waits this long for the TIMEOUT. */
const SHORT_TIMEOUT_MS = 1_500;
/** One fault call plus one follow-up call plus close, on a loaded machine. */
const TEST_TIMEOUT_MS = 20_000;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function tcpHandles(): number {
  return process
    .getActiveResourcesInfo()
    .filter((name) => name === 'TCPSocketWrap').length;
}

/** expect.poll waits for sockets to close; generous for a loaded machine. */

/** What calling the fault server's `tool` rejects with (what it returns, if it does not). */
const callFault = (gateway: GatewayClient, tool: string) =>
  gateway
    .callTool({ target: 'faulty', tool, arguments: {} })
    .catch((caught: unknown) => caught);

/** The calls of `tool` a fault server received. */
const callsOf = (server: FaultServer, tool: string) =>
  requestsOf(server, 'tools/call').filter(
    (request) =>
      (request.body as { params?: { name?: string } }).params?.name === tool,
  );

let baselineHandles = 0;
beforeAll(() => {
  baselineHandles = tcpHandles();
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

/**
 * Runs `use` with a per-target client of `server` (deadline TIMEOUT_MS unless
 * `options` says otherwise), then closes the client, and `alsoClose` if given.
 */
async function withClient<T>(
  server: { url: string },
  use: (gateway: GatewayClient) => Promise<T>,
  options: Partial<ConstructorParameters<typeof GatewayClient>[0]> & {
    alsoClose?: { close(): Promise<void> };
  } = {},
): Promise<T> {
  const { alsoClose, ...extra } = options;
  const gateway = new GatewayClient({
    url: server.url,
    mode: 'per-target',
    role: 'director',
    timeoutMs: TIMEOUT_MS,
    ...extra,
  });
  try {
    return await use(gateway);
  } finally {
    await gateway.close();
    await alsoClose?.close();
  }
}

/** What listing target `faulty` of a fault server started with `serverOptions` throws. */
async function listingError(
  serverOptions: Parameters<typeof startFaultServer>[0],
  clientOptions: Parameters<typeof withClient>[2] = {},
): Promise<{ error: unknown; server: FaultServer }> {
  const server = await startFaultServer(serverOptions);
  const error = await withClient(
    server,
    (gateway) =>
      gateway
        .listTools({ target: 'faulty' })
        .catch((caught: unknown) => caught),
    { ...clientOptions, alsoClose: server },
  );
  return { error, server };
}

async function expectFault(options: {
  server: FaultServer;
  fault: Fault;
  code: Code;
  timeoutMs?: number;
}) {
  return withClient(
    options.server,
    async (gateway) => {
      const error = await callFault(gateway, options.fault);
      expect(
        GatewayError.isInstance(error),
        `${options.fault}: ${String(error)}`,
      ).toBe(true);
      expect(
        (error as GatewayError).code,
        `${options.fault}: ${(error as Error).message}`,
      ).toBe(options.code);
      expect((error as GatewayError).target).toBe('faulty');
      // The client still works after the fault: the next call on the same endpoint succeeds.
      const ok = await gateway.callTool({
        target: 'faulty',
        tool: 'fine',
        arguments: {},
      });
      expect(ok.content).toEqual([{ type: 'text', text: 'ok' }]);
      return error as GatewayError;
    },
    {
      timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
      maxResponseBytes: 1024 * 1024,
    },
  );
}

describe(
  'fault matrix: each injected fault gives its typed error within the timeout',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    let server: FaultServer;
    beforeAll(async () => {
      server = await startFaultServer();
    });
    afterAll(async () => {
      await server.close();
    });

    const matrix: Array<[Fault, Code]> = [
      ['drop-mid-stream', GatewayErrorCode.ConnectionReset],
      ['stream-ends-early', GatewayErrorCode.ConnectionReset],
      ['reset-before-headers', GatewayErrorCode.ConnectionReset],
      ['garbage-sse', GatewayErrorCode.ProtocolError],
      ['garbage-json', GatewayErrorCode.ProtocolError],
      ['not-json-rpc', GatewayErrorCode.ProtocolError],
      ['wrong-id-json', GatewayErrorCode.ProtocolError],
      ['wrong-id-sse', GatewayErrorCode.ProtocolError],
      ['stream-50mb', GatewayErrorCode.ResponseTooLarge],
      ['json-50mb', GatewayErrorCode.ResponseTooLarge],
      ['status-500', GatewayErrorCode.HttpStatus],
      ['html', GatewayErrorCode.ProtocolError],
    ];

    it.each(matrix)('%s -> %s', async (fault, code) => {
      const error = await expectFault({ server, fault, code });
      if (fault === 'status-500') {
        expect((error as GatewayHttpError).status).toBe(500);
        expect((error as GatewayHttpError).jsonRpcError?.code).toBe(-32603);
        expect(error.isRetryable).toBe(true);
      }
      if (fault === 'stream-50mb') {
        // cut at the 1 MiB cap: the server got to write little more than what
        // the socket buffers hold, far from the 50 MiB it wanted to send
        expect(server.streamed.bytes).toBeGreaterThan(1024 * 1024);
        expect(server.streamed.bytes).toBeLessThan(20 * 1024 * 1024);
      }
      if (fault === 'reset-before-headers') {
        expect(error.isRetryable).toBe(true);
        // Sent once more on a fresh connection, then reported.
        expect(callsOf(server, fault)).toHaveLength(2);
      }
    });

    it('follows 2025-11-25 SSE polling: a primed stream that closes is resumed with Last-Event-ID', async () => {
      await withClient(server, async (gateway) => {
        const result = await gateway.callTool({
          target: 'faulty',
          tool: 'poll-then-resume',
          arguments: {},
        });
        expect(result.content).toEqual([{ type: 'text', text: 'resumed' }]);
        const resumed = server.requests.find(
          (request) =>
            request.method === 'GET' &&
            request.headers['last-event-id']?.startsWith('prime-'),
        );
        expect(resumed).toBeDefined();
      });
    });

    it('never-answer -> TIMEOUT, and the server gets notifications/cancelled for that request', async () => {
      const error = await expectFault({
        server,
        fault: 'never-answer',
        code: GatewayErrorCode.Timeout,
        timeoutMs: SHORT_TIMEOUT_MS,
      });
      expect(error.isRetryable).toBe(true);
      // The notice is sent as the call times out, not awaited by it.
      await requestArrived(server, 'notifications/cancelled');
      const call = server.requests.find(
        (request) =>
          request.rpcMethod === 'tools/call' &&
          (request.body as { params?: { name?: string } }).params?.name ===
            'never-answer',
      );
      const notice = server.requests.find(
        (request) => request.rpcMethod === 'notifications/cancelled',
      );
      expect(
        (notice?.body as { params: { requestId: unknown } } | undefined)?.params
          .requestId,
      ).toBe(call?.rpcId);
    });

    it('leaves no connection open on the server once the clients are closed', async () => {
      expect(server.requests.length).toBeGreaterThan(matrix.length);
      await expect.poll(() => server.openSockets()).toBe(0);
    });
  },
);

describe('session and pagination faults', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a session lost twice gives CONNECTION_RESET after exactly one re-initialize', async () => {
    const server = await startFaultServer({ sessionAlwaysLost: true });
    await withClient(
      server,
      async (gateway) => {
        const error = await callFault(gateway, 'fine');
        expect((error as GatewayError).code).toBe(
          GatewayErrorCode.ConnectionReset,
        );
        expect(requestsOf(server, 'initialize')).toHaveLength(2);
        expect(requestsOf(server, 'tools/call')).toHaveLength(2);
      },
      { alsoClose: server },
    );
  });

  it.each(['same', 'alternate', 'endless'] as const)(
    'a %s cursor gives PROTOCOL_ERROR',
    async (cursorLoop) => {
      const { error, server } = await listingError(
        { cursorLoop },
        { maxListPages: 50 },
      );
      expect((error as GatewayError).code).toBe(GatewayErrorCode.ProtocolError);
      expect(requestsOf(server, 'tools/list').length).toBeLessThanOrEqual(50);
    },
  );
});

describe('listing checks', { timeout: TEST_TIMEOUT_MS }, () => {
  const valid = { name: 'fine', inputSchema: { type: 'object' } };

  it.each([
    ['a name that is not a string', { ...valid, name: 7 }, 'tools.1.name'],
    ['no input schema', { name: 'fine' }, 'tools.1.inputSchema'],
    [
      'an input schema that is not of type object',
      { ...valid, inputSchema: { type: 'string' } },
      'tools.1.inputSchema',
    ],
    [
      'annotations that are not an object',
      { ...valid, annotations: 'read-only' },
      'tools.1.annotations',
    ],
  ])('a listed tool with %s refuses the listing', async (_, bad, path) => {
    const { error } = await listingError({ listedTools: [valid, bad] });
    expect(GatewayError.isInstance(error)).toBe(true);
    expect((error as GatewayError).message).toContain(path);
  });

  it('passes every member of a valid tool through as listed', async () => {
    const tool = {
      name: 'rich',
      title: 'Rich',
      description: 'A tool with every member',
      inputSchema: {
        type: 'object',
        properties: { when: { type: 'string', format: 'date-time' } },
        'x-vendor': { kept: true },
      },
      annotations: { readOnlyHint: true },
      _meta: { 'example.com/tag': 1 },
    };
    const server = await startFaultServer({ listedTools: [tool] });
    await withClient(
      server,
      async (gateway) => {
        expect(await gateway.listTools({ target: 'faulty' })).toEqual([tool]);
      },
      { alsoClose: server },
    );
  });
});

describe('negotiation', { timeout: TEST_TIMEOUT_MS }, () => {
  it('falls back to the 2025 handshake when the probe gets a 500', async () => {
    const server = await startFaultServer({ discoverStatus: 500 });
    await withClient(
      server,
      async (gateway) => {
        const result = await gateway.callTool({
          target: 'faulty',
          tool: 'fine',
          arguments: {},
        });
        expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
        expect(requestsOf(server, 'server/discover')).toHaveLength(1);
        expect(requestsOf(server, 'initialize')).toHaveLength(1);
      },
      { alsoClose: server },
    );
  });
});

describe(
  'connection faults and the token',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    it('a closed port gives CONNECTION_REFUSED', async () => {
      const closed = await listen(() => undefined);
      await closed.close();
      await withClient(closed, async (gateway) => {
        const error = await gateway
          .listTools({ target: 'gone' })
          .catch((caught: unknown) => caught);
        expect((error as GatewayError).code).toBe(
          GatewayErrorCode.ConnectionRefused,
        );
        expect((error as GatewayError).isRetryable).toBe(true);
        expect((error as Error).message).toContain("option 'url'");
        expect((error as Error).message).not.toContain('HERETEK_');
      });
    });

    it('never puts the bearer token in an error, even when the server echoes it', async () => {
      const token = 'tok-VERY-secret-9f8e7d';
      const server = await startFaultServer({ echoAuthorization: true });
      await withClient(
        server,
        async (gateway) => {
          const error = await callFault(gateway, 'status-500');
          expect((error as GatewayError).code).toBe(
            GatewayErrorCode.HttpStatus,
          );
          expect(server.requests.at(-1)?.headers.authorization).toBe(
            `Bearer ${token}`,
          );
          const rendered = [
            String(error),
            (error as Error).stack,
            inspect(error, { depth: 10 }),
            JSON.stringify(error),
            JSON.stringify((error as GatewayHttpError).jsonRpcError),
          ].join('\n');
          expect(rendered).toContain('[redacted]');
          expect(rendered).not.toContain(token);
        },
        { token, alsoClose: server },
      );
    });
  },
);

describe(
  'a connection reset before the reply',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    it('a call on pooled connections the server closed while idle goes out again on a fresh one, and reaches the server once', async () => {
      const server = await startFaultServer();
      await withClient(
        server,
        async (gateway) => {
          // Several calls at once: the pool holds several keep-alive connections.
          await Promise.all(
            [1, 2, 3].map(() =>
              gateway.callTool({
                target: 'faulty',
                tool: 'fine',
                arguments: {},
              }),
            ),
          );
          // The server drops every idle connection (its keep-alive timeout, a
          // restart), and the next call goes out before the client reads the close.
          server.closeIdleConnections();
          const result = await gateway.callTool({
            target: 'faulty',
            tool: 'after-idle',
            arguments: {},
          });
          expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
          expect(callsOf(server, 'after-idle')).toHaveLength(1);
        },
        { alsoClose: server },
      );
    });
  },
);

describe('after every fault', () => {
  it('no socket is left open and no promise rejection went unhandled', async () => {
    await expect.poll(tcpHandles).toBe(baselineHandles);
    expect(unhandled).toEqual([]);
  });
});

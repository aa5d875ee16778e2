import { describe, expect, it } from 'vitest';
import type { GatewayClient } from './gateway-client.js';
import { GatewayError, GatewayErrorCode } from './errors.js';
import {
  startModernServer,
  startSessionfulServer,
  startV1Server,
} from './__fixtures__/servers.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';
import { requestArrived, requestsOf } from './__fixtures__/requests.js';

const { track, client, connect } = closeAfterEach();

/** Calls the fixture servers' `echo` tool on `target` with `text`. */
const echo = (gateway: GatewayClient, target: string, text: string) =>
  gateway.callTool({ target, tool: 'echo', arguments: { text } });

/** expect.poll waits for a server-side effect; generous for a loaded machine. */

describe('per-target mode against a sessionful SDK server (2025-11-25)', () => {
  it('initializes once, lists every page and calls tools with bare names', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({ generatedTools: 25, pageSize: 7 }),
    );
    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools).toHaveLength(31);
    expect(tools.map((tool) => tool.name)).toContain('tool-024');
    expect(
      tools.find((tool) => tool.name === 'echo')?.annotations?.readOnlyHint,
    ).toBe(true);
    const result = await echo(gateway, 'alpha', 'hi');
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    const info = gateway.endpointInfo({ target: 'alpha' });
    expect(info?.era).toBe('legacy');
    expect(info?.protocolVersion).toBe('2025-11-25');
    expect(info?.sessionId).toBeTruthy();
    expect(info?.initializations).toBe(1);
    const posts = server.requests.filter(
      (request) => request.method === 'POST',
    );
    expect(posts.every((request) => request.path === '/mcp/alpha')).toBe(true);
    expect(
      posts.filter((request) => request.rpcMethod === 'initialize'),
    ).toHaveLength(1);
    expect(
      posts.filter((request) => request.rpcMethod === 'tools/list'),
    ).toHaveLength(5);
    const afterInit = posts.filter(
      (request) =>
        request.rpcMethod === 'tools/call' ||
        request.rpcMethod === 'tools/list',
    );
    for (const request of afterInit) {
      expect(request.headers['mcp-session-id']).toBe(info?.sessionId);
      expect(request.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(request.headers['x-heretek-role']).toBe('director');
      expect(request.headers.accept).toContain('application/json');
      expect(request.headers.accept).toContain('text/event-stream');
    }
  });

  it('returns isError results instead of throwing and maps unknown tools to JSON_RPC_ERROR', async () => {
    const { gateway } = await connect(startSessionfulServer());
    const failed = await gateway.callTool({
      target: 'alpha',
      tool: 'fail',
      arguments: {},
    });
    expect(failed.isError).toBe(true);
    const error = await gateway
      .callTool({ target: 'alpha', tool: 'nope', arguments: {} })
      .catch((caught: unknown) => caught);
    expect(GatewayError.isInstance(error)).toBe(true);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.JsonRpcError);
    expect((error as GatewayError).target).toBe('alpha');
  });
});

describe('modern servers (2026-07-28)', () => {
  it('negotiates the stateless revision and lists and calls', async () => {
    const { server, gateway } = await connect(
      startModernServer({ generatedTools: 10, pageSize: 4 }),
    );
    expect(await gateway.listTools({ target: 'beta' })).toHaveLength(16);
    const result = await gateway.callTool({
      target: 'beta',
      tool: 'add',
      arguments: { a: 2, b: 3 },
    });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    const info = gateway.endpointInfo({ target: 'beta' });
    expect(info?.era).toBe('modern');
    expect(info?.protocolVersion).toBe('2026-07-28');
    expect(info?.sessionId).toBeUndefined();
    expect(
      server.requests.some((request) => request.rpcMethod === 'initialize'),
    ).toBe(false);
    // on the wire: the server/discover probe, then every request on 2026-07-28 without a session
    expect(server.requests[0]?.rpcMethod).toBe('server/discover');
    const calls = server.requests.filter(
      (request) =>
        request.rpcMethod === 'tools/call' ||
        request.rpcMethod === 'tools/list',
    );
    expect(calls).toHaveLength(5); // 4 pages + 1 call
    for (const request of calls) {
      expect(request.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(request.headers['mcp-session-id']).toBeUndefined();
      expect(request.headers['x-heretek-role']).toBe('director');
    }
    const call = server.requests.find(
      (request) => request.rpcMethod === 'tools/call',
    );
    expect(call?.headers['mcp-method']).toBe('tools/call');
    expect(call?.headers['mcp-name']).toBe('add');
  });
});

describe('modern servers (2026-07-28): failures', () => {
  it('returns isError results and maps an unknown tool to JSON_RPC_ERROR, as on 2025 servers', async () => {
    const { gateway } = await connect(startModernServer());
    expect(
      (await gateway.callTool({ target: 'beta', tool: 'fail', arguments: {} }))
        .isError,
    ).toBe(true);
    const error = await gateway
      .callTool({ target: 'beta', tool: 'nope', arguments: {} })
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.JsonRpcError);
    expect((error as GatewayError).target).toBe('beta');
    expect(gateway.endpointInfo({ target: 'beta' })?.era).toBe('modern');
  });
});

describe('reply forms and protocol eras', () => {
  it('reads JSON replies (enableJsonResponse)', async () => {
    const { gateway } = await connect(
      startSessionfulServer({ jsonResponse: true }),
    );
    expect(await gateway.listTools({ target: 'json' })).toHaveLength(6);
    const result = await echo(gateway, 'json', 'json reply');
    expect(result.content).toEqual([{ type: 'text', text: 'json reply' }]);
  });

  it.each([
    {
      replies: 'SSE replies that carry notifications before the response',
      start: () => startSessionfulServer(),
      era: 'legacy',
    },
    {
      replies: 'modern SSE replies (responseMode sse) with notifications first',
      start: () => startModernServer({ responseMode: 'sse' }),
      era: 'modern',
    },
  ])('reads $replies', async ({ start, era }) => {
    const { gateway } = await connect(start());
    const result = await gateway.callTool({
      target: 'sse',
      tool: 'chatty',
      arguments: {},
    });
    expect(result.content).toEqual([
      { type: 'text', text: 'done after notifications' },
    ]);
    expect(gateway.endpointInfo({ target: 'sse' })?.era).toBe(era);
  });

  it('speaks 2025-06-18 to a server that only supports it', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({ protocolVersions: ['2025-06-18'] }),
    );
    await echo(gateway, 'old', 'x');
    expect(gateway.endpointInfo({ target: 'old' })?.protocolVersion).toBe(
      '2025-06-18',
    );
    const call = server.requests.find(
      (request) => request.rpcMethod === 'tools/call',
    );
    expect(call?.headers['mcp-protocol-version']).toBe('2025-06-18');
  });

  it('works against an SDK v1 server, following its one-page-at-a-time pagination', async () => {
    const { gateway } = await connect(
      startV1Server({ generatedTools: 9, pageSize: 4 }),
    );
    expect(await gateway.listTools({ target: 'v1' })).toHaveLength(15);
    expect((await echo(gateway, 'v1', 'from v1')).content).toEqual([
      { type: 'text', text: 'from v1' },
    ]);
    expect(gateway.endpointInfo({ target: 'v1' })?.era).toBe('legacy');
  });
});

describe('sessions', () => {
  it('re-initializes once when the server forgets the session, and not on every call', async () => {
    const { server, gateway } = await connect(startSessionfulServer());
    await echo(gateway, 'alpha', '1');
    const firstSession = gateway.endpointInfo({ target: 'alpha' })?.sessionId;
    server.forgetSessions();
    const result = await echo(gateway, 'alpha', '2');
    expect(result.content).toEqual([{ type: 'text', text: '2' }]);
    await echo(gateway, 'alpha', '3');
    const info = gateway.endpointInfo({ target: 'alpha' });
    expect(info?.initializations).toBe(2);
    expect(info?.sessionId).not.toBe(firstSession);
    expect(requestsOf(server, 'initialize')).toHaveLength(2);
    const notFound = server.requests.filter(
      (request) =>
        request.headers['mcp-session-id'] === firstSession &&
        request.rpcMethod === 'tools/call',
    );
    expect(notFound).toHaveLength(2);
  });

  it('re-initializes an SDK v1 session that is gone', async () => {
    const { server, gateway } = await connect(startV1Server());
    await echo(gateway, 'v1', 'a');
    server.forgetSessions();
    const result = await echo(gateway, 'v1', 'b');
    expect(result.content).toEqual([{ type: 'text', text: 'b' }]);
    expect(gateway.endpointInfo({ target: 'v1' })?.initializations).toBe(2);
  });

  it('ends sessions with DELETE on close()', async () => {
    const { server, gateway } = await connect(startSessionfulServer());
    await echo(gateway, 'alpha', 'a');
    await echo(gateway, 'beta', 'b');
    const sessions = [
      gateway.endpointInfo({ target: 'alpha' })?.sessionId,
      gateway.endpointInfo({ target: 'beta' })?.sessionId,
    ];
    await gateway.close();
    expect(server.deleted.sort()).toEqual([...sessions].sort());
    const error = await gateway
      .callTool({ target: 'alpha', tool: 'echo', arguments: {} })
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.ClientClosed);
  });
});

describe('headers, cancellation, concurrency', () => {
  it('sends the bearer token and role, and keeps the token out of errors', async () => {
    const token = 'sekrit-token-123';
    const { server, gateway } = await connect(
      startSessionfulServer({ requireToken: token }),
      { token, role: 'qa-adversary' },
    );
    await echo(gateway, 'alpha', 'ok');
    expect(
      server.requests.every(
        (request) => request.headers.authorization === `Bearer ${token}`,
      ),
    ).toBe(true);
    expect(
      server.requests.every(
        (request) => request.headers['x-heretek-role'] === 'qa-adversary',
      ),
    ).toBe(true);
    const without = client(server, { role: 'director' });
    const error = await without
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.HttpStatus);
  });

  it("sends a call's own role instead of the client's, on the shared session", async () => {
    const { server, gateway } = await connect(startSessionfulServer(), {
      role: 'director',
    });
    const whoami = async (role?: string) =>
      (
        await gateway.callTool({
          target: 'alpha',
          tool: 'whoami',
          arguments: {},
          ...(role === undefined ? {} : { role }),
        })
      ).content;
    expect(await whoami('qa-adversary')).toEqual([
      { type: 'text', text: 'qa-adversary' },
    ]);
    expect(await whoami()).toEqual([{ type: 'text', text: 'director' }]);
    expect(await whoami('staff-backend')).toEqual([
      { type: 'text', text: 'staff-backend' },
    ]);
    expect(gateway.endpointInfo({ target: 'alpha' })?.initializations).toBe(1);
    expect(server.sessions.size).toBe(1);
    const wrong = await gateway
      .callTool({ target: 'alpha', tool: 'whoami', arguments: {}, role: '' })
      .catch((caught: unknown) => caught);
    expect((wrong as GatewayError).code).toBe(GatewayErrorCode.InvalidConfig);
    expect((wrong as Error).message).toContain("'role'");
  });

  it('cancels on the caller signal and tells the server (notifications/cancelled)', async () => {
    const cancelled: unknown[] = [];
    const { server, gateway } = await connect(
      startSessionfulServer({ cancelled }),
    );
    await gateway.listTools({ target: 'alpha' });
    const controller = new AbortController();
    const pending = gateway.callTool({
      target: 'alpha',
      tool: 'sleep',
      arguments: { ms: 10_000 },
      signal: controller.signal,
    });
    // abort once the server is working on the call (not on a timer: a loaded machine may not have sent it yet)
    await requestArrived(server, 'tools/call');
    controller.abort();
    const error = await pending.catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.Aborted);
    await expect
      .poll(() =>
        server.requests.some(
          (request) => request.rpcMethod === 'notifications/cancelled',
        ),
      )
      .toBe(true);
    const callId = server.requests.find(
      (request) => request.rpcMethod === 'tools/call',
    )?.rpcId;
    const notice = server.requests.find(
      (request) => request.rpcMethod === 'notifications/cancelled',
    );
    expect(
      (notice?.body as { params: { requestId: unknown } }).params.requestId,
    ).toBe(callId);
    await expect.poll(() => cancelled.length).toBe(1);
  });

  it('times out with TIMEOUT', async () => {
    const cancelled: unknown[] = [];
    const slow = track(await startSessionfulServer({ cancelled }));
    const gateway = client(slow, { timeoutMs: 1_000 });
    await gateway.listTools({ target: 'alpha' }); // connect first: the deadline below is the call's alone
    const error = await gateway
      .callTool({ target: 'alpha', tool: 'sleep', arguments: { ms: 30_000 } })
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.Timeout);
    expect((error as GatewayError).isRetryable).toBe(true);
    // the timed-out request was cancelled on the server, which stopped working on it
    await expect.poll(() => cancelled.length).toBe(1);
  });

  it('keeps connecting past a request that timed out, and the next request joins that connection', async () => {
    const slow = track(
      await startSessionfulServer({ initializeDelayMs: 1_500 }),
    );
    const gateway = client(slow, { timeoutMs: 500 });
    const first = await gateway
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught);
    expect((first as GatewayError).code).toBe(GatewayErrorCode.Timeout);
    // The backend finishes starting after the request gave up.
    await requestArrived(slow, 'notifications/initialized');
    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools.length).toBeGreaterThan(0);
    expect(requestsOf(slow, 'initialize')).toHaveLength(1);
  });

  it('gives up connecting after connectTimeoutMs', async () => {
    const slow = track(
      await startSessionfulServer({ initializeDelayMs: 2_000 }),
    );
    const gateway = client(slow, { timeoutMs: 5_000, connectTimeoutMs: 300 });
    const error = await gateway
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.Timeout);
    expect((error as GatewayError).message).toMatch(
      /^Connecting to .* did not finish within 300 ms \(option 'connectTimeoutMs'\)\.$/,
    );
  });

  it('caps concurrent requests per endpoint', async () => {
    const stats = { active: 0, maxActive: 0 };
    const { gateway } = await connect(startSessionfulServer({ stats }), {
      maxConcurrentPerEndpoint: 2,
    });
    await Promise.all(
      Array.from({ length: 6 }, () =>
        gateway.callTool({
          target: 'alpha',
          tool: 'sleep',
          arguments: { ms: 250 },
        }),
      ),
    );
    expect(stats.maxActive).toBe(2);
  });

  it(
    'answers 200 concurrent calls with no lost or crossed replies',
    { timeout: 60_000 },
    async () => {
      const server = track(await startSessionfulServer());
      // The per-request timeout also covers the wait for one of the 64 slots:
      // a ceiling for a loaded CI machine, not a timing.
      const gateway = client(server, {
        maxConcurrentPerEndpoint: 64,
        timeoutMs: 45_000,
      });
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          gateway.callTool({
            target: 'alpha',
            tool: 'echo',
            arguments: { text: `reply-${index}` },
          }),
        ),
      );
      results.forEach((result, index) =>
        expect(result.content).toEqual([
          { type: 'text', text: `reply-${index}` },
        ]),
      );
      // 200 first calls at once still share one initialize
      expect(requestsOf(server, 'initialize')).toHaveLength(1);
    },
  );
});

describe('closing', () => {
  it('fails a request in flight with CLIENT_CLOSED', async () => {
    const { server, gateway } = await connect(startSessionfulServer(), {
      timeoutMs: 10_000,
    });
    await gateway.listTools({ target: 'alpha' });
    const pending = gateway
      .callTool({ target: 'alpha', tool: 'sleep', arguments: { ms: 5_000 } })
      .catch((caught: unknown) => caught);
    await requestArrived(server, 'tools/call');
    await gateway.close();
    const error = await pending;
    expect((error as GatewayError).code).toBe(GatewayErrorCode.ClientClosed);
  });
});

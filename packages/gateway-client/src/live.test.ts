import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { GatewayErrorCode, type GatewayError } from './errors.js';
import type { GatewayClient } from './gateway-client.js';
import {
  listen,
  startSessionfulServer,
  type Listening,
  type RecordedRequest,
  type SessionfulServer,
} from './__fixtures__/servers.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';
import { requestArrived, requestsOf } from './__fixtures__/requests.js';

const { track, client, connect } = closeAfterEach();

/** expect.poll waits for a server-side effect; generous for a loaded machine. */

const standaloneGets = (requests: RecordedRequest[]) =>
  requests.filter(
    (request) =>
      request.method === 'GET' &&
      request.headers['last-event-id'] === undefined,
  );

const LATE_TOOL = {
  name: 'late-tool',
  description: 'Added while the client was connected.',
  inputSchema: { type: 'object' },
};

/** A client of a fresh server whose standalone GET stream is open; `events` collects its list changes. */
async function streaming() {
  const server = track(await startSessionfulServer());
  const events: Array<{ target: string }> = [];
  const gateway = client(server, {
    onToolsListChanged: (event) => events.push(event),
  });
  await gateway.listTools({ target: 'alpha' });
  await expect.poll(() => standaloneGets(server.requests).length).toBe(1);
  return { server, gateway, events };
}

/** Adds a tool on the server and counts the list changes seen so far. */
async function addToolAndCount(
  server: SessionfulServer,
  events: unknown[],
): Promise<number> {
  await server.addTool?.({ ...LATE_TOOL, name: `t-${events.length}` });
  return events.length;
}

describe('live tool lists (standalone GET stream)', () => {
  it('passes tools/list_changed on, and the new tool is listed without a new session', async () => {
    const server = track(await startSessionfulServer());
    const events: Array<{ target: string }> = [];
    const gateway = client(server, {
      onToolsListChanged: (event) => events.push(event),
    });
    const before = await gateway.listTools({ target: 'alpha' });
    expect(before.map((tool) => tool.name)).not.toContain('late-tool');
    await expect.poll(() => standaloneGets(server.requests).length).toBe(1);
    await server.addTool?.(LATE_TOOL);
    await expect.poll(() => events).toEqual([{ target: 'alpha' }]);
    const after = await gateway.listTools({ target: 'alpha' });
    expect(after.map((tool) => tool.name)).toContain('late-tool');
    expect(gateway.endpointInfo({ target: 'alpha' })?.initializations).toBe(1);
  });

  it('holds at most maxStandaloneStreams streams: later sessions get none and still list', async () => {
    const server = track(await startSessionfulServer());
    const events: Array<{ target: string }> = [];
    const gateway = client(server, {
      onToolsListChanged: (event) => events.push(event),
      maxStandaloneStreams: 2,
    });
    for (const target of ['alpha', 'beta', 'gamma'])
      await gateway.listTools({ target });
    await expect.poll(() => standaloneGets(server.requests).length).toBe(2);
    expect(
      ['alpha', 'beta', 'gamma'].map(
        (target) => gateway.endpointInfo({ target })?.streaming,
      ),
    ).toEqual([true, true, false]);
    // A change is pushed on the two streams only; the third session lists it.
    await server.addTool?.(LATE_TOOL);
    await expect
      .poll(() => events.map((event) => event.target).sort())
      .toEqual(['alpha', 'beta']);
    const gamma = await gateway.listTools({ target: 'gamma' });
    expect(gamma.map((tool) => tool.name)).toContain('late-tool');
    expect(standaloneGets(server.requests)).toHaveLength(2);
  });

  it('reconnects the stream when it drops and still passes notifications on', async () => {
    const { server, events } = await streaming();
    server.closeStandaloneStreams?.();
    await expect.poll(() => standaloneGets(server.requests).length).toBe(2);
    // The reconnected stream is registered once its GET was handled.
    await expect.poll(() => addToolAndCount(server, events)).toBeGreaterThan(0);
    expect(events[0]).toEqual({ target: 'alpha' });
  });

  it('starts a new session when the stream comes back 404, and reports a change', async () => {
    const { server, gateway, events } = await streaming();
    // As a gateway restart does: every session gone, streams closed.
    server.forgetSessions();
    await expect.poll(() => events).toEqual([{ target: 'alpha' }]);
    expect(gateway.endpointInfo({ target: 'alpha' })?.initializations).toBe(2);
    // The new session's stream carries notifications again.
    await expect.poll(() => addToolAndCount(server, events)).toBeGreaterThan(1);
  });

  it('does not ask again after a 405', async () => {
    // Fake timers, with time still passing: any reconnection the client
    // scheduled after the 405 is run at once below.
    vi.useFakeTimers({ toFake: ['setTimeout'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    const { server, gateway } = await connect(
      startSessionfulServer({ refuseStandalone: true }),
      { onToolsListChanged: () => undefined },
    );
    await gateway.listTools({ target: 'alpha' });
    await expect.poll(() => standaloneGets(server.requests).length).toBe(1);
    expect(gateway.endpointInfo({ target: 'alpha' })?.streaming).toBe(false);
    // Past every reconnection delay (250 ms doubling up to 5 s, 6 tries).
    await vi.advanceTimersByTimeAsync(60_000);
    expect(
      (
        await gateway.callTool({
          target: 'alpha',
          tool: 'echo',
          arguments: { text: 'still fine' },
        })
      ).content,
    ).toEqual([{ type: 'text', text: 'still fine' }]);
    // A reconnection run above would have reached the server before the call.
    expect(standaloneGets(server.requests)).toHaveLength(1);
  });

  it('opens no stream when nobody listens', async () => {
    const { server, gateway } = await connect(startSessionfulServer());
    await gateway.listTools({ target: 'alpha' });
    await gateway.callTool({ target: 'alpha', tool: 'add', arguments: {} });
    expect(standaloneGets(server.requests)).toHaveLength(0);
  });

  it("names the multiplexed endpoint's target '*'", async () => {
    const server = track(await startSessionfulServer());
    const events: Array<{ target: string }> = [];
    const gateway = client(server, {
      mode: 'multiplexed',
      onToolsListChanged: (event) => events.push(event),
    });
    await gateway.listAllTools();
    await expect.poll(() => standaloneGets(server.requests).length).toBe(1);
    await server.addTool?.(LATE_TOOL);
    await expect.poll(() => events).toEqual([{ target: '*' }]);
  });
});

const listCursors = (requests: RecordedRequest[]) =>
  requests
    .filter((request) => request.rpcMethod === 'tools/list')
    .map(
      (request) =>
        (request.body as { params?: { cursor?: string } }).params?.cursor ??
        null,
    );

describe('sessions that expire mid-listing', () => {
  it('survives expiries on pages 2 and 4, resuming each with the same cursor', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({
        generatedTools: 25,
        pageSize: 5,
        expireOnPages: [2, 4],
      }),
    );
    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools).toHaveLength(31);
    expect(new Set(tools.map((tool) => tool.name)).size).toBe(31);
    expect(gateway.endpointInfo({ target: 'alpha' })?.initializations).toBe(3);
    const cursors = listCursors(server.requests);
    // 7 pages, pages 2 and 4 sent twice with the same cursor; page 1 once.
    expect(cursors).toHaveLength(9);
    expect(cursors.filter((cursor) => cursor === null)).toHaveLength(1);
    expect(cursors[1]).toBe(cursors[2]);
    expect(cursors[4]).toBe(cursors[5]);
    expect(requestsOf(server, 'initialize')).toHaveLength(3);
  });

  it('starts over only when the new session rejects the cursor', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({
        generatedTools: 25,
        pageSize: 5,
        expireOnPages: [3],
        sessionCursors: true,
      }),
    );
    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools).toHaveLength(31);
    expect(new Set(tools.map((tool) => tool.name)).size).toBe(31);
    const cursors = listCursors(server.requests);
    // pages 1, 2, 3 (expired), 3 again (cursor rejected), then 1 ... 7.
    expect(cursors.filter((cursor) => cursor === null)).toHaveLength(2);
    expect(cursors).toHaveLength(4 + 7);
  });

  it('says what happened when the session is rejected again on the same page', async () => {
    const { gateway } = await connect(
      startSessionfulServer({
        generatedTools: 25,
        pageSize: 5,
        expireOnPages: [4, 4],
      }),
    );
    const error = (await gateway
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught)) as GatewayError;
    expect(error.code).toBe(GatewayErrorCode.ConnectionReset);
    expect(error.message).toContain('expired on page 4 after 3 pages');
    expect(error.message).toContain(
      're-initialized; the server rejected the session again',
    );
    expect(error.message).toContain('HTTP 404');
  });
});

/**
 * Starts a 30 s `sleep` call on `alpha` and waits until the server has it;
 * `outcome` is what the call ends with (its error, once the client closes).
 */
async function sleepingCall(
  gateway: GatewayClient,
  server: Listening,
): Promise<{ outcome: Promise<unknown> }> {
  const outcome = gateway
    .callTool({ target: 'alpha', tool: 'sleep', arguments: { ms: 30_000 } })
    .catch((caught: unknown) => caught);
  await requestArrived(server, 'tools/call');
  return { outcome };
}

describe('close() stops work in flight', () => {
  it('rejects a slow call with CLIENT_CLOSED at once', async () => {
    const cancelled: unknown[] = [];
    const { server, gateway } = await connect(
      startSessionfulServer({ cancelled }),
      { timeoutMs: 60_000 },
    );
    await gateway.listTools({ target: 'alpha' });
    const started = Date.now();
    const call = await sleepingCall(gateway, server);
    await gateway.close();
    const error = (await call.outcome) as GatewayError;
    expect(error.code).toBe(GatewayErrorCode.ClientClosed);
    // Well before the 30 s the tool sleeps (a loaded machine gets 20 s of slack).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('rejects a listing waiting for a slot and one waiting for its reply', async () => {
    const { server, gateway } = await connect(startSessionfulServer(), {
      timeoutMs: 60_000,
      maxConcurrentPerEndpoint: 1,
    });
    await gateway.listTools({ target: 'alpha' });
    const slow = await sleepingCall(gateway, server);
    const queued = gateway
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught);
    await gateway.close();
    expect(((await slow.outcome) as GatewayError).code).toBe(
      GatewayErrorCode.ClientClosed,
    );
    expect(((await queued) as GatewayError).code).toBe(
      GatewayErrorCode.ClientClosed,
    );
  });

  it('does not wait for a server that never answers initialize', async () => {
    const silent = track(await listen(() => undefined));
    const gateway = client(silent, { timeoutMs: 60_000 });
    const started = Date.now();
    const listing = gateway
      .listTools({ target: 'alpha' })
      .catch((caught: unknown) => caught);
    await expect.poll(() => silent.requests.length).toBeGreaterThan(0);
    await gateway.close();
    expect(((await listing) as GatewayError).code).toBe(
      GatewayErrorCode.ClientClosed,
    );
    // Far below the 60 s timeout the connect would otherwise wait for.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

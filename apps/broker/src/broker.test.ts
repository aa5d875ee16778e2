import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SEED_TOOLS, ToolCatalog, type Backend } from '@heretek/catalog';
import { GatewayClient } from '@heretek/gateway-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { refusal } from './__fixtures__/refusal.js';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { spawnBroker } from './__fixtures__/spawn-broker.js';
import { Broker, type BrokerEvent } from './broker.js';
import { EventStream } from './event-stream.js';
import type { GatewayEvent } from './types.js';
import { answerMetaTool } from './meta-tools.js';

/**
 * Moves the clock past the breakers' cooldown (60 s; cockatiel reads
 * `Date.now()`), until the test ends.
 */
function pastCooldown(): void {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_001 });
}

const BACKENDS: Backend[] = [
  { backend: 'iksnerd/adb-mcp', target: 'adb', profile: 'android' },
  { backend: 'heretek-core', target: 'core', profile: 'core' },
];

const ADB_TOOLS: FixtureTool[] = [
  {
    name: 'install_apk',
    description: 'Install an APK file on a connected Android device',
    inputSchema: {
      type: 'object',
      properties: { apk_path: { type: 'string' }, serial: { type: 'string' } },
      required: ['apk_path'],
    },
  },
  {
    name: 'list_packages',
    description: 'List installed Android packages on a device',
    inputSchema: { type: 'object', properties: { serial: { type: 'string' } } },
    readOnly: true,
  },
];

const seedCatalog = () =>
  new ToolCatalog({
    tools: SEED_TOOLS.filter((t) =>
      BACKENDS.some((b) => b.target === t.target),
    ),
  });

/** The code a broker refuses a call of `name` with no arguments with. */
const refusedWith = async (broker: Broker, name: string) =>
  (await refusal(broker.callTool({ name, arguments: {} }))).code;

/** A call of adb_list_packages goes through to the backend and answers. */
async function expectPackagesListed(broker: Broker): Promise<void> {
  const result = await broker.callTool({
    name: 'adb_list_packages',
    arguments: {},
  });
  expect(JSON.stringify(result.content)).toContain('list_packages ok');
}

/** Gateway clients and backends a test opened, closed after it (last first). */
const opened: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  vi.useRealTimers();
  while (opened.length > 0) await opened.pop()?.close();
});

/** Starts the fixture backends with `tools`, closed after the test. */
async function backendsWith(
  tools: Record<string, FixtureTool[]>,
): Promise<McpBackends> {
  const backends = await startMcpBackends(tools);
  opened.push(backends);
  return backends;
}

/**
 * A broker for `role` over a real GatewayClient to `backends` in `mode`
 * (closed after the test), with the seed catalog of the configured backends.
 */
function brokerOver(
  backends: McpBackends,
  {
    role,
    mode = 'per-target',
    ...extra
  }: { role: string; mode?: 'per-target' | 'multiplexed' } & Partial<
    ConstructorParameters<typeof Broker>[0]
  >,
): Broker {
  // The gateway's events: the tests report list changes on it themselves.
  const events = new EventStream<GatewayEvent>();
  const client = new GatewayClient({
    url: backends.url,
    mode,
    role,
    timeoutMs: 5_000,
  });
  opened.push(client);
  const broker = new Broker({
    role,
    catalog: seedCatalog(),
    backends: BACKENDS,
    gateway: Object.assign(client, { subscribe: events.subscribe }),
    gatewayMode: mode,
    ...extra,
  });
  gatewayEvents.set(broker, events);
  return broker;
}

/** The text of `mcp_search_tools` for `query`, as an agent reads it. */
async function searchText(broker: Broker, query: string): Promise<string> {
  const { content } = await answerMetaTool({
    broker,
    name: 'mcp_search_tools',
    input: { query },
  });
  return (content[0] as { text: string }).text;
}

/** The gateway events of each broker {@link brokerOver} made. */
const gatewayEvents = new WeakMap<Broker, EventStream<GatewayEvent>>();

/** A backend's `tools/list_changed`, as the broker's gateway reports it. */
function listChanged(broker: Broker, target: string): void {
  gatewayEvents.get(broker)!.emit({ type: 'tools-list-changed', target });
}

describe('Broker through a real gateway client and real MCP servers', () => {
  let backends: McpBackends;

  beforeEach(async () => {
    backends = await backendsWith({ adb: ADB_TOOLS, core: [] });
  });

  const brokerFor = (
    role: string,
    extra: Partial<ConstructorParameters<typeof Broker>[0]> = {},
  ) => brokerOver(backends, { role, ...extra });

  it("gives its subscribers discovery's and the gateway's events until they unsubscribe", async () => {
    const broker = brokerFor('staff-mobile');
    const events: BrokerEvent[] = [];
    const stop = broker.subscribe((event) => events.push(event));
    await broker.discover();
    expect(events).toContainEqual({ type: 'catalog-changed' });
    listChanged(broker, 'adb');
    expect(events.at(-1)).toEqual({
      type: 'tools-list-changed',
      target: 'adb',
    });
    stop();
    const seen = events.length;
    listChanged(broker, 'adb');
    await broker.discover();
    expect(events).toHaveLength(seen);
    await broker.close();
  });

  it('replaces a backend that discovery lists and keeps the seed of one that fails', async () => {
    backends.failing.add('core');
    const broker = brokerFor('staff-mobile');
    const seedAdb = broker.catalog
      .list()
      .filter((t) => t.target === 'adb')
      .map((t) => t.name);
    expect(seedAdb).toContain('adb_tap');

    const outcomes = await broker.discover();
    expect(outcomes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ target: 'adb', ok: true, tools: 2 }),
        expect.objectContaining({
          target: 'core',
          ok: false,
          code: 'HTTP_STATUS',
        }),
      ]),
    );
    const adb = broker.catalog.list().filter((t) => t.target === 'adb');
    expect(adb.map((t) => t.name).sort()).toEqual([
      'adb_install_apk',
      'adb_list_packages',
    ]);
    expect(adb.find((t) => t.name === 'adb_install_apk')?.mutating).toBe(true);
    expect(adb.find((t) => t.name === 'adb_list_packages')?.mutating).toBe(
      false,
    );
    expect(broker.catalog.get('core_read_file')?.source).toBe('seed');
  });

  it('calls the backend with the bare tool name and the role header, and returns its result', async () => {
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    const result = await broker.callTool({
      name: 'adb_install_apk',
      arguments: { apk_path: 'app.apk' },
    });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain('install_apk ok');
    expect(backends.calls).toEqual([
      {
        path: '/mcp/adb',
        tool: 'install_apk',
        arguments: { apk_path: 'app.apk' },
        role: 'staff-mobile',
      },
    ]);
  });

  it('lets a read-only role call read-only tools and refuses mutating ones without sending', async () => {
    const broker = brokerFor('qa-adversary');
    await broker.discover();
    await expectPackagesListed(broker);
    const before = backends.calls.length;
    const error = await refusal(
      broker.callTool({
        name: 'adb_install_apk',
        arguments: { apk_path: 'x.apk' },
      }),
    );
    expect(error.code).toBe('ROLE_FORBIDDEN');
    const unknown = await refusal(
      broker.callTool({ name: 'adb_not_listed', arguments: {} }),
    );
    expect(unknown.code).toBe('ROLE_FORBIDDEN');
    expect(unknown.message).toMatch(
      /not in the catalog, so it counts as mutating/,
    );
    expect(backends.calls.length).toBe(before);
  });

  it('checks arguments against the discovered schema and sends nothing when they fail', async () => {
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    const before = backends.requests.length;
    const error = await refusal(
      broker.callTool({ name: 'adb_install_apk', arguments: { serial: 5 } }),
    );
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain('missing required property "apk_path"');
    expect(error.message).toContain('arguments/serial: must be string');
    expect(backends.requests.length).toBe(before);
  });

  it('opens the circuit after three backend faults, then closes it after the cooldown', async () => {
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    backends.failing.add('adb');
    for (let i = 0; i < 3; i++) {
      const error = await refusal(
        broker.callTool({ name: 'adb_list_packages', arguments: {} }),
      );
      expect(error.code).toBe('BACKEND_FAILED');
    }
    const before = backends.requests.length;
    const open = await refusal(
      broker.callTool({ name: 'adb_list_packages', arguments: {} }),
    );
    expect(open.code).toBe('CIRCUIT_OPEN');
    expect(open.isRetryable).toBe(true);
    expect(backends.requests.length).toBe(before);
    // The argument check comes before the breaker: bad arguments are named, not told to retry later.
    expect(await refusedWith(broker, 'adb_install_apk')).toBe(
      'INVALID_ARGUMENTS',
    );

    backends.failing.delete('adb');
    pastCooldown();
    await expectPackagesListed(broker);
  });

  it('aborts a slow call when the caller cancels, without counting it as a backend fault', async () => {
    backends.tools.set('adb', [
      ...ADB_TOOLS,
      {
        ...ADB_TOOLS[1]!,
        name: 'slow_dump',
        description: 'Slow dump',
        delayMs: 20_000,
      },
    ]);
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    // As many aborts as the faults that open the circuit (3): counted, they would open it.
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const started = Date.now();
      const pending = refusal(
        broker.callTool({
          name: 'adb_slow_dump',
          arguments: {},
          signal: controller.signal,
        }),
      );
      // Aborted once the backend has the call.
      await expect
        .poll(() => backends.calls.filter((c) => c.tool === 'slow_dump').length)
        .toBe(i + 1);
      controller.abort();
      const error = await pending;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(error.code).toBe('CANCELLED');
    }
    await expectPackagesListed(broker);
  });

  it('closes the circuit for good after a trial that ends without a counted fault', async () => {
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    backends.failing.add('adb');
    for (let i = 0; i < 3; i++)
      await refusal(
        broker.callTool({ name: 'adb_list_packages', arguments: {} }),
      );
    expect(await refusedWith(broker, 'adb_list_packages')).toBe('CIRCUIT_OPEN');
    backends.failing.delete('adb');
    pastCooldown();
    // The trial reaches the backend, which answers with a protocol error (unknown tool): not a backend fault.
    const trial = await refusal(
      broker.callTool({ name: 'adb_not_a_tool', arguments: {} }),
    );
    expect(trial.code).toBe('BACKEND_FAILED');
    backends.failing.add('adb');
    // One new fault must not reopen the circuit: the count starts again.
    expect(await refusedWith(broker, 'adb_list_packages')).toBe(
      'BACKEND_FAILED',
    );
    expect(await refusedWith(broker, 'adb_list_packages')).toBe(
      'BACKEND_FAILED',
    );
  });

  it('caps the first wait for start-up discovery and says which backends are not listed yet', async () => {
    backends.hanging.add('core');
    // The first operation answers within the cap (1 s), from what the
    // catalog holds, while "core" hangs.
    const broker = brokerFor('staff-mobile');
    broker.start();
    const search = () => searchText(broker, 'install apk');
    await expect
      .poll(async () => (await search()).split('\n')[0])
      .toContain('adb_install_apk');
    const answer = await search();
    expect(answer).toContain(
      'Discovery is still listing 1 of 2 backends: their tools are not in the catalog yet',
    );
    expect(broker.discovering()).toEqual({ pending: 1, total: 2 });
    const unknown = await refusal(broker.inspectToolSchema('core_no_such'));
    expect(unknown.code).toBe('UNKNOWN_TOOL');
    expect(unknown.message).toContain('Discovery is still listing 1 of 2');
    // Once "core" fails (the client's timeout), nothing is pending any more.
    backends.hanging.delete('core');
    await broker.discover();
    expect(broker.discovering()).toBeUndefined();
    expect(await searchText(broker, 'install apk')).not.toContain(
      'Discovery is still listing',
    );
  });

  it('lists a backend again when asked for a name of it the catalog lacks, at most once in a while', async () => {
    // No stream pushes this backend's change (the client listens for none).
    const broker = brokerFor('staff-mobile');
    await broker.discover();
    const adbListings = () =>
      backends.listings.filter((path) => path === '/mcp/adb').length;
    const before = adbListings();
    backends.tools.get('adb')!.push({
      name: 'reboot_device',
      description: 'Reboot a connected Android device',
      inputSchema: { type: 'object' },
      readOnly: true,
    });
    await expect
      .poll(() =>
        broker.inspectToolSchema('adb_reboot_device').then(
          (found) => found.target,
          () => undefined,
        ),
      )
      .toBe('adb');
    const view = await broker.inspectToolSchema('adb_reboot_device');
    expect(view.target).toBe('adb');
    expect(adbListings()).toBe(before + 1);
    // Another missing name of the same backend soon after: no new listing.
    expect(
      (await refusal(broker.inspectToolSchema('adb_no_such_tool'))).code,
    ).toBe('UNKNOWN_TOOL');
    expect(adbListings()).toBe(before + 1);
  });

  it('retries a failed backend sooner than the TTL, on the next operation', async () => {
    backends.failing.add('adb');
    const broker = brokerFor('staff-mobile', { discoveryTtlMs: 3_600_000 });
    await broker.discover();
    expect(broker.catalog.get('adb_install_apk')).toBeUndefined();
    backends.failing.delete('adb');
    // Past the retry after a failure (30 s), long before the TTL.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 30_001 });
    await broker.searchTools({ query: 'install apk' });
    await expect
      .poll(() => broker.catalog.get('adb_install_apk'), { timeout: 10_000 })
      .toBeDefined();
    expect(broker.catalog.get('adb_install_apk')).toBeDefined();
  });

  it('re-runs discovery in the background once the catalog is older than the TTL', async () => {
    const broker = brokerFor('director', { discoveryTtlMs: 1 });
    await broker.discover();
    const listed = backends.listings.length;
    // Older than the TTL (1 ms).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1_000 });
    backends.tools.set('adb', [
      ...ADB_TOOLS,
      {
        ...ADB_TOOLS[1]!,
        name: 'logcat_dump',
        description: 'Dump the Android logcat buffer',
      },
    ]);
    await broker.searchTools({ query: 'logcat' });
    await expect
      .poll(() => broker.catalog.get('adb_logcat_dump'), { timeout: 10_000 })
      .toBeDefined();
    expect(backends.listings.length).toBeGreaterThan(listed);
    expect(broker.catalog.get('adb_logcat_dump')).toBeDefined();
  });
});

describe('Broker without a gateway', () => {
  it('answers a mistyped name with UNKNOWN_TOOL and the closest names, for writer roles too', async () => {
    const broker = new Broker({ role: 'staff-backend' });
    const error = await refusal(
      broker.callTool({ name: 'core_readfile', arguments: { path: 'x' } }),
    );
    expect(error.code).toBe('UNKNOWN_TOOL');
    expect(error.message).toMatch(/Closest: .*core_read_file/);
  });

  it('counts tools per target again after the catalog changes', () => {
    const broker = new Broker({ role: 'staff-backend' });
    const count = (target: string) =>
      broker.targetSummary().find((row) => row.target === target)?.tools;
    const core = broker.catalog.list().filter((t) => t.target === 'core');
    expect(count('core')).toBe(core.length);
    broker.catalog.replaceBackend('core', core.slice(1));
    expect(count('core')).toBe(core.length - 1);
    broker.catalog.replaceBackend(
      'extra',
      core
        .slice(0, 1)
        .map((t) => ({ ...t, target: 'extra', name: `extra_${t.tool}` })),
    );
    expect(count('extra')).toBe(1);
  });
});

describe('Broker re-listing on tools/list_changed', () => {
  const NEW_TOOL: FixtureTool = {
    name: 'count_quokkas',
    description: 'Count the quokkas on an island',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
  };

  it('lists only the backend that changed, once for a burst of notices', async () => {
    const backends = await backendsWith({ adb: ADB_TOOLS, core: [] });
    const broker = brokerOver(backends, {
      role: 'staff-mobile',
    });
    await broker.discover();
    const before = backends.listings.length;
    backends.tools.set('adb', [...ADB_TOOLS, NEW_TOOL]);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 0; i < 5; i++) listChanged(broker, 'adb');
      // The burst leaves one timer, so one listing: none is left to come.
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(250);
    } finally {
      vi.useRealTimers();
    }
    await expect
      .poll(() => broker.catalog.get('adb_count_quokkas'), {
        timeout: 8_000,
        interval: 20,
      })
      .toBeDefined();
    expect(backends.listings.slice(before)).toEqual(['/mcp/adb']);
    await broker.close();
  });

  it('runs the whole multiplexed listing again for a notice from the gateway (target "*")', async () => {
    const backends = await backendsWith({ adb: ADB_TOOLS, core: [] });
    const broker = brokerOver(backends, {
      role: 'staff-mobile',
      mode: 'multiplexed',
    });
    await broker.discover();
    const before = backends.listings.length;
    backends.tools.set('core', [NEW_TOOL]);
    listChanged(broker, '*');
    await expect
      .poll(() => broker.catalog.get('core_count_quokkas'), {
        timeout: 8_000,
        interval: 20,
      })
      .toBeDefined();
    expect(backends.listings.slice(before)).toEqual(['/mcp']);
    await broker.close();
  });
});

describe('Broker in multiplexed mode', () => {
  it('catalogues targets the configuration does not know, and calls them by prefixed name', async () => {
    const backends = await backendsWith({
      adb: ADB_TOOLS,
      extra: [
        {
          name: 'echo_text',
          description: 'Echo text back',
          inputSchema: { type: 'object' },
          readOnly: true,
        },
      ],
    });
    const lines: string[] = [];
    const broker = brokerOver(backends, {
      role: 'director',
      mode: 'multiplexed',
      log: (line) => lines.push(line),
    });
    await broker.discover();
    await broker.discover();
    // Learned once, after the configured targets.
    expect(
      lines.filter((line) => line.includes('unconfigured target "extra"')),
    ).toEqual([
      'discovery: gateway lists unconfigured target "extra"; catalogued under profile core',
    ]);
    expect(broker.targetSummary().map((t) => t.target)).toEqual([
      'adb',
      'core',
      'extra',
    ]);
    // A configured target keeps its own profile.
    expect(broker.catalog.list().find((t) => t.target === 'adb')?.profile).toBe(
      'android',
    );
    const extra = broker.catalog.get('extra_echo_text');
    expect(extra).toMatchObject({
      target: 'extra',
      tool: 'echo_text',
      profile: 'core',
      mutating: false,
    });
    // The revealed target is known from now on: a search can name it.
    expect(
      (await broker.searchTools({ query: 'echo', target: 'extra' })).hits,
    ).toMatchObject([{ name: 'extra_echo_text' }]);
    await broker.callTool({
      name: 'extra_echo_text',
      arguments: { text: 'hi' },
    });
    expect(backends.calls.at(-1)).toMatchObject({
      path: '/mcp',
      tool: 'extra_echo_text',
      role: 'director',
    });
  });
});

describe('heretek-lazy-broker against a gateway (built CLI over stdio)', () => {
  it('discovers at start-up and calls a tool end to end', async () => {
    const backends = await startMcpBackends({ adb: ADB_TOOLS, core: [] });
    const dir = mkdtempSync(join(tmpdir(), 'broker-backends-'));
    const file = join(dir, 'backends.json');
    writeFileSync(file, JSON.stringify(BACKENDS));
    const broker = await spawnBroker({
      HERETEK_GATEWAY_URL: backends.url,
      HERETEK_BROKER_ROLE: 'staff-mobile',
      HERETEK_BACKENDS_FILE: file,
      HERETEK_GATEWAY_TOKEN: 'tok-never-logged',
    });
    try {
      const search = await broker.client.callTool({
        name: 'mcp_search_tools',
        arguments: { query: 'install apk' },
      });
      expect(JSON.stringify(search.content)).toContain('adb_install_apk');
      const result = await broker.client.callTool({
        name: 'mcp_call_tool',
        arguments: {
          name: 'adb_install_apk',
          arguments: { apk_path: 'demo.apk' },
        },
      });
      expect(result.isError).not.toBe(true);
      expect(JSON.stringify(result.content)).toContain('install_apk ok');
      expect(backends.calls.at(-1)).toMatchObject({
        path: '/mcp/adb',
        tool: 'install_apk',
        role: 'staff-mobile',
      });
      expect(broker.stderr()).toMatch(/discovery: 2\/2 backends listed/);

      // A failing backend comes back as an isError result; the broker stays up.
      backends.failing.add('adb');
      const failed = await broker.client.callTool({
        name: 'mcp_call_tool',
        arguments: {
          name: 'adb_install_apk',
          arguments: { apk_path: 'demo.apk' },
        },
      });
      expect(failed.isError).toBe(true);
      expect(JSON.stringify(failed.content)).toContain('BACKEND_FAILED');
      backends.failing.delete('adb');
      const again = await broker.client.callTool({
        name: 'mcp_call_tool',
        arguments: { name: 'adb_list_packages', arguments: {} },
      });
      expect(again.isError).not.toBe(true);
      for (const line of broker.transport.stdoutLines)
        expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
      expect(broker.stderr()).not.toContain('tok-never-logged');
    } finally {
      await broker.close();
      await backends.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

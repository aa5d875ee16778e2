import { ToolCatalog, type Backend } from '@heretek/catalog';
import { GatewayClient } from '@heretek/gateway-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  startMcpBackends,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { Broker } from './broker.js';

const TARGETS = Array.from({ length: 40 }, (_, i) => `t${i}`);
const TOOLS_PER_TARGET = 30;

/** A word only this target's descriptions use (letters: the analysis splits digits off). */
const wordOf = (target: string) =>
  `zq${String.fromCharCode(97 + Math.floor(Number(target.slice(1)) / 26))}${String.fromCharCode(97 + (Number(target.slice(1)) % 26))}`;

const listing = (target: string) =>
  Array.from({ length: TOOLS_PER_TARGET }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool ${i} of ${target}: counts the ${wordOf(target)} in burrow ${i}`,
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    readOnly: true,
  }));

const BACKENDS: Backend[] = TARGETS.map((target) => ({
  backend: target,
  target,
  profile: 'core',
}));

describe('discovery over many backends (real gateway client, real MCP servers)', () => {
  let backends: McpBackends | undefined;
  let gateway: GatewayClient | undefined;

  afterEach(async () => {
    await gateway?.close();
    await backends?.close();
  });

  const start = async (hanging: readonly string[] = []) => {
    backends = await startMcpBackends(
      Object.fromEntries(TARGETS.map((target) => [target, listing(target)])),
    );
    for (const target of hanging) backends.hanging.add(target);
    gateway = new GatewayClient({
      url: backends.url,
      mode: 'per-target',
      role: 'director',
      timeoutMs: 30_000,
    });
    const catalog = new ToolCatalog();
    const builds = vi.spyOn(catalog, 'replaceBackendsAsync');
    const broker = new Broker({
      role: 'director',
      catalog,
      backends: BACKENDS,
      gateway,
    });
    return { broker, catalog, builds };
  };

  it('catalogues listings that arrive together in a few builds, not one per backend, and finds every tool', async () => {
    const { broker, catalog, builds } = await start();
    // The first 32 listings (as many as discovery asks at once) are answered
    // together, whatever the machine's load.
    let release = () => {};
    backends!.listingsHeld = new Promise((resolve) => (release = resolve));
    const discovery = broker.discover();
    await expect.poll(() => backends!.listings.length).toBe(32);
    release();
    const outcomes = await discovery;
    expect(outcomes.filter((o) => o.ok)).toHaveLength(TARGETS.length);
    expect(catalog.size).toBe(TARGETS.length * TOOLS_PER_TARGET);
    // Each build applies every listing that arrived while the one before ran.
    const applied = builds.mock.calls.map(([changes]) => changes.size);
    expect(applied.reduce((sum, size) => sum + size, 0)).toBe(TARGETS.length);
    expect(builds.mock.calls.length).toBeLessThan(TARGETS.length / 2);
    for (const target of TARGETS) {
      const { hits } = await broker.searchTools({
        query: `${wordOf(target)} burrow 7`,
      });
      expect(hits[0]?.name).toBe(`${target}_tool_7`);
    }
  });

  it('answers searches and inspects while a backend that never answers keeps discovery running', async () => {
    const { broker, catalog } = await start(['t3']);
    const discovery = broker.discover();
    let discoveryDone = false;
    void discovery.then(() => (discoveryDone = true));
    // Wait for every answering backend (listings arrive in any order), then
    // ask while t3's listing is still open.
    await expect
      .poll(() => catalog.size)
      .toBe((TARGETS.length - 1) * TOOLS_PER_TARGET);
    const { hits } = await broker.searchTools({
      query: `${wordOf('t39')} burrow 1`,
    });
    expect(hits[0]?.name).toBe('t39_tool_1');
    const answers = await Promise.all([
      ...TARGETS.filter((t) => t !== 't3').map((target) =>
        broker.inspectToolSchema(`${target}_tool_2`),
      ),
      broker.searchTools({ query: 'counts in burrow' }),
    ]);
    expect(answers).toHaveLength(TARGETS.length);
    expect(discoveryDone).toBe(false);
    await broker.close();
    const outcomes = await discovery;
    expect(outcomes.find((o) => o.target === 't3')?.ok).toBe(false);
  });

  it('lists every answering backend when more backends never answer than are listed at once', async () => {
    // 32 backends are listed at once; 34 of the 40 never answer.
    const silent = TARGETS.slice(0, 34);
    const { broker, catalog } = await start(silent);
    const discovery = broker.discover();
    await expect.poll(() => catalog.size).toBe(6 * TOOLS_PER_TARGET);
    for (const target of TARGETS.slice(34))
      expect(catalog.get(`${target}_tool_0`)).toBeDefined();
    await broker.close();
    const outcomes = await discovery;
    expect(outcomes.map((o) => o.target)).toEqual(TARGETS);
    expect(outcomes.filter((o) => !o.ok)).toHaveLength(silent.length);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ToolCatalog,
  openAiEmbeddings,
  toolEntryFromMcpTool,
} from '@heretek/catalog';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  startEmbeddingsEndpoint,
  type EmbeddingsEndpoint,
} from '../__fixtures__/embeddings-endpoint.js';
import { HybridRanking } from './hybrid-ranking.js';

const folder = mkdtempSync(path.join(tmpdir(), 'heretek-hybrid-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshFile = () => path.join(folder, `embeddings-${(files += 1)}.json`);

const ranking = (
  endpoint: EmbeddingsEndpoint,
  options: {
    cacheFile?: string;
    queryTimeoutMs?: number;
  } = {},
) => {
  const lines: string[] = [];
  const hybrid = new HybridRanking({
    provider: openAiEmbeddings({ url: endpoint.url, model: 'glove-sif' }),
    cacheFile: options.cacheFile ?? freshFile(),
    ...(options.queryTimeoutMs === undefined
      ? {}
      : { queryTimeoutMs: options.queryTimeoutMs }),
    log: (line) => lines.push(line),
  });
  onTestFinished(() => hybrid.close());
  return { hybrid, lines };
};

/** The pause after a failure before a background probe (10 s). */
const PAUSE_MS = 10_000;

/** A clock that moves only when the test moves it (until the test ends): probes wait for it. */
function movedClock(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
}

/** The endpoint for one test, killed when the test ends. */
async function endpointForTest(
  args?: readonly string[],
): Promise<EmbeddingsEndpoint> {
  const endpoint = await startEmbeddingsEndpoint(args);
  onTestFinished(() => endpoint.kill());
  return endpoint;
}

const weatherTool = (description: string) =>
  toolEntryFromMcpTool({
    backend: { backend: 'weather', target: 'weather', profile: 'core' },
    tool: { name: 'forecast', description },
  });

describe('HybridRanking', () => {
  it('embeds only new or changed tools, from the cache after a restart', async () => {
    const endpoint = await endpointForTest();
    const cacheFile = freshFile();
    const catalog = ToolCatalog.fromSeed();
    const first = ranking(endpoint, { cacheFile });
    await first.hybrid.sync(catalog);
    expect(await endpoint.stats()).toEqual({ requests: 1, inputs: 34 });
    expect(first.hybrid.toolsWithVectors).toBe(34);

    catalog.replaceBackend('weather', [weatherTool('Weather forecast.')]);
    const second = ranking(endpoint, { cacheFile });
    await second.hybrid.sync(catalog);
    expect(await endpoint.stats()).toEqual({ requests: 2, inputs: 35 });
    expect(second.lines.join('\n')).toMatch(/34 tool vectors of glove-sif/);

    catalog.replaceBackend('weather', [weatherTool('Rain and wind forecast.')]);
    await second.hybrid.sync(catalog);
    await second.hybrid.sync(catalog);
    expect(await endpoint.stats()).toEqual({ requests: 3, inputs: 36 });
    // The cache keeps the vectors of the tools the catalog has now.
    const saved = JSON.parse(readFileSync(cacheFile, 'utf8')) as {
      models: Record<string, Record<string, string>>;
    };
    expect(Object.keys(saved.models['glove-sif']!)).toHaveLength(35);
  }, 30_000);

  it('follows the catalog: told of a change, embeds the new tool without a search', async () => {
    const endpoint = await endpointForTest();
    const { hybrid } = ranking(endpoint);
    const catalog = ToolCatalog.fromSeed();
    hybrid.follow(catalog);
    await expect.poll(() => hybrid.toolsWithVectors === 34).toBe(true);
    expect(await endpoint.stats()).toEqual({ requests: 1, inputs: 34 });
    catalog.replaceBackend('weather', [weatherTool('Weather forecast.')]);
    hybrid.catalogChanged();
    // Bounded by the test's timeout.
    await expect.poll(() => hybrid.toolsWithVectors === 35).toBe(true);
    expect(await endpoint.stats()).toEqual({ requests: 2, inputs: 35 });
  }, 30_000);

  it('gives a search its query vector and the tool vectors, and none before tool vectors exist', async () => {
    const endpoint = await endpointForTest();
    const catalog = ToolCatalog.fromSeed();
    const { hybrid } = ranking(endpoint);
    expect(await hybrid.vectorsFor(catalog, 'phone screen')).toBeUndefined();
    await hybrid.sync(catalog);
    const vectors = await hybrid.vectorsFor(catalog, 'phone screen');
    expect(vectors?.query).toHaveLength(100);
    expect(vectors?.fusion).toEqual({});
    expect(vectors?.tool('adb_tap')).toHaveLength(100);
    expect(vectors?.tool('nobody_here')).toBeUndefined();
    const hits = catalog.search({
      query: 'phone screen',
      vectors: vectors!,
    }).hits;
    expect(hits.length).toBeGreaterThan(0);
  }, 30_000);

  it('probes the endpoint in the background, never on a search: lexical at once while it answers garbage, one log line', async () => {
    const garbage = await endpointForTest(['--garbage']);
    const cacheFile = freshFile();
    const catalog = ToolCatalog.fromSeed();
    const good = await endpointForTest();
    await ranking(good, { cacheFile }).hybrid.sync(catalog);
    await good.kill();
    movedClock();
    const { hybrid, lines } = ranking(garbage, { cacheFile });
    // Every tool vector is cached: following it asks the endpoint one probe.
    hybrid.follow(catalog);
    await expect
      .poll(() => lines.some((line) => /searches are lexical/.test(line)))
      .toBe(true);
    expect(hybrid.toolsWithVectors).toBe(34);
    expect(await hybrid.vectorsFor(catalog, 'tap')).toBeUndefined();
    expect(await hybrid.vectorsFor(catalog, 'tap')).toBeUndefined();
    // Probes come again after the pause (still garbage: no new line); searches never ask.
    await expect
      .poll(async () => {
        await vi.advanceTimersByTimeAsync(PAUSE_MS);
        return (await garbage.stats()).requests >= 3;
      })
      .toBe(true);
    expect(await hybrid.vectorsFor(catalog, 'tap')).toBeUndefined();
    hybrid.close();
    expect(await garbage.single()).toEqual({
      ping: (await garbage.stats()).requests,
    });
    expect(lines.filter((line) => /searches are lexical/.test(line))).toEqual([
      expect.stringMatching(
        /not a list of finite numbers.*searches are lexical/,
      ),
    ]);
  }, 30_000);

  it('with an endpoint that answers after 20 s: one search waits for its timeout, the next ones ask nothing and answer lexically, and hybrid comes back once a probe is answered', async () => {
    const endpoint = await endpointForTest();
    const catalog = ToolCatalog.fromSeed();
    movedClock();
    const { hybrid, lines } = ranking(endpoint, { queryTimeoutMs: 200 });
    await hybrid.sync(catalog);
    expect(await hybrid.vectorsFor(catalog, 'tap')).toBeDefined();
    await endpoint.setDelay(20_000);
    // Bounded by the test's timeout: the 20 s answer is not waited for.
    expect(await hybrid.vectorsFor(catalog, 'tap')).toBeUndefined();
    expect(lines.join('\n')).toMatch(/searches are lexical/);
    for (const query of ['tap', 'screen', 'phone', 'tap'])
      expect(await hybrid.vectorsFor(catalog, query)).toBeUndefined();
    // The searches after the failure asked nothing (probes ask "ping").
    expect(await endpoint.single()).toMatchObject({ tap: 2 });
    expect((await endpoint.single()).screen).toBeUndefined();
    expect((await endpoint.single()).phone).toBeUndefined();

    await endpoint.setDelay(0);
    await expect
      .poll(async () => {
        await vi.advanceTimersByTimeAsync(PAUSE_MS);
        return lines.some((line) => /answers again/.test(line));
      })
      .toBe(true);
    expect((await endpoint.single()).ping).toBeGreaterThanOrEqual(1);
    const vectors = await hybrid.vectorsFor(catalog, 'phone');
    expect(vectors?.query).toHaveLength(100);
    expect(await endpoint.single()).toMatchObject({ tap: 2, phone: 1 });
  }, 30_000);

  it('waits for a query vector 4x the 95th percentile of recent answers, at least 250 ms, at most the cap', async () => {
    const endpoint = await endpointForTest();
    const catalog = ToolCatalog.fromSeed();
    const { hybrid } = ranking(endpoint, { queryTimeoutMs: 60_000 });
    await hybrid.sync(catalog);
    expect(hybrid.queryWaitMs).toBe(60_000);
    for (let round = 0; round < 8; round += 1)
      expect(await hybrid.vectorsFor(catalog, `tap ${round}`)).toBeDefined();
    // Loopback answers take milliseconds: far below the cap, never below the floor.
    expect(hybrid.queryWaitMs).toBeGreaterThanOrEqual(250);
    expect(hybrid.queryWaitMs).toBeLessThan(60_000);
  }, 30_000);

  it('starts empty from a malformed cache file, says so, and rewrites it', async () => {
    const endpoint = await endpointForTest();
    const cacheFile = freshFile();
    writeFileSync(cacheFile, '{"format":"something else"}');
    const { hybrid, lines } = ranking(endpoint, { cacheFile });
    await hybrid.sync(ToolCatalog.fromSeed());
    expect(lines[0]).toMatch(
      /embeddings cache .*: not a heretek-broker\/embeddings file of version 1; starting empty/,
    );
    expect(await endpoint.stats()).toEqual({ requests: 1, inputs: 34 });
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toMatchObject({
      format: 'heretek-broker/embeddings',
      version: 1,
    });
  }, 30_000);
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  startEmbeddingsEndpoint,
  type EmbeddingsEndpoint,
} from './__fixtures__/embeddings-endpoint.js';
import { startLiveBackend } from './__fixtures__/live-backend.js';
import {
  resultText,
  scratchFolder,
  spawnBroker,
} from './__fixtures__/spawn-broker.js';

const state = mkdtempSync(path.join(tmpdir(), 'heretek-embeddings-e2e-'));
afterAll(() => rmSync(state, { recursive: true, force: true }));
const cacheFile = path.join(state, 'heretek', 'embeddings.json');

/**
 * The brokers' wait for the endpoint, 30 s, not the default 1 s: on a loaded
 * 2-core machine an answer from the loopback endpoint can take longer, and the
 * broker would then rank lexically and never log the probe these tests await.
 * A killed endpoint refuses at once, whatever the wait.
 */
const EMBEDDINGS_TIMEOUT_MS = '30000';

/** An offline broker (the 34 seed tools) with hybrid ranking against `endpoint`. */
const hybridBroker = (endpoint: EmbeddingsEndpoint) =>
  spawnBroker({
    HERETEK_BROKER_OFFLINE: '1',
    XDG_STATE_HOME: state,
    HERETEK_EMBEDDINGS_URL: endpoint.url,
    HERETEK_EMBEDDINGS_MODEL: 'glove-sif',
    HERETEK_EMBEDDINGS_KEY: 'sk-never-logged',
    HERETEK_EMBEDDINGS_TIMEOUT_MS: EMBEDDINGS_TIMEOUT_MS,
  });

const search = async (
  broker: Awaited<ReturnType<typeof spawnBroker>>,
  query: string,
): Promise<string> =>
  resultText(
    await broker.client.callTool({
      name: 'mcp_search_tools',
      arguments: { query },
    }),
  );

const QUERY = 'phone screen tap';

describe('the broker with HERETEK_EMBEDDINGS_URL', () => {
  it('asks the endpoint for tool vectors and each query vector; after the endpoint is killed, the next search answers lexically', async () => {
    const lexicalBroker = await spawnBroker({ HERETEK_BROKER_OFFLINE: '1' });
    const lexical = await search(lexicalBroker, QUERY);
    await lexicalBroker.close();

    const endpoint = await startEmbeddingsEndpoint();
    const broker = await hybridBroker(endpoint);
    try {
      // The 34 seed tools in one batch, then cached.
      await expect
        .poll(async () => (await endpoint.stats()).inputs >= 34)
        .toBe(true);
      await expect.poll(() => existsSync(cacheFile)).toBe(true);
      const asked = await endpoint.stats();
      expect(asked).toEqual({ requests: 1, inputs: 34 });
      const hybrid = await search(broker, QUERY);
      expect(await endpoint.stats()).toEqual({ requests: 2, inputs: 35 });
      expect(hybrid).not.toBe(lexical);

      await endpoint.kill();
      // Bounded by the test's timeout, not timed: the answer comes, and it is the lexical one.
      expect(await search(broker, QUERY)).toBe(lexical);
      expect(await search(broker, QUERY)).toBe(lexical);
      const lines = broker.stderr().split('\n');
      expect(
        lines.filter((line) => /searches are lexical/.test(line)),
      ).toHaveLength(1);
      expect(broker.stderr()).toMatch(
        /embeddings: hybrid ranking with glove-sif at http:\/\/127\.0\.0\.1:\d+\/v1/,
      );
      expect(broker.stderr()).not.toContain('sk-never-logged');
      expect(
        broker.transport.stdoutLines.every((line) => line.startsWith('{')),
      ).toBe(true);
    } finally {
      await broker.close();
      await endpoint.kill();
    }
  }, 60_000);

  it('after a restart, asks only for query vectors: tool vectors come from the cache', async () => {
    expect(existsSync(cacheFile)).toBe(true);
    const cached = JSON.parse(readFileSync(cacheFile, 'utf8')) as {
      models: Record<string, Record<string, string>>;
    };
    expect(Object.keys(cached.models['glove-sif'] ?? {})).toHaveLength(34);
    const endpoint = await startEmbeddingsEndpoint();
    const broker = await hybridBroker(endpoint);
    try {
      await expect
        .poll(() => /34 tool vectors of glove-sif/.test(broker.stderr()))
        .toBe(true);
      // Nothing to embed: one background probe tells that the endpoint answers.
      await expect
        .poll(() =>
          /embeddings: glove-sif answers; hybrid ranking on/.test(
            broker.stderr(),
          ),
        )
        .toBe(true);
      const hybrid = await search(broker, QUERY);
      await search(broker, 'decompile a function');
      expect(await endpoint.stats()).toEqual({ requests: 3, inputs: 3 });
      expect(await endpoint.single()).toEqual({
        ping: 1,
        [QUERY]: 1,
        'decompile a function': 1,
      });
      expect(hybrid).toContain('adb_tap');
    } finally {
      await broker.close();
      await endpoint.kill();
    }
  }, 60_000);

  it('embeds a tool a backend adds at run time as soon as discovery applies its listing, without a search', async () => {
    const backend = await startLiveBackend('live', [
      { name: 'first_tool', description: 'Count the pebbles on a beach' },
    ]);
    const scratch = scratchFolder('broker-embeddings-live-');
    const endpoint = await startEmbeddingsEndpoint();
    const broker = await spawnBroker({
      HERETEK_GATEWAY_URL: backend.url,
      HERETEK_BACKENDS_FILE: scratch.backends(['live']),
      HERETEK_DISCOVERY_TTL_MS: '3600000',
      HERETEK_EMBEDDINGS_URL: endpoint.url,
      HERETEK_EMBEDDINGS_MODEL: 'glove-sif',
      HERETEK_EMBEDDINGS_CACHE_FILE: 'off',
      HERETEK_EMBEDDINGS_TIMEOUT_MS: EMBEDDINGS_TIMEOUT_MS,
    });
    try {
      // The listing at start-up (the seed catalog is not served with a gateway).
      await expect
        .poll(() => /1\/1 tools have one/.test(broker.stderr()))
        .toBe(true);
      await expect.poll(() => backend.streams() > 0).toBe(true);
      const before = await endpoint.stats();
      backend.addTool('late_quokka', 'Count the quokkas on an island');
      // Bounded by the test's timeout; no search runs meanwhile.
      await expect
        .poll(() => /2\/2 tools have one/.test(broker.stderr()))
        .toBe(true);
      expect(await endpoint.stats()).toEqual({
        requests: before.requests + 1,
        inputs: before.inputs + 1,
      });
      expect(await search(broker, 'quokkas island')).toContain(
        'live_late_quokka',
      );
    } finally {
      await broker.close();
      await endpoint.kill();
      await backend.close();
      scratch.remove();
    }
  }, 60_000);
});

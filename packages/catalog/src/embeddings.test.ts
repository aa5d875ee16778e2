import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedUrl,
  startGloveEndpoint,
  type GloveEndpoint,
} from './__fixtures__/glove.js';
import { openAiEmbeddings, toolEmbeddingText } from './embeddings.js';
import { CatalogError } from './errors.js';
import { toolEntryFromMcpTool } from './entries.js';

let endpoint: GloveEndpoint;
beforeAll(async () => {
  endpoint = await startGloveEndpoint();
});
afterAll(() => endpoint.stop());

const dot = (left: Float32Array, right: Float32Array): number =>
  left.reduce((sum, value, index) => sum + value * (right[index] ?? 0), 0);

/** The error an embed call rejects with. */
const failure = async (promise: Promise<unknown>): Promise<CatalogError> => {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(CatalogError.isInstance(error)).toBe(true);
  return error as CatalogError;
};

describe('openAiEmbeddings', () => {
  it('asks once more, on a new connection, when a connection closes before any answer (an idle kept-alive one the endpoint closed)', async () => {
    // Closes the connection of the requests `closing` says, answers the others.
    let requests = 0;
    let closing = (request: number): boolean => request === 1;
    const server = createServer((request, response) => {
      requests += 1;
      if (closing(requests)) {
        request.socket.destroy();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: [{ index: 0, embedding: [3, 4] }] }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const provider = openAiEmbeddings({
        url: `http://127.0.0.1:${port}/v1`,
        model: 'm',
      });
      expect(await provider.embed(['a'])).toEqual([
        Float32Array.from([0.6, 0.8]),
      ]);
      expect(requests).toBe(2);
      // Once more only: a connection that always closes is a failure.
      closing = () => true;
      const error = await failure(provider.embed(['a']));
      expect(error.code).toBe('EMBEDDINGS_FAILED');
      expect(error.message).toMatch(/other side closed/);
      expect(requests).toBe(4);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('asks <url>/embeddings for one unit vector per text, in order, with the key as a bearer token', async () => {
    const provider = openAiEmbeddings({
      url: `${endpoint.url}/`,
      model: 'glove-sif',
      key: 'secret-key',
    });
    const before = endpoint.requests.length;
    const [weather, forecast, spreadsheet] = await provider.embed([
      'weather',
      'forecast',
      'spreadsheet',
    ]);
    await endpoint.logged(before + 1);
    expect(endpoint.requests.slice(before)).toEqual([
      { inputs: 3, authorization: 'Bearer secret-key' },
    ]);
    for (const vector of [weather, forecast, spreadsheet])
      expect(dot(vector!, vector!)).toBeCloseTo(1, 5);
    expect(dot(weather!, forecast!)).toBeGreaterThan(
      dot(weather!, spreadsheet!),
    );
    expect(await provider.embed([])).toEqual([]);
  });

  it('rejects EMBEDDINGS_FAILED when nothing listens, the answer is late, or it is not vectors; never with the key', async () => {
    const down = await failure(
      openAiEmbeddings({
        url: await closedUrl(),
        model: 'm',
        key: 'k-123',
      }).embed(['a']),
    );
    expect(down.code).toBe('EMBEDDINGS_FAILED');
    expect(down.isRetryable).toBe(true);
    expect(down.message).not.toContain('k-123');
    const slow = await startGloveEndpoint(['--delay-ms', '5000']);
    const garbage = await startGloveEndpoint(['--garbage']);
    try {
      const late = await failure(
        openAiEmbeddings({ url: slow.url, model: 'm', timeoutMs: 200 }).embed([
          'a',
        ]),
      );
      expect(late.message).toMatch(/no answer within 200 ms/);
      const bad = await failure(
        openAiEmbeddings({ url: garbage.url, model: 'm' }).embed(['a']),
      );
      expect(bad.message).toMatch(/not a list of finite numbers/);
      const missing = await failure(
        openAiEmbeddings({ url: `${endpoint.url}/nope`, model: 'm' }).embed([
          'a',
        ]),
      );
      expect(missing.message).toMatch(/HTTP 404/);
    } finally {
      await slow.stop();
      await garbage.stop();
    }
  });

  it('refuses a bad URL or an empty model, saying what to fix', () => {
    const refused = (url: string, model = 'm'): string => {
      try {
        openAiEmbeddings({ url, model });
      } catch (error) {
        expect((error as CatalogError).code).toBe('INVALID_ARGUMENT');
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused('localhost:11434')).toMatch(/http or https/);
    expect(refused('not a url')).toMatch(/not a URL/);
    expect(refused('http://u:p@127.0.0.1/v1')).toMatch(/credentials/);
    expect(refused('http://127.0.0.1/v1/embeddings')).toMatch(
      /leave \/embeddings off/,
    );
    expect(refused('http://127.0.0.1/v1', ' ')).toMatch(/model name/);
  });
});

describe('toolEmbeddingText', () => {
  it('writes the name as words, then the description and the parameters', () => {
    const entry = toolEntryFromMcpTool({
      backend: { backend: 'b', target: 'files', profile: 'core' },
      tool: {
        name: 'readFile_fast',
        description: 'Read a file.',
        inputSchema: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'Where.' },
            mode: {},
          },
        },
      },
    });
    expect(toolEmbeddingText(entry)).toBe(
      'read File fast. Read a file.\nParameters: path: Where.; mode',
    );
  });
});

import { CatalogError, invalidArgument } from './errors.js';
import type { ToolEntry } from './types.js';

/**
 * Where vectors for hybrid ranking come from: any embedding model behind one call. The
 * catalog never calls it (its search is synchronous): a caller passes its vectors to `search`.
 */
export type VectorProvider = {
  /** The model's name (what vectors are cached under). */
  readonly model: string;
  /** One unit-length vector per text, in order; rejects with `EMBEDDINGS_FAILED` unless one finite vector per text comes in time. */
  embed(
    texts: readonly string[],
    options?: { signal?: AbortSignal },
  ): Promise<Float32Array[]>;
};

/** Options of {@link openAiEmbeddings}. */
export type OpenAiEmbeddingsOptions = {
  /** OpenAI-compatible base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`); `/embeddings` is appended. */
  url: string;
  /** Model name sent with each request. */
  model: string;
  /** Sent as `Authorization: Bearer <key>` when given; never part of an error message. */
  key?: string;
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number;
};

const failed = (message: string, cause?: unknown): CatalogError =>
  new CatalogError({
    code: 'EMBEDDINGS_FAILED',
    message,
    isRetryable: true,
    ...(cause === undefined ? {} : { cause }),
  });

/** Checks an embeddings base URL (http(s), no credentials, no query) and returns it without a trailing slash. */
export function checkEmbeddingsUrl(url: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument(
      `${where}: ${JSON.stringify(url)} is not a URL; give the endpoint's base URL, e.g. http://127.0.0.1:11434/v1 (/embeddings is appended).`,
    );
  }
  const problem =
    parsed.protocol !== 'http:' && parsed.protocol !== 'https:'
      ? `must be http or https, got ${parsed.protocol}`
      : parsed.username !== '' || parsed.password !== ''
        ? 'must not carry credentials (give the key separately)'
        : parsed.search !== '' || parsed.hash !== ''
          ? 'must not have a query or fragment'
          : /\/embeddings\/?$/.test(parsed.pathname)
            ? 'is the base URL: leave /embeddings off (it is appended)'
            : undefined;
  if (problem !== undefined) throw invalidArgument(`${where}: ${problem}.`);
  return url.replace(/\/+$/, '');
}

/** Unit length (a zero vector stays zero). */
function normalized(values: readonly unknown[]): Float32Array | undefined {
  const vector = new Float32Array(values.length);
  let norm = 0;
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
    vector[index] = value;
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  if (norm > 0)
    for (let index = 0; index < vector.length; index += 1)
      vector[index] = (vector[index] as number) / norm;
  return vector;
}

/** The vectors of an `/embeddings` answer, in input order, or what is wrong with it. */
function vectorsOf(body: unknown, count: number): Float32Array[] | string {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return 'the answer has no "data" list';
  if (data.length !== count)
    return `the answer has ${data.length} vectors for ${count} inputs`;
  const vectors: (Float32Array | undefined)[] = new Array(count);
  for (const [position, item] of data.entries()) {
    const index = (item as { index?: unknown } | null)?.index ?? position;
    const embedding = (item as { embedding?: unknown } | null)?.embedding;
    if (
      typeof index !== 'number' ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= count ||
      vectors[index] !== undefined
    )
      return `item ${position} has a bad or repeated "index"`;
    const vector = Array.isArray(embedding) ? normalized(embedding) : undefined;
    if (vector === undefined || vector.length === 0)
      return `item ${position} is not a list of finite numbers (an "encoding_format" other than float is not read)`;
    vectors[index] = vector;
  }
  const dimensions = vectors[0]?.length;
  if (vectors.some((vector) => vector?.length !== dimensions))
    return 'the vectors differ in dimension';
  return vectors as Float32Array[];
}

/** Whether a fetch failed because the connection closed before any answer came. */
function closedBeforeAnswer(error: unknown): boolean {
  const code = ((error as Error | undefined)?.cause as { code?: unknown })
    ?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/**
 * A {@link VectorProvider} over an OpenAI-compatible `POST <url>/embeddings` (OpenAI,
 * Ollama, LM Studio, vLLM, llama.cpp server, text-embeddings-inference). Vectors come back
 * unit length.
 *
 * @throws CatalogError `INVALID_ARGUMENT` for a bad URL or an empty model name.
 */
export function openAiEmbeddings(
  options: OpenAiEmbeddingsOptions,
): VectorProvider {
  const base = checkEmbeddingsUrl(options.url, 'embeddings url');
  const { model, key } = options;
  if (typeof model !== 'string' || model.trim() === '')
    throw invalidArgument(
      'embeddings model: give the model name, e.g. nomic-embed-text.',
    );
  const timeoutMs = options.timeoutMs ?? 30_000;
  const endpoint = `${base}/embeddings`;
  return {
    model,
    async embed(texts, call = {}) {
      if (texts.length === 0) return [];
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal =
        call.signal === undefined
          ? timeout
          : AbortSignal.any([timeout, call.signal]);
      let response: Response;
      let body: unknown;
      try {
        const request = (): Promise<Response> =>
          fetch(endpoint, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
            },
            body: JSON.stringify({ model, input: texts }),
            signal,
          });
        // A kept-alive connection the endpoint closed while idle (its close not yet
        // seen here, e.g. while a long computation held the event loop) is not an
        // answer: asked once more, on a new connection.
        response = await request().catch((error: unknown) => {
          if (signal.aborted || !closedBeforeAnswer(error)) throw error;
          return request();
        });
        const text = await response.text();
        if (!response.ok)
          throw failed(
            `${endpoint} answered HTTP ${response.status}: ${text.slice(0, 200)}`,
          );
        body = JSON.parse(text);
      } catch (error) {
        if (CatalogError.isInstance(error)) throw error;
        const reason = timeout.aborted
          ? `no answer within ${timeoutMs} ms`
          : ((error as Error).cause as Error | undefined)?.message ||
            (error as Error).message;
        throw failed(`${endpoint}: ${reason}`, error);
      }
      const vectors = vectorsOf(body, texts.length);
      if (typeof vectors === 'string')
        throw failed(`${endpoint} (model ${model}): ${vectors}`);
      return vectors;
    },
  };
}

/** Characters of a tool's text sent to an embedding model at most. */
const TOOL_TEXT_CHARS = 2000;

/** The text a tool is embedded from: its name as words, description, and parameters' names and descriptions. */
export function toolEmbeddingText(entry: ToolEntry): string {
  const name = entry.tool
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ');
  const properties = (entry.inputSchema as { properties?: unknown }).properties;
  const parameters =
    typeof properties === 'object' && properties !== null
      ? Object.entries(properties as Record<string, unknown>).map(
          ([key, schema]) => {
            const description = (schema as { description?: unknown } | null)
              ?.description;
            return typeof description === 'string'
              ? `${key}: ${description}`
              : key;
          },
        )
      : [];
  const text = [
    `${name}. ${entry.description}`,
    ...(parameters.length > 0 ? [`Parameters: ${parameters.join('; ')}`] : []),
  ].join('\n');
  return text.length > TOOL_TEXT_CHARS ? text.slice(0, TOOL_TEXT_CHARS) : text;
}

import {
  toolEmbeddingText,
  type Fusion,
  type SearchVectors,
  type ToolCatalog,
  type ToolEntry,
  type VectorProvider,
} from '@heretek/catalog';
import { sha256Hex } from '@heretek/internal';
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleAll,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { errorText } from '../error-text.js';
import { VectorCache } from './vector-cache.js';

/** Tool texts per request to the endpoint. */
export const TOOL_BATCH = 64;

/** Options of {@link HybridRanking}. */
export type HybridRankingOptions = {
  provider: VectorProvider;
  /** The vector cache file (`HERETEK_EMBEDDINGS_CACHE_FILE`), or `off`. */
  cacheFile: string;
  /** How long a search waits for its query vector before it answers lexically. Default 1500 ms. */
  queryTimeoutMs?: number;
  /** After a failure, how long the endpoint is left alone before one request tries it again. Default 30000 ms. */
  retryAfterMs?: number;
  /** The fusion knobs (the catalog's defaults for those unset). */
  fusion?: Partial<Fusion>;
  log?: (line: string) => void;
};

/**
 * The broker's side of hybrid ranking: tool vectors from the user's embedding
 * endpoint, computed in batches whenever the catalog changed (see
 * {@link HybridRanking.follow}) and cached on
 * disk by model and definition hash (a restart asks only for new or changed
 * tools), and one query vector per search with a short timeout.
 *
 * Nothing here fails or holds back a search. A search gets no vectors (and so
 * the lexical answer) while tool vectors are not there yet, while a query
 * vector is late, and for `retryAfterMs` after the endpoint failed (a
 * cockatiel circuit breaker, opened by one failure); the log says so once
 * per outage, and again when the endpoint answers.
 */
export class HybridRanking {
  readonly #provider: VectorProvider;
  readonly #cache: VectorCache;
  readonly #queryTimeoutMs: number;
  readonly #fusion: Partial<Fusion>;
  readonly #log: (line: string) => void;
  readonly #breaker: CircuitBreakerPolicy;
  /** Vectors by definition hash (of this model). */
  readonly #vectors = new Map<string, Float32Array>();
  /** Definition hash of each catalogued tool, as of the last sync. */
  #hashes = new Map<string, string>();
  /** The lookup the catalog searches with; replaced whenever vectors change. */
  #lookup: SearchVectors['tool'] = () => undefined;
  /** Definition hash of each entry object hashed so far (entries are immutable). */
  readonly #entryHashes = new WeakMap<ToolEntry, string>();
  #syncedList: readonly ToolEntry[] | undefined;
  #syncing: Promise<void> | undefined;
  #loaded: Promise<void> | undefined;
  #down = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: HybridRankingOptions) {
    this.#provider = options.provider;
    this.#log = options.log ?? (() => {});
    this.#queryTimeoutMs = options.queryTimeoutMs ?? 1500;
    this.#fusion = options.fusion ?? {};
    this.#cache = new VectorCache({
      file: options.cacheFile,
      model: options.provider.model,
      log: this.#log,
    });
    this.#breaker = circuitBreaker(handleAll, {
      halfOpenAfter: options.retryAfterMs ?? 30_000,
      breaker: new ConsecutiveBreaker(1),
    });
  }

  /** The embedding model. */
  get model(): string {
    return this.#provider.model;
  }

  /** How many catalogued tools have a vector. */
  get toolsWithVectors(): number {
    let count = 0;
    for (const hash of this.#hashes.values())
      if (this.#vectors.has(hash)) count += 1;
    return count;
  }

  /**
   * Brings tool vectors in step with the catalog: reads the cache once, then
   * asks the endpoint for the tools without a vector, in batches. Runs one at
   * a time; never rejects (a failure is logged and the next call retries).
   */
  sync(catalog: ToolCatalog): Promise<void> {
    if (this.#syncing !== undefined) return this.#syncing;
    const run = this.#sync(catalog).finally(() => {
      this.#syncing = undefined;
    });
    this.#syncing = run;
    return run;
  }

  async #sync(catalog: ToolCatalog): Promise<void> {
    this.#loaded ??= this.#cache.load(this.#vectors);
    await this.#loaded;
    for (;;) {
      const list = catalog.list();
      if (list === this.#syncedList || this.#resting) return;
      const hashes = new Map<string, string>();
      const missing = new Map<string, string>();
      for (const entry of list) {
        let hash = this.#entryHashes.get(entry);
        if (hash === undefined) {
          hash = sha256Hex(toolEmbeddingText(entry));
          this.#entryHashes.set(entry, hash);
        }
        hashes.set(entry.name, hash);
        if (!this.#vectors.has(hash))
          missing.set(hash, toolEmbeddingText(entry));
      }
      this.#hashes = hashes;
      this.#refreshLookup();
      const pending = [...missing];
      for (let start = 0; start < pending.length; start += TOOL_BATCH) {
        const batch = pending.slice(start, start + TOOL_BATCH);
        const vectors = await this.#ask(() =>
          this.#provider.embed(batch.map(([, text]) => text)),
        );
        if (vectors === undefined) return;
        batch.forEach(([hash], index) =>
          this.#vectors.set(hash, vectors[index] as Float32Array),
        );
        this.#refreshLookup();
      }
      this.#syncedList = list;
      if (pending.length > 0) {
        this.#log(
          `embeddings: ${pending.length} tool vectors from ${this.model}, ${this.toolsWithVectors}/${hashes.size} tools have one`,
        );
        await this.#cache.save(this.#vectors, new Set(hashes.values()));
      }
    }
  }

  /**
   * Follows the catalog: syncs now, then whenever the catalog changed
   * (checked every `intervalMs`, default 1000), so tool vectors are asked
   * for soon after each discovery. {@link HybridRanking.close} stops it.
   */
  follow(catalog: ToolCatalog, intervalMs = 1000): void {
    this.close();
    void this.sync(catalog);
    this.#timer = setInterval(() => {
      if (catalog.list() !== this.#syncedList) void this.sync(catalog);
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops following the catalog. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The vectors of one search, or `undefined` (a lexical search): when no
   * tool has a vector yet, while the endpoint is left alone after a failure,
   * or when the query vector fails or is late. Starts a background sync when
   * the catalog changed since the last one.
   */
  async vectorsFor(
    catalog: ToolCatalog,
    query: string,
  ): Promise<SearchVectors | undefined> {
    if (catalog.list() !== this.#syncedList) void this.sync(catalog);
    if (this.toolsWithVectors === 0 || query.trim() === '') return undefined;
    const tool = this.#lookup;
    const vectors = await this.#ask(() =>
      this.#provider.embed([query], {
        signal: AbortSignal.timeout(this.#queryTimeoutMs),
      }),
    );
    const vector = vectors?.[0];
    return vector === undefined
      ? undefined
      : { query: vector, tool, fusion: this.#fusion };
  }

  /** Whether one request is trying the endpoint again (cockatiel would queue others behind it). */
  get #resting(): boolean {
    return this.#breaker.state === CircuitState.HalfOpen;
  }

  /**
   * One request through the breaker: its answer, or `undefined` (logged once
   * per outage). While the circuit is open (cockatiel refuses at once), or
   * one request is trying the endpoint again, others get `undefined` at once.
   */
  async #ask(
    request: () => Promise<Float32Array[]>,
  ): Promise<Float32Array[] | undefined> {
    if (this.#resting) return undefined;
    try {
      const answer = await this.#breaker.execute(request);
      if (this.#down) {
        this.#down = false;
        this.#log(`embeddings: ${this.model} answers again; hybrid ranking on`);
      }
      return answer;
    } catch (error) {
      if (!(error instanceof BrokenCircuitError) && !this.#down) {
        this.#down = true;
        this.#log(
          `embeddings: ${errorText(error)}; searches are lexical, the endpoint is tried again in the background`,
        );
      }
      return undefined;
    }
  }

  #refreshLookup(): void {
    const hashes = this.#hashes;
    const vectors = this.#vectors;
    // A new function: the catalog keeps one matrix per lookup and catalog state.
    this.#lookup = (name) => {
      const hash = hashes.get(name);
      return hash === undefined ? undefined : vectors.get(hash);
    };
  }
}

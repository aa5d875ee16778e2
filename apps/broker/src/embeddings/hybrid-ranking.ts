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
const TOOL_BATCH = 64;

/** After a failure, how long until a background probe tries the endpoint again. */
const RETRY_AFTER_MS = 10_000;
/** The text of a background probe (one short input). */
const PROBE_TEXT = 'ping';
/** Query answers whose latency the query wait is derived from (the latest). */
const LATENCY_WINDOW = 32;
/** Answers needed before the wait is derived from them (before: the cap). */
const LATENCY_SAMPLES = 8;
/** The derived wait: this many times the 95th percentile of recent answers... */
const LATENCY_FACTOR = 4;
/** ...and never less than this (a pause of the broker's own event loop is not the endpoint's). */
const MIN_QUERY_WAIT_MS = 250;

/**
 * The broker's side of hybrid ranking: tool vectors from the user's embedding endpoint,
 * computed in batches whenever the catalog changed and cached on disk by model and
 * definition hash, and one query vector per search with a short timeout. A search gets the
 * lexical answer at once while tool vectors are missing, before the endpoint's first answer,
 * and from a failure until a background probe (never a search) is answered.
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
  /** Latencies of the latest answers to queries and probes, in milliseconds. */
  readonly #latencies: number[] = [];
  #toolsWithVectors = 0;
  #syncedList: readonly ToolEntry[] | undefined;
  #syncing: Promise<void> | undefined;
  #loaded: Promise<void> | undefined;
  /** The catalog followed, if any (synced again after a probe is answered). */
  #catalog: ToolCatalog | undefined;
  /** `up`: the endpoint answered since the start or the last failure; `down`: it failed since. */
  #endpoint: 'new' | 'up' | 'down' = 'new';
  #probing: Promise<void> | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: {
    provider: VectorProvider;
    /** The vector cache file (`HERETEK_EMBEDDINGS_CACHE_FILE`), or `off`. */
    cacheFile: string;
    /** The longest a search waits for its query vector (`HERETEK_EMBEDDINGS_TIMEOUT_MS`, see {@link HybridRanking.queryWaitMs}) and a probe's timeout. Default 1000 ms. */
    queryTimeoutMs?: number;
    /** The fusion knobs (the catalog's defaults for those unset). */
    fusion?: Partial<Fusion>;
    log?: (line: string) => void;
  }) {
    this.#provider = options.provider;
    this.#log = options.log ?? (() => {});
    this.#queryTimeoutMs = options.queryTimeoutMs ?? 1000;
    this.#fusion = options.fusion ?? {};
    this.#cache = new VectorCache({
      file: options.cacheFile,
      model: options.provider.model,
      log: this.#log,
    });
    this.#breaker = circuitBreaker(handleAll, {
      halfOpenAfter: RETRY_AFTER_MS,
      breaker: new ConsecutiveBreaker(1),
    });
    this.#breaker.onBreak(() => this.#scheduleProbe(RETRY_AFTER_MS));
  }

  /** How many catalogued tools have a vector. */
  get toolsWithVectors(): number {
    return this.#toolsWithVectors;
  }

  /** Brings tool vectors in step with the catalog (the cache once, then the endpoint); one run at a time, never rejects. */
  sync(catalog: ToolCatalog): Promise<void> {
    this.#syncing ??= this.#sync(catalog).finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async #sync(catalog: ToolCatalog): Promise<void> {
    this.#loaded ??= this.#cache.load(this.#vectors);
    await this.#loaded;
    for (;;) {
      const list = catalog.list();
      if (
        list === this.#syncedList ||
        this.#breaker.state !== CircuitState.Closed
      )
        return;
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
          `embeddings: ${pending.length} tool vectors from ${this.#provider.model}, ${this.toolsWithVectors}/${hashes.size} tools have one`,
        );
        await this.#cache.save(this.#vectors, new Set(hashes.values()));
      }
    }
  }

  /**
   * Follows the catalog: syncs now (and probes the endpoint when no tool needed a vector, so
   * a search never waits to learn that it is down), then at each `catalogChanged`.
   */
  follow(catalog: ToolCatalog): void {
    this.#catalog = catalog;
    this.#closed = false;
    void this.sync(catalog).then(() => {
      if (
        this.#endpoint !== 'up' &&
        this.#breaker.state === CircuitState.Closed
      )
        void this.#probe();
    });
  }

  /** The followed catalog changed: new or changed tools are embedded in the background. */
  catalogChanged(): void {
    const catalog = this.#catalog;
    if (catalog !== undefined && !this.#closed) void this.sync(catalog);
  }

  /** Stops following the catalog and probing the endpoint. */
  close(): void {
    this.#closed = true;
    this.#catalog = undefined;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
  }

  /** The vectors of one search, or `undefined` for a lexical one (see the class); syncs in the background when the catalog changed. */
  async vectorsFor(
    catalog: ToolCatalog,
    query: string,
  ): Promise<SearchVectors | undefined> {
    if (catalog.list() !== this.#syncedList) void this.sync(catalog);
    if (this.toolsWithVectors === 0 || query.trim() === '') return undefined;
    if (this.#endpoint !== 'up') {
      if (this.#breaker.state === CircuitState.Closed) void this.#probe();
      return undefined;
    }
    const tool = this.#lookup;
    const started = performance.now();
    const vectors = await this.#ask(() =>
      this.#provider.embed([query], {
        signal: AbortSignal.timeout(this.queryWaitMs),
      }),
    );
    const vector = vectors?.[0];
    if (vector === undefined) return undefined;
    this.#observe(performance.now() - started);
    return { query: vector, tool, fusion: this.#fusion };
  }

  /** How long a search waits for its query vector: `queryTimeoutMs`, then 4x the recent 95th percentile latency (250 ms up to that cap). */
  get queryWaitMs(): number {
    const cap = this.#queryTimeoutMs;
    if (this.#latencies.length < LATENCY_SAMPLES) return cap;
    const sorted = [...this.#latencies].sort((left, right) => left - right);
    const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1] as number;
    return Math.min(
      cap,
      Math.max(MIN_QUERY_WAIT_MS, Math.ceil(LATENCY_FACTOR * p95)),
    );
  }

  #observe(latencyMs: number): void {
    this.#latencies.push(latencyMs);
    if (this.#latencies.length > LATENCY_WINDOW) this.#latencies.shift();
  }

  /** One request through the breaker: its answer, or `undefined` (at once while the circuit is open). */
  async #ask(
    request: () => Promise<Float32Array[]>,
  ): Promise<Float32Array[] | undefined> {
    if (this.#breaker.state !== CircuitState.Closed) return undefined;
    try {
      const answer = await this.#breaker.execute(request);
      this.#answeredNow();
      return answer;
    } catch (error) {
      if (!(error instanceof BrokenCircuitError)) this.#failed(error);
      return undefined;
    }
  }

  /** Logs the first answer, and the first after an outage. */
  #answeredNow(): void {
    if (this.#endpoint !== 'up')
      this.#log(
        `embeddings: ${this.#provider.model} answers${this.#endpoint === 'down' ? ' again' : ''}; hybrid ranking on`,
      );
    this.#endpoint = 'up';
  }

  #failed(error: unknown): void {
    if (this.#endpoint === 'down') return;
    this.#endpoint = 'down';
    this.#log(
      `embeddings: ${errorText(error)}; searches are lexical, the endpoint is tried again in the background`,
    );
  }

  /** A probe in `delayMs`, unless one is due or running, or it is closed. */
  #scheduleProbe(delayMs: number): void {
    if (this.#closed || this.#probeTimer !== undefined) return;
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      void this.#probe();
    }, delayMs);
    this.#probeTimer.unref();
  }

  /** Asks for one short vector in the background; answered, the followed catalog is synced, failed, the next probe is scheduled. */
  #probe(): Promise<void> {
    this.#probing ??= this.#runProbe().finally(() => {
      this.#probing = undefined;
    });
    return this.#probing;
  }

  async #runProbe(): Promise<void> {
    if (this.#closed) return;
    const started = performance.now();
    try {
      await this.#breaker.execute(() =>
        this.#provider.embed([PROBE_TEXT], {
          signal: AbortSignal.timeout(this.#queryTimeoutMs),
        }),
      );
    } catch (error) {
      // Open and not yet due (a clock step): try again a little later.
      if (error instanceof BrokenCircuitError)
        this.#scheduleProbe(RETRY_AFTER_MS / 10);
      else this.#failed(error);
      return;
    }
    this.#observe(performance.now() - started);
    this.#answeredNow();
    if (this.#catalog !== undefined) void this.sync(this.#catalog);
  }

  #refreshLookup(): void {
    const hashes = this.#hashes;
    const vectors = this.#vectors;
    let count = 0;
    for (const hash of hashes.values()) if (vectors.has(hash)) count += 1;
    this.#toolsWithVectors = count;
    // A new function: the catalog keeps one matrix per lookup and catalog state.
    this.#lookup = (name) => {
      const hash = hashes.get(name);
      return hash === undefined ? undefined : vectors.get(hash);
    };
  }
}

import { once, setMaxListeners } from 'node:events';
import {
  toolEntryFromMcpTool,
  type Backend,
  type ToolCatalog,
  type ToolEntry,
} from '@heretek/catalog';
import { errorText } from './error-text.js';
import { EventStream } from './event-stream.js';
import {
  listingHash,
  type CachedListing,
  type IndexCache,
  type Reviewed,
} from './index-cache.js';
import type { ListingReview } from './listing-review.js';
import type {
  DiscoveryOutcome,
  GatewayMode,
  GatewayTool,
  ToolGateway,
} from './types.js';

/** Backends the start-up discovery has not listed yet, of how many: the answer comes from the others. */
export type DiscoveryProgress = { pending: number; total: number };

type DiscoveryOptions = {
  gateway: ToolGateway;
  gatewayMode: GatewayMode;
  catalog: ToolCatalog;
  /** Backends by target, configured ones first; discovery adds the targets a multiplexed listing reveals. */
  backends: Map<string, Backend>;
  /** Full re-discovery on the next operation once the catalog is older than this. */
  ttlMs: number;
  /** The trust layer's review of each listing and of the cached parts served at start: the catalog sees only what it lets through (without it, everything). */
  review?: ListingReview;
  /** Loaded at start, so a restart serves every backend's last listing at once; written after listings change. */
  cache?: IndexCache;
  log: (line: string) => void;
};

/** What discovery reports: it changed the catalog (listings applied, or cached parts served). */
export type DiscoveryEvent = { type: 'catalog-changed' };

/** The longest the first operation waits for start-up discovery (1 s). */
export const INITIAL_DISCOVERY_WAIT_MS = 1_000;

/** Backends listed at once: enough to keep a loopback gateway busy, few enough that listings arriving together never hold the event loop or much memory. */
const MAX_LISTINGS = 32;

/** A listing that has not arrived after this long stops counting against {@link MAX_LISTINGS}. */
const SLOW_LISTING_MS = 2_000;

/** After a discovery in which a backend failed, retry once the catalog is this old (capped by the TTL). */
const FAILED_RETRY_MS = 30_000;

/** Quiet time after a backend's `tools/list_changed` before that backend is listed again. */
const LIST_CHANGED_DEBOUNCE_MS = 250;

/** Discovery's work on arriving listings between two yields to other work. */
const LISTING_WORK_SLICE_MS = 10;

/** The index cache is written after the catalog has been quiet this long... */
const CACHE_QUIET_MS = 1_000;

/** ...or this long while a full discovery runs. */
const DISCOVERY_CACHE_QUIET_MS = 5_000;

/** When the index cache served every backend, rediscovery waits this long: the requests a restart's clients send at once come first. */
const REDISCOVERY_AFTER_CACHE_MS = 1_000;

type PendingListing = {
  entries: ToolEntry[];
  sequence: number;
  key: CachedListing | undefined;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
};

/** The multiplexed listing's key for debouncing: one listing serves every target. */
const ALL_TARGETS = '\0all';

/**
 * Keeps the catalog in step with the gateway: one parallel discovery at
 * start-up, a full re-discovery in the background once the catalog is older
 * than the TTL (sooner after a failure), and a debounced re-listing of one
 * backend when it says its tools changed. A failed listing keeps what the
 * catalog had; one that started before a newer one of the same backend was
 * applied is dropped, so a slow full run never undoes a fresher targeted one.
 */
export class DiscoveryScheduler {
  readonly #abort = new AbortController();
  readonly #debounce = new Map<string, NodeJS.Timeout>();
  readonly #targeted = new Map<string, Promise<DiscoveryOutcome[]>>();
  /** Listing sequence numbers: the last one started and the last one applied, per target. */
  #sequence = 0;
  readonly #applied = new Map<string, number>();
  #discoveredAt: number | undefined;
  #discovery: Promise<DiscoveryOutcome[]> | undefined;
  #initial: Promise<unknown> | undefined;
  #initialWaitDone = false;
  #lastFailed = false;
  /** Backends whose listing failed during the start-up discovery (they count as settled). */
  readonly #initialFailed = new Set<string>();
  /** Reviewed listings that arrived while a build ran: the next build applies them together. */
  readonly #pending = new Map<string, PendingListing>();
  #building: Promise<void> | undefined;
  /** The listing hash (and tool definition hashes) behind each target's catalog entries: what the index cache keeps. */
  readonly #hashes = new Map<string, CachedListing>();
  /** The index cache's write waiting for the catalog to be quiet, if any. */
  #cacheTimer: NodeJS.Timeout | undefined;
  /** When discovery's listing work last yielded (see {@link #paced}). */
  #sliceStarted = 0;
  /** Settles once the index cache's parts are in the catalog (or refused): no write may drop them before. */
  #cacheApplied: Promise<unknown> = Promise.resolve();
  /** The listing hash of each target served from the index cache until a live listing replaces it: the same listing again needs no review. */
  readonly #servedFromCache = new Map<string, string>();
  readonly #events = new EventStream<DiscoveryEvent>();
  readonly #unsubscribe: (() => void) | undefined;

  /** Gives every later {@link DiscoveryEvent} to `listener`; returns the unsubscribe. */
  readonly subscribe = this.#events.subscribe;

  constructor(private readonly options: DiscoveryOptions) {
    // Every listing in flight listens on this one signal (12 backends and more).
    setMaxListeners(0, this.#abort.signal);
    this.#unsubscribe = options.gateway.subscribe?.((event) => {
      if (event.type === 'tools-list-changed')
        this.#toolsListChanged(event.target);
    });
  }

  /**
   * Starts the start-up discovery in the background, once. An index cache's
   * parts are imported first (one build, nothing else competing for the event
   * loop); the first operation then waits for the import, not for discovery.
   */
  start(): void {
    if (this.#initial !== undefined || this.#abort.signal.aborted) return;
    const cache = this.options.cache;
    if (cache === undefined) {
      this.#initial = this.discover();
    } else {
      const served = this.#applyCache(cache, ++this.#sequence);
      this.#cacheApplied = served.catch(() => {});
      const discovery = served.then(async (any) => {
        const all = [...this.options.backends.values()];
        if (!any) return this.discover();
        // The backends the cache did not serve are listed first, on their
        // own; then the first requests after the restart get the event loop
        // to themselves for a moment before the served ones are listed again.
        const [unserved, rest] = partition(
          all,
          ({ target }) => !this.#applied.has(target),
        );
        const first =
          this.options.gatewayMode === 'multiplexed'
            ? []
            : await this.#discoverEach(unserved);
        await waitAtMost(
          once(this.#abort.signal, 'abort'), // closed: checked below
          REDISCOVERY_AFTER_CACHE_MS,
        );
        if (this.#abort.signal.aborted) return [];
        return first.length === 0 ? this.discover() : this.#run(rest, first);
      });
      discovery.catch(() => {});
      this.#initial = served.then((any) => (any ? undefined : discovery));
    }
    this.#initial.catch(() => {});
  }

  /** Imports the cached parts in one build (a live listing that came first wins); resolves whether any was served. The catalog refuses all or none. */
  async #applyCache(cache: IndexCache, sequence: number): Promise<boolean> {
    const started = performance.now();
    const loaded = await cache.load(this.options.backends);
    if (loaded === undefined || this.#abort.signal.aborted) return false;
    const { listings } = loaded;
    // Decided while the saved catalog is decoded (the pins file may still be read then).
    const admission = this.options.review?.admitCached(listings);
    const live = (target: string) =>
      (this.#applied.get(target) ?? 0) > sequence || this.#pending.has(target);
    let restored: string[];
    try {
      ({ restored } = await this.options.catalog.restoreCatalogAsync(
        loaded.catalog,
        {
          keep: (target) => listings.has(target) && !live(target),
          admit: admission?.then(
            ({ admitted }) =>
              (target: string) =>
                admitted.has(target) &&
                !live(target) &&
                !this.#abort.signal.aborted,
          ),
        },
      ));
    } catch (error) {
      if (this.#abort.signal.aborted) return false;
      // A pins file that cannot be read is not the cache's fault: it fails the caller.
      await admission;
      cache.ignored(errorText(error));
      return false;
    }
    const decided = await admission;
    if (decided !== undefined && decided.admitted.size < listings.size)
      this.options.log(
        `index cache: ${listings.size - decided.admitted.size} backends not served from the cache: their tools do not all match their pins; they are searchable once listed again`,
      );
    if (restored.length === 0) return false;
    for (const target of restored) {
      const listing = listings.get(target)!;
      this.#applied.set(target, sequence);
      this.#hashes.set(target, listing);
      decided?.served(target);
      this.#servedFromCache.set(target, listing.hash);
    }
    this.#events.emit({ type: 'catalog-changed' });
    this.options.log(
      `index cache: ${restored.length} backends served from ${cache.file} in ${elapsed(started)} ms, catalog has ${this.options.catalog.size} tools; rediscovery replaces what changed`,
    );
    return true;
  }

  /** Settles once the index cache's parts are in the catalog, refused, or absent. */
  cacheApplied(): Promise<void> {
    return this.#cacheApplied.then(() => {});
  }

  /** Lists every backend (in parallel, or in one multiplexed listing). Concurrent calls share one run. */
  discover(): Promise<DiscoveryOutcome[]> {
    return this.#run([...this.options.backends.values()]);
  }

  /** Lists `backends` (every backend in multiplexed mode), counting `before` (listed just before) in its summary; a run in flight is shared. */
  #run(
    backends: readonly Backend[],
    before: readonly DiscoveryOutcome[] = [],
  ): Promise<DiscoveryOutcome[]> {
    if (this.#discovery !== undefined) return this.#discovery;
    const run = (async () => {
      let outcomes: DiscoveryOutcome[];
      try {
        outcomes = [
          ...before,
          ...(this.options.gatewayMode === 'multiplexed' &&
          this.options.gateway.listAllTools !== undefined
            ? await this.#discoverMultiplexed()
            : await this.#discoverEach(backends)),
        ];
      } finally {
        this.#discoveredAt = Date.now();
      }
      const failed = outcomes.filter((outcome) => !outcome.ok);
      this.#lastFailed = failed.length > 0;
      this.options.log(
        `discovery: ${outcomes.length - failed.length}/${outcomes.length} backends listed, catalog has ${this.options.catalog.size} tools`,
      );
      return outcomes;
    })().finally(() => {
      this.#discovery = undefined;
      // A write waiting for the discovery's quiet is made soon after it ends.
      if (this.#cacheTimer !== undefined) this.#cacheChanged();
    });
    this.#discovery = run;
    return run;
  }

  /**
   * A backend said its tool list changed: list it alone once no further
   * notice came for {@link LIST_CHANGED_DEBOUNCE_MS} (in multiplexed mode, or
   * for an unknown target, the whole gateway listing is run again).
   */
  #toolsListChanged(target: string): void {
    if (this.#abort.signal.aborted) return;
    const key =
      this.options.gatewayMode === 'multiplexed' ||
      !this.options.backends.has(target)
        ? ALL_TARGETS
        : target;
    clearTimeout(this.#debounce.get(key));
    const timer = setTimeout(() => {
      this.#debounce.delete(key);
      this.options.log(
        `discovery: ${key === ALL_TARGETS ? 'the gateway' : `backend "${key}"`} says its tools changed; listing again`,
      );
      this.rediscover(key === ALL_TARGETS ? undefined : key).catch(() => {});
    }, LIST_CHANGED_DEBOUNCE_MS);
    timer.unref();
    this.#debounce.set(key, timer);
  }

  /** Lists one backend again now (every backend when `target` is undefined); shares a run already in flight for it. */
  rediscover(target: string | undefined): Promise<DiscoveryOutcome[]> {
    const backend =
      target === undefined ? undefined : this.options.backends.get(target);
    if (backend === undefined || this.options.gatewayMode === 'multiplexed')
      return this.discover();
    const running = this.#targeted.get(backend.target);
    if (running !== undefined) return running;
    const run = this.#discoverBackend(backend)
      .then((outcome) => {
        this.options.log(
          outcome.ok
            ? `discovery: ${backend.target} listed again, ${outcome.tools} tools`
            : `discovery: ${backend.target} listed again and failed: ${outcome.error}`,
        );
        return [outcome];
      })
      .finally(() => this.#targeted.delete(backend.target));
    this.#targeted.set(backend.target, run);
    return run;
  }

  /** The first operation waits (bounded) for the start-up discovery, so a fresh broker does not answer from the seed alone; no later one waits. */
  async awaitInitial(): Promise<void> {
    const initial = this.#initial;
    if (
      initial === undefined ||
      this.#discoveredAt !== undefined ||
      this.#initialWaitDone
    )
      return;
    this.#initialWaitDone = true;
    await waitAtMost(initial, INITIAL_DISCOVERY_WAIT_MS);
  }

  /** While the start-up discovery runs, the backends with neither a listing in the catalog nor a failed one, of how many (`undefined` once all are). */
  unlisted(): DiscoveryProgress | undefined {
    if (this.#discoveredAt !== undefined || this.#initial === undefined)
      return undefined;
    let pending = 0;
    for (const target of this.options.backends.keys()) {
      if (!this.#applied.has(target) && !this.#initialFailed.has(target))
        pending += 1;
    }
    return pending === 0
      ? undefined
      : { pending, total: this.options.backends.size };
  }

  /**
   * Starts a background re-discovery once the catalog is older than the TTL,
   * or than {@link FAILED_RETRY_MS} after a failure (a broker started before
   * its gateway should not serve the seed for a whole TTL). Never waits.
   */
  refreshIfStale(): void {
    if (
      this.#discoveredAt === undefined ||
      this.#discovery !== undefined ||
      this.#abort.signal.aborted
    )
      return;
    const maxAge = this.#lastFailed
      ? Math.min(this.options.ttlMs, FAILED_RETRY_MS)
      : this.options.ttlMs;
    if (Date.now() - this.#discoveredAt < maxAge) return;
    this.options.log(
      `discovery: catalog older than ${maxAge} ms, refreshing in the background`,
    );
    this.discover().catch((error: unknown) =>
      this.options.log(`discovery: refresh failed: ${errorText(error)}`),
    );
  }

  /** Aborts every listing in flight and every pending re-listing; later calls do nothing. */
  close(): void {
    this.#unsubscribe?.();
    for (const timer of this.#debounce.values()) clearTimeout(timer);
    this.#debounce.clear();
    clearTimeout(this.#cacheTimer);
    this.#abort.abort();
  }

  /**
   * Lists `backends`, at most {@link MAX_LISTINGS} at a time: the next starts
   * once a listing has arrived (not once it is in the catalog), or has waited
   * {@link SLOW_LISTING_MS}. Outcomes in the order of `backends`.
   */
  async #discoverEach(
    backends: readonly Backend[],
  ): Promise<DiscoveryOutcome[]> {
    const outcomes: Array<Promise<DiscoveryOutcome>> = [];
    let next = 0;
    const worker = async () => {
      while (next < backends.length) {
        const backend = backends[next++]!;
        await new Promise<void>((next) => {
          // A backend slow to answer gives up its slot after a while, so
          // backends that never answer do not hold back the others.
          const patience = setTimeout(next, SLOW_LISTING_MS);
          patience.unref();
          outcomes.push(
            this.#discoverBackend(backend, () => {
              clearTimeout(patience);
              next();
            }),
          );
        });
      }
    };
    const slots = Math.min(backends.length, MAX_LISTINGS);
    await Promise.all(Array.from({ length: slots }, worker));
    return Promise.all(outcomes);
  }

  /** Lists one backend and applies its listing; `fetched` is called once the listing has arrived (or failed), before it is applied. */
  async #discoverBackend(
    backend: Backend,
    fetched?: () => void,
  ): Promise<DiscoveryOutcome> {
    const started = performance.now();
    const sequence = ++this.#sequence;
    try {
      let tools: GatewayTool[];
      try {
        tools = await this.options.gateway.listTools({
          target: backend.target,
          signal: this.#abort.signal,
        });
      } finally {
        fetched?.();
      }
      await this.#apply(backend, tools, sequence);
      return {
        target: backend.target,
        ok: true,
        tools: tools.length,
        ms: elapsed(started),
      };
    } catch (error) {
      if (this.#discoveredAt === undefined)
        this.#initialFailed.add(backend.target);
      this.options.log(
        `discovery: ${backend.target} failed, keeping its previous entries: ${errorText(error)}`,
      );
      return failure(backend.target, error, started);
    }
  }

  async #discoverMultiplexed(): Promise<DiscoveryOutcome[]> {
    const started = performance.now();
    const sequence = ++this.#sequence;
    let listing: Map<string, GatewayTool[]>;
    try {
      listing = await this.options.gateway.listAllTools!({
        signal: this.#abort.signal,
      });
    } catch (error) {
      this.options.log(
        `discovery: multiplexed listing failed, keeping previous entries: ${errorText(error)}`,
      );
      return [...this.options.backends.keys()].map((target) =>
        failure(target, error, started),
      );
    }
    const ms = elapsed(started);
    // Not listed (hidden by a gateway rule, or down): keep what we had, say so.
    const outcomes: DiscoveryOutcome[] = [...this.options.backends.keys()]
      .filter((target) => !listing.has(target))
      .map((target) => ({
        target,
        ok: false,
        error: 'absent from the multiplexed listing',
        ms,
      }));
    // Every target's listing is reviewed and queued at once: one build applies them.
    await Promise.all(
      [...listing].map(async ([target, tools]) => {
        let backend = this.options.backends.get(target);
        if (backend === undefined) {
          backend = { backend: target, target, profile: 'core' };
          this.options.backends.set(target, backend);
          this.options.log(
            `discovery: gateway lists unconfigured target "${target}"; catalogued under profile core`,
          );
        }
        try {
          await this.#apply(backend, tools, sequence);
          outcomes.push({ target, ok: true, tools: tools.length, ms });
        } catch (error) {
          outcomes.push(failure(target, error, started));
          this.options.log(
            `discovery: ${target} listing rejected: ${errorText(error)}`,
          );
        }
      }),
    );
    return outcomes;
  }

  /**
   * Replaces a backend's entries with the reviewed listing, unless a listing
   * that started later was applied already (checked again after the review,
   * which may wait on the pins file). A listing with the catalog's hash is
   * reviewed (the trust layer sees every listing) but changes nothing.
   */
  async #apply(
    backend: Backend,
    tools: readonly GatewayTool[],
    sequence: number,
  ): Promise<void> {
    if ((this.#applied.get(backend.target) ?? 0) > sequence) return;
    await this.#paced();
    const hash =
      this.options.cache === undefined ? undefined : listingHash(tools);
    if (
      hash !== undefined &&
      this.#servedFromCache.get(backend.target) === hash
    ) {
      // The listing the cached part was built from, served after its tools
      // matched their pins: nothing to review or rebuild.
      this.#applied.set(backend.target, sequence);
      return;
    }
    const reviewed: Reviewed =
      this.options.review === undefined
        ? { tools }
        : await this.options.review.review(backend.target, tools);
    if ((this.#applied.get(backend.target) ?? 0) > sequence) return;
    if (hash !== undefined && this.#hashes.get(backend.target)?.hash === hash) {
      this.#applied.set(backend.target, sequence);
      return;
    }
    await this.#paced();
    await this.#enqueue(
      backend.target,
      entriesOf(
        backend,
        reviewed.tools,
        this.options.log,
        reviewed.definitions?.names,
      ),
      sequence,
      hash === undefined
        ? undefined
        : { hash, definitions: reviewed.definitions },
    );
  }

  /** Yields to other work (requests first) once listing work since the last yield took {@link LISTING_WORK_SLICE_MS}: listings that arrive together are handled a slice at a time. */
  async #paced(): Promise<void> {
    if (performance.now() - this.#sliceStarted < LISTING_WORK_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#sliceStarted = performance.now();
  }

  /**
   * Queues a target's entries for the next catalog build (a newer listing
   * replaces its older queued one); resolves once they are in the catalog,
   * rejects when the catalog refuses them.
   */
  #enqueue(
    target: string,
    entries: ToolEntry[],
    sequence: number,
    key: CachedListing | undefined,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queued = this.#pending.get(target);
      if (queued !== undefined && queued.sequence > sequence) {
        queued.waiters.push({ resolve, reject });
        return;
      }
      this.#pending.set(target, {
        entries,
        sequence,
        key,
        waiters: [...(queued?.waiters ?? []), { resolve, reject }],
      });
      if (this.#building === undefined) this.#building = this.#build();
    });
  }

  /** Applies what is queued, batch after batch (one catalog build each), until nothing is left. */
  async #build(): Promise<void> {
    // Let the listings that arrive in the same turn join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#pending.size > 0) {
      const batch = [...this.#pending].filter(([target, listing]) => {
        if ((this.#applied.get(target) ?? 0) <= listing.sequence) return true;
        for (const waiter of listing.waiters) waiter.resolve();
        return false;
      });
      this.#pending.clear();
      try {
        await this.options.catalog.replaceBackendsAsync(
          new Map(batch.map(([target, listing]) => [target, listing.entries])),
        );
        for (const [target, listing] of batch) this.#settle(target, listing);
      } catch {
        // One listing the catalog refuses must not hold back the others: apply each alone.
        for (const [target, listing] of batch) {
          try {
            await this.options.catalog.replaceBackendAsync(
              target,
              listing.entries,
            );
            this.#settle(target, listing);
          } catch (error) {
            for (const waiter of listing.waiters) waiter.reject(error);
          }
        }
      }
      this.#cacheChanged();
      this.#events.emit({ type: 'catalog-changed' });
    }
    this.#building = undefined;
  }

  /** Records that a target's queued listing is in the catalog and tells whoever waits for it. */
  #settle(target: string, listing: PendingListing): void {
    this.#applied.set(target, listing.sequence);
    this.#servedFromCache.delete(target);
    if (listing.key === undefined) this.#hashes.delete(target);
    else this.#hashes.set(target, listing.key);
    for (const waiter of listing.waiters) waiter.resolve();
  }

  /**
   * Writes the index cache once the catalog has been quiet for a moment, for
   * {@link DISCOVERY_CACHE_QUIET_MS} while a full discovery runs: a burst is
   * written once, yet a backend that never answers does not hold it back.
   */
  #cacheChanged(): void {
    const cache = this.options.cache;
    if (cache === undefined || this.#abort.signal.aborted) return;
    clearTimeout(this.#cacheTimer);
    this.#cacheTimer = setTimeout(
      () => {
        this.#cacheTimer = undefined;
        // A listing that arrives while the cache is being restored must not
        // write a file without the parts still being restored.
        void this.#cacheApplied.then(() => {
          if (!this.#abort.signal.aborted)
            void cache.save(this.#hashes, (keys) =>
              this.options.catalog.saveCatalogStream(keys),
            );
        });
      },
      this.#discovery === undefined ? CACHE_QUIET_MS : DISCOVERY_CACHE_QUIET_MS,
    );
    this.#cacheTimer.unref();
  }
}

/**
 * Catalog entries of a listing; a malformed or duplicate tool is skipped and
 * named, never the whole backend. Each entry takes its string from `names`,
 * the review's qualified names in listing order (one string per tool, not
 * one for the catalog and one for the pins).
 */
function entriesOf(
  backend: Backend,
  tools: readonly GatewayTool[],
  log: (line: string) => void,
  names: readonly string[] = [],
): ToolEntry[] {
  const entries: ToolEntry[] = [];
  const seen = new Set<string>();
  let next = 0;
  for (const tool of tools) {
    try {
      const entry = toolEntryFromMcpTool({
        backend,
        tool,
        source: 'discovered',
      });
      if (names[next] === entry.name) entry.name = names[next++]!;
      if (seen.has(entry.name)) {
        log(
          `discovery: ${backend.target} lists "${tool.name}" twice; keeping the first`,
        );
        continue;
      }
      seen.add(entry.name);
      entries.push(entry);
    } catch (error) {
      log(
        `discovery: ${backend.target} tool ${JSON.stringify(tool?.name)} skipped: ${errorText(error)}`,
      );
    }
  }
  return entries;
}

/** Resolves when `work` settles or after `ms`, whichever comes first; never rejects. */
export async function waitAtMost(
  work: Promise<unknown>,
  ms: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => {}),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

function failure(
  target: string,
  error: unknown,
  started: number,
): DiscoveryOutcome {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    target,
    ok: false,
    error: errorText(error),
    ...(typeof code === 'string' ? { code } : {}),
    ms: elapsed(started),
  };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

/** The items of `items` that pass `test`, and the others, each in order. */
function partition<T>(
  items: readonly T[],
  test: (item: T) => boolean,
): [T[], T[]] {
  const passed: T[] = [];
  const failed: T[] = [];
  for (const item of items) (test(item) ? passed : failed).push(item);
  return [passed, failed];
}

import { setMaxListeners } from 'node:events';
import {
  toolEntryFromMcpTool,
  type Backend,
  type ToolCatalog,
  type ToolEntry,
} from '@heretek/catalog';
import type { BackendRegistry } from './backend-registry.js';
import { errorText } from './error-text.js';
import type {
  DiscoveryOutcome,
  GatewayMode,
  GatewayTool,
  ToolGateway,
} from './types.js';

/** Options of {@link DiscoveryScheduler}. */
export type DiscoveryOptions = {
  gateway: ToolGateway;
  gatewayMode: GatewayMode;
  catalog: ToolCatalog;
  /** Backends by target; a multiplexed listing may add targets the configuration did not name. */
  /** The backend table; discovery adds the targets a multiplexed listing reveals. */
  backends: BackendRegistry;
  /** Full re-discovery on the next operation once the catalog is older than this. */
  ttlMs: number;
  /** After a discovery in which a backend failed, retry once the catalog is this old (capped by the TTL). */
  failedRetryMs: number;
  /** How long the first operation waits for start-up discovery. */
  initialWaitMs: number;
  /** Quiet time after a backend's `tools/list_changed` before that backend is listed again. */
  listChangedDebounceMs: number;
  /**
   * Pins and cleans each listing before it replaces a backend's entries (the
   * trust layer): the catalog, and so every agent, sees only what it returns.
   */
  review?: (
    target: string,
    tools: readonly GatewayTool[],
  ) => Promise<readonly GatewayTool[]>;
  log: (line: string) => void;
};

/** The multiplexed listing's key for debouncing: one listing serves every target. */
const ALL_TARGETS = '\0all';

/**
 * Keeps the catalog in step with the gateway: one parallel discovery at
 * start-up (the first operation waits for it, bounded), a full re-discovery
 * in the background once the catalog is older than the TTL (sooner after a
 * failure), and a debounced re-listing of one backend when it says its tools
 * changed. Each successful listing replaces that backend's entries at once; a
 * failed one keeps what the catalog had. A listing that started before a newer
 * one of the same backend was applied is dropped, so a slow full run never
 * undoes a fresher targeted one. {@link close} aborts whatever is in flight.
 */
export class DiscoveryScheduler {
  readonly #o: DiscoveryOptions;
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

  constructor(options: DiscoveryOptions) {
    this.#o = options;
    // Every listing in flight listens on this one signal (12 backends and more).
    setMaxListeners(0, this.#abort.signal);
  }

  /** Starts the start-up discovery in the background, once. */
  start(): void {
    if (this.#initial !== undefined || this.#abort.signal.aborted) return;
    this.#initial = this.discover();
    this.#initial.catch(() => {});
  }

  /** Lists every backend (in parallel, or in one multiplexed listing). Concurrent calls share one run. */
  discover(): Promise<DiscoveryOutcome[]> {
    if (this.#discovery !== undefined) return this.#discovery;
    const run = (async () => {
      let outcomes: DiscoveryOutcome[];
      try {
        outcomes =
          this.#o.gatewayMode === 'multiplexed' &&
          this.#o.gateway.listAllTools !== undefined
            ? await this.#discoverMultiplexed()
            : await Promise.all(
                [...this.#o.backends.all()].map((b) =>
                  this.#discoverBackend(b),
                ),
              );
      } finally {
        this.#discoveredAt = Date.now();
      }
      const failed = outcomes.filter((o) => !o.ok);
      this.#lastFailed = failed.length > 0;
      this.#o.log(
        `discovery: ${outcomes.length - failed.length}/${outcomes.length} backends listed, catalog has ${this.#o.catalog.size} tools`,
      );
      return outcomes;
    })().finally(() => {
      this.#discovery = undefined;
    });
    this.#discovery = run;
    return run;
  }

  /**
   * A backend said its tool list changed (`notifications/tools/list_changed`):
   * list that backend alone once no further notice came for
   * `listChangedDebounceMs`. In multiplexed mode, or for a target the broker
   * does not know, the whole gateway listing is run again.
   */
  toolsListChanged(target: string | undefined): void {
    if (this.#abort.signal.aborted) return;
    const key =
      this.#o.gatewayMode === 'multiplexed' ||
      target === undefined ||
      !this.#o.backends.has(target)
        ? ALL_TARGETS
        : target;
    clearTimeout(this.#debounce.get(key));
    const timer = setTimeout(() => {
      this.#debounce.delete(key);
      this.#o.log(
        `discovery: ${key === ALL_TARGETS ? 'the gateway' : `backend "${key}"`} says its tools changed; listing again`,
      );
      this.rediscover(key === ALL_TARGETS ? undefined : key).catch(() => {});
    }, this.#o.listChangedDebounceMs);
    timer.unref();
    this.#debounce.set(key, timer);
  }

  /** Lists one backend again now (every backend when `target` is undefined); shares a run already in flight for it. */
  rediscover(target: string | undefined): Promise<DiscoveryOutcome[]> {
    const backend =
      target === undefined ? undefined : this.#o.backends.get(target);
    if (backend === undefined || this.#o.gatewayMode === 'multiplexed')
      return this.discover();
    const running = this.#targeted.get(backend.target);
    if (running !== undefined) return running;
    const run = this.#discoverBackend(backend)
      .then((outcome) => {
        this.#o.log(
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

  /**
   * The first operation after start-up waits (bounded) for the start-up
   * discovery, so a fresh broker does not answer from the seed alone; no later
   * operation waits, whatever discovery is doing.
   */
  async awaitInitial(): Promise<void> {
    const initial = this.#initial;
    if (
      initial === undefined ||
      this.#discoveredAt !== undefined ||
      this.#initialWaitDone
    )
      return;
    this.#initialWaitDone = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      initial.catch(() => {}),
      new Promise((resolve) => {
        timer = setTimeout(resolve, this.#o.initialWaitMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Starts a background re-discovery once the catalog is older than the TTL,
   * or older than `failedRetryMs` when a backend failed last time (a broker
   * started before its gateway should not serve the seed for a whole TTL).
   * Never waits.
   */
  refreshIfStale(): void {
    if (
      this.#discoveredAt === undefined ||
      this.#discovery !== undefined ||
      this.#abort.signal.aborted
    )
      return;
    const maxAge = this.#lastFailed
      ? Math.min(this.#o.ttlMs, this.#o.failedRetryMs)
      : this.#o.ttlMs;
    if (Date.now() - this.#discoveredAt < maxAge) return;
    this.#o.log(
      `discovery: catalog older than ${maxAge} ms, refreshing in the background`,
    );
    this.discover().catch((error: unknown) =>
      this.#o.log(`discovery: refresh failed: ${errorText(error)}`),
    );
  }

  /** Aborts every listing in flight and every pending re-listing; later calls do nothing. */
  close(): void {
    for (const timer of this.#debounce.values()) clearTimeout(timer);
    this.#debounce.clear();
    this.#abort.abort();
  }

  async #discoverBackend(backend: Backend): Promise<DiscoveryOutcome> {
    const started = performance.now();
    const sequence = ++this.#sequence;
    try {
      const tools = await this.#o.gateway.listTools({
        target: backend.target,
        signal: this.#abort.signal,
      });
      await this.#apply(backend, tools, sequence);
      return {
        target: backend.target,
        ok: true,
        tools: tools.length,
        ms: elapsed(started),
      };
    } catch (error) {
      const message = errorText(error);
      this.#o.log(
        `discovery: ${backend.target} failed, keeping its previous entries: ${message}`,
      );
      return failure(backend.target, error, started);
    }
  }

  async #discoverMultiplexed(): Promise<DiscoveryOutcome[]> {
    const started = performance.now();
    const sequence = ++this.#sequence;
    let listing: Map<string, GatewayTool[]>;
    try {
      listing = await this.#o.gateway.listAllTools!({
        signal: this.#abort.signal,
      });
    } catch (error) {
      this.#o.log(
        `discovery: multiplexed listing failed, keeping previous entries: ${errorText(error)}`,
      );
      return [...this.#o.backends.targets()].map((target) =>
        failure(target, error, started),
      );
    }
    const ms = elapsed(started);
    const outcomes: DiscoveryOutcome[] = [];
    for (const target of this.#o.backends.targets()) {
      if (!listing.has(target)) {
        // Not listed: hidden by a gateway rule, or the target is down. Keep what we had, say so.
        outcomes.push({
          target,
          ok: false,
          error: 'absent from the multiplexed listing',
          ms,
        });
      }
    }
    for (const [target, tools] of listing) {
      const { backend, learned } = this.#o.backends.learn(target);
      if (learned) {
        this.#o.log(
          `discovery: gateway lists unconfigured target "${target}"; catalogued under profile core`,
        );
      }
      try {
        await this.#apply(backend, tools, sequence);
        outcomes.push({ target, ok: true, tools: tools.length, ms });
      } catch (error) {
        outcomes.push(failure(target, error, started));
        this.#o.log(
          `discovery: ${target} listing rejected: ${errorText(error)}`,
        );
      }
    }
    return outcomes;
  }

  /**
   * Replaces a backend's entries with the reviewed listing, unless a listing
   * that started later was applied already (checked again after the review,
   * which may wait on the pins file).
   */
  async #apply(
    backend: Backend,
    tools: readonly GatewayTool[],
    sequence: number,
  ): Promise<void> {
    if ((this.#applied.get(backend.target) ?? 0) > sequence) return;
    const reviewed =
      this.#o.review === undefined
        ? tools
        : await this.#o.review(backend.target, tools);
    if ((this.#applied.get(backend.target) ?? 0) > sequence) return;
    this.#o.catalog.replaceBackend(
      backend.target,
      entriesOf(backend, reviewed, this.#o.log),
    );
    this.#applied.set(backend.target, sequence);
  }
}

/** Catalog entries of a listing; a malformed or duplicate tool is skipped and named, never the whole backend. */
function entriesOf(
  backend: Backend,
  tools: readonly GatewayTool[],
  log: (line: string) => void,
): ToolEntry[] {
  const entries: ToolEntry[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    try {
      const entry = toolEntryFromMcpTool({
        backend,
        tool,
        source: 'discovered',
      });
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

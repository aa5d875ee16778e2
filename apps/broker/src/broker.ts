import { setMaxListeners } from 'node:events';
import {
  DEFAULT_BACKENDS,
  ToolCatalog,
  type Backend,
  type SearchResult,
  type ToolEntry,
} from '@heretek/catalog';
import { splitMultiplexedName } from '@heretek/internal';
import { parseRoleName, type RoleName } from '@heretek/prefix';
import { authorise } from './authorisation.js';
import { BackendBreakers } from './breakers.js';
import { CallPipeline, unknownTool } from './call-pipeline.js';
import {
  DiscoveryScheduler,
  INITIAL_DISCOVERY_WAIT_MS,
  waitAtMost,
  type DiscoveryEvent,
  type DiscoveryProgress,
} from './discovery.js';
import type { HybridRanking } from './embeddings/hybrid-ranking.js';
import { errorText } from './error-text.js';
import { BrokerError, quote } from './errors.js';
import { EventStream } from './event-stream.js';
import type { IndexCache } from './index-cache.js';
import { ListingReview } from './listing-review.js';
import type { guardResult } from './trust/result-guard.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { UsageLearning } from './usage/usage-learning.js';
import type {
  CallHandlers,
  DiscoveryOutcome,
  GatewayEvent,
  GatewayMode,
  ToolCallResult,
  ToolGateway,
} from './types.js';

export type BrokerOptions = {
  /** Caller role; read-only roles are refused mutating tools. */
  role: string;
  /** The catalog to serve; defaults to the offline seed catalog. */
  catalog?: ToolCatalog;
  /** Backend table; defaults to the 12 default backends. */
  backends?: readonly Backend[];
  /** Gateway to discover and call tools through; without one, calls are checked but not sent. */
  gateway?: ToolGateway;
  /** How the gateway lists tools: per target, or one multiplexed listing. */
  gatewayMode?: GatewayMode;
  /** Discovery runs again on the next operation once the catalog is older than this. Default 300000. */
  discoveryTtlMs?: number;
  /** Profile applied to searches that name none. */
  defaultProfile?: string;
  /** The trust layer, or a promise of it while the pins file opens (discovery and calls wait for it, searches do not). */
  trust?: TrustLayer | Promise<TrustLayer | undefined>;
  /** Learning from use: every answered search and finished call is given to it (ranking only). */
  learning?: UsageLearning;
  /** The index cache: each backend's last listing, served at start before rediscovery answers. */
  indexCache?: IndexCache;
  /** Hybrid ranking with an embedding endpoint (lexical when the query's vector is late). */
  hybrid?: HybridRanking;
  /** Clean and flag every tool result (`trust/result-guard.ts`); false (`HERETEK_RESULT_GUARD=off`) passes them untouched. Default true. */
  resultGuard?: boolean;
  /** Diagnostic sink (stderr in the CLI). */
  log?: (line: string) => void;
};

/** What the broker reports as it works: discovery's events and the gateway's. */
export type BrokerEvent = DiscoveryEvent | GatewayEvent;

/** A backend is listed again for a name the catalog lacks at most this often. */
const ON_DEMAND_RELIST_MS = 10_000;

/** What `mcp_search_tools` answers. */
export type SearchToolsResult = SearchResult & {
  query: string;
  profile: string | undefined;
  target: string | undefined;
  /** Present while start-up discovery still lists some backends: their tools are not in the hits yet. */
  discovering?: DiscoveryProgress;
};

/** One page of a target's tools, as `mcp_search_tools` with a target and no query lists them. */
export type BrowseResult = {
  target: string;
  /** Tools of the target (in the profile, when one was given). */
  total: number;
  /** Index of the first tool on this page. */
  offset: number;
  tools: Array<{ name: string; description: string; mutating: boolean }>;
  /** Present while start-up discovery still lists some backends (see {@link SearchToolsResult}). */
  discovering?: DiscoveryProgress;
};

/** Default page size when browsing a target. */
const DEFAULT_BROWSE_LIMIT = 25;

/** What `mcp_inspect_schema` answers. */
export type ToolSchemaView = {
  name: string;
  target: string;
  /** The full description, cleaned of invisible and control characters (a note instead when it is withheld). */
  description: string;
  mutating: boolean;
  inputSchema: Record<string, unknown>;
  /** `[changed]` and `[flagged: rule, …]` when they apply (absent for a trusted tool). */
  marks?: string[];
  /** What changed since the tool was pinned and how to accept it, and what each tripped rule means. */
  trust?: string[];
};

/**
 * The broker's three operations (search, inspect, call) over a tool catalog; discovery lives
 * in `DiscoveryScheduler`, the call's checks and sending in `CallPipeline`.
 */
export class Broker {
  readonly role: RoleName;
  readonly catalog: ToolCatalog;
  readonly #options: BrokerOptions;
  /** Backends by target: the configured ones, then those a multiplexed listing revealed. */
  readonly #backends: Map<string, Backend>;
  readonly #discovery: DiscoveryScheduler | undefined;
  readonly #calls: CallPipeline;
  readonly #shutdown = new AbortController();
  readonly #trust: Promise<TrustLayer | undefined>;
  #trustReady: TrustLayer | undefined;
  /** The trust layer's review of listings (none without a trust layer): {@link close} waits for its pins file writes. */
  readonly #review: ListingReview | undefined;
  readonly #events = new EventStream<BrokerEvent>();
  readonly #unsubscribe: Array<() => void> = [];
  /** When each target was last listed again for a name the catalog lacked. */
  readonly #relistedOnDemand = new Map<string, number>();
  /** {@link targetSummary}'s counts and the catalog list they were counted from. */
  #targetCounts:
    { entries: readonly unknown[]; counts: Map<string, number> } | undefined;
  readonly #log: (line: string) => void;
  /** Whether the index cache's restore has ended (or there was none). */
  #cacheSettled = false;
  /** The result guard, loaded with the first result (`undefined` when turned off). */
  readonly #resultGuard: (() => Promise<typeof guardResult>) | undefined;

  constructor(options: BrokerOptions) {
    this.#options = options;
    this.role = parseRoleName(options.role);
    this.catalog = options.catalog ?? ToolCatalog.fromSeed();
    this.#backends = new Map(
      (options.backends ?? DEFAULT_BACKENDS).map((row) => [row.target, row]),
    );
    const log = options.log ?? (() => {});
    this.#log = log;
    let guard: Promise<typeof guardResult> | undefined;
    this.#resultGuard =
      options.resultGuard === false
        ? undefined
        : () =>
            (guard ??= import('./trust/result-guard.js').then(
              (module) => module.guardResult,
            ));
    this.#trust = Promise.resolve(options.trust).then((trust) => {
      this.#trustReady = trust;
      return trust;
    });
    // A pins file that cannot be opened is the owner's to report (the CLI exits).
    this.#trust.catch(() => {});
    // Every call in flight listens on the shutdown signal (hundreds at a time under load).
    setMaxListeners(0, this.#shutdown.signal);
    this.#review =
      options.trust === undefined ? undefined : new ListingReview(this.#trust);
    this.#discovery =
      options.gateway === undefined
        ? undefined
        : new DiscoveryScheduler({
            gateway: options.gateway,
            gatewayMode: options.gatewayMode ?? 'per-target',
            catalog: this.catalog,
            backends: this.#backends,
            ttlMs: options.discoveryTtlMs ?? 300_000,
            review: this.#review,
            cache: options.indexCache,
            log,
          });
    const forward = (event: BrokerEvent) => {
      if (event.type === 'catalog-changed') options.hybrid?.catalogChanged();
      this.#events.emit(event);
    };
    for (const source of [this.#discovery, options.gateway]) {
      const unsubscribe = source?.subscribe?.(forward);
      if (unsubscribe !== undefined) this.#unsubscribe.push(unsubscribe);
    }
    this.#calls = new CallPipeline({
      catalog: this.catalog,
      backends: this.#backends,
      gateway: options.gateway,
      breakers: new BackendBreakers(log),
      shutdown: this.#shutdown.signal,
      log,
    });
  }

  /** Throws the call's refusal, or returns whether the tool counts as mutating; a pin's refusal is decided again after re-reading the pins file (`--pin`). */
  async #authorise(
    name: string,
    entry: ToolEntry | undefined,
    role: RoleName,
  ): Promise<boolean> {
    const trust = await this.#trust;
    const decide = () =>
      authorise({
        role,
        name,
        entry,
        pin: trust?.callPin(name),
      });
    let decision = decide();
    if (
      !decision.allowed &&
      decision.code !== 'ROLE_FORBIDDEN' &&
      trust?.pins !== undefined
    ) {
      await trust.pins.refresh();
      decision = decide();
    }
    if (!decision.allowed)
      throw new BrokerError({
        code: decision.code,
        toolName: name,
        message: decision.message,
      });
    return decision.mutating;
  }

  /** `[changed]` and `[flagged: …]` marks of a tool (empty before the trust layer is open). */
  marks(name: string, mutating: boolean): string[] {
    return this.#trustReady?.marks(name, { mutating }) ?? [];
  }

  /** What stands in for a tool's description the agent must not read (a flagged tool held under `refuse`). */
  withheld(name: string): string | undefined {
    return this.#trustReady?.withheldNote(name);
  }

  /** Starts discovery in the background (no-op without a gateway). Operations never wait on a slow backend beyond the initial wait. */
  start(): void {
    this.#discovery?.start();
    const hybrid = this.#options.hybrid;
    if (hybrid !== undefined)
      setImmediate(() => {
        if (!this.#shutdown.signal.aborted) hybrid.follow(this.catalog);
      });
  }

  /** Settles once the index cache's parts are served (or refused); at once without a cache. */
  cacheApplied(): Promise<void> {
    return this.#discovery?.cacheApplied() ?? Promise.resolve();
  }

  /** Gives every later {@link BrokerEvent} to `listener`; returns the unsubscribe. */
  readonly subscribe = this.#events.subscribe;

  /** Lists every backend's tools (a failed listing keeps what the catalog had); concurrent calls share one run. */
  discover(): Promise<DiscoveryOutcome[]> {
    return this.#discovery?.discover() ?? Promise.resolve([]);
  }

  /** Searches the catalog. Triggers background re-discovery once the catalog is older than the TTL. */
  async searchTools(options: {
    query: string;
    profile?: string;
    target?: string;
    limit?: number;
  }): Promise<SearchToolsResult> {
    await this.#fresh();
    if (options.target !== undefined) this.#assertTarget(options.target);
    const profile = options.profile ?? this.#options.defaultProfile;
    const vectors = await this.#options.hybrid?.vectorsFor(
      this.catalog,
      options.query,
    );
    const result = this.catalog.search({ ...options, profile, vectors });
    this.#learned(options.query, result.hits);
    return {
      ...result,
      query: options.query,
      profile,
      target: options.target,
      discovering: this.discovering(),
    };
  }

  /** While start-up discovery runs: backends not listed yet, of how many (`undefined` once it is done). */
  discovering(): DiscoveryProgress | undefined {
    return this.#discovery?.unlisted();
  }

  /** One page of a target's tools sorted by name; only a profile given here narrows it (not the default one). */
  async browseTools(options: {
    target: string;
    profile?: string;
    offset?: number;
    limit?: number;
  }): Promise<BrowseResult> {
    await this.#fresh();
    this.#assertTarget(options.target);
    const all = this.catalog
      .list()
      .filter(
        (tool) =>
          tool.target === options.target &&
          (options.profile === undefined || tool.profile === options.profile),
      )
      .sort((left, right) =>
        left.name < right.name ? -1 : left.name > right.name ? 1 : 0,
      );
    const offset = options.offset ?? 0;
    const page = all.slice(
      offset,
      offset + (options.limit ?? DEFAULT_BROWSE_LIMIT),
    );
    return {
      target: options.target,
      total: all.length,
      offset,
      tools: page.map((tool) => ({
        name: tool.name,
        description: tool.description,
        mutating: tool.mutating,
      })),
      discovering: this.discovering(),
    };
  }

  /** Every known target with its number of tools, in configuration order; counted once per catalog list (one array until a change). */
  targetSummary(): Array<{ target: string; tools: number }> {
    const entries = this.catalog.list();
    if (this.#targetCounts?.entries !== entries) {
      const counts = new Map<string, number>();
      for (const tool of entries)
        counts.set(tool.target, (counts.get(tool.target) ?? 0) + 1);
      this.#targetCounts = { entries, counts };
    }
    const counts = new Map([...this.#backends.keys()].map((key) => [key, 0]));
    for (const [target, tools] of this.#targetCounts.counts)
      counts.set(target, tools);
    return [...counts].map(([target, tools]) => ({ target, tools }));
  }

  /** Hands an answered search to learning from use (its catalog terms and hit names). */
  #learned(query: string, hits: ReadonlyArray<{ name: string }>): void {
    const learning = this.#options.learning;
    if (learning === undefined || !learning.enabled || hits.length === 0)
      return;
    try {
      learning.searched({
        terms: this.catalog.searchTerms(query),
        hits: hits.map((hit) => hit.name),
      });
    } catch (error) {
      this.#log(`usage: search not recorded: ${errorText(error)}`);
    }
  }

  #assertTarget(target: string): void {
    if (this.#backends.has(target)) return;
    throw new BrokerError({
      code: 'UNKNOWN_TARGET',
      message: `No backend target ${quote(target)}. Known targets (tools): ${this.targetSummary()
        .map((summary) => `${summary.target} (${summary.tools})`)
        .join(', ')}.`,
    });
  }

  /** The full schema of a tool, by exact qualified name. Throws `UNKNOWN_TOOL` with suggestions. */
  async inspectToolSchema(name: string): Promise<ToolSchemaView> {
    const entry = await this.#lookup(name);
    if (entry === undefined)
      throw unknownTool(this.catalog, name, this.discovering());
    const marks = this.marks(name, entry.mutating);
    const notes =
      this.#trustReady?.inspectNotes(name, { mutating: entry.mutating }) ?? [];
    return {
      name: entry.name,
      target: entry.target,
      description: this.withheld(name) ?? entry.description,
      mutating: entry.mutating,
      inputSchema: entry.inputSchema,
      ...(marks.length === 0 ? {} : { marks }),
      ...(notes.length === 0 ? {} : { trust: notes }),
    };
  }

  /** The catalog entry of an exact name, after waiting for discovery and a relisting when it is missing. */
  async #lookup(name: string): Promise<ToolEntry | undefined> {
    let entry = this.catalog.get(name);
    if (entry !== undefined) return entry;
    await this.#fresh();
    entry = this.catalog.get(name);
    if (entry !== undefined) return entry;
    await this.#relistFor(name);
    return this.catalog.get(name);
  }

  /** Calls a tool by exact name (route, role, pin, arguments, breaker, `tools/call`); refusals throw `BrokerError`. */
  async callTool(
    options: {
      name: string;
      arguments?: Record<string, unknown>;
      signal?: AbortSignal;
      /** The caller's role for this call alone (gated by it and sent to the gateway); defaults to the broker's. */
      role?: string;
    } & CallHandlers,
  ): Promise<ToolCallResult> {
    const { name } = options;
    const role =
      options.role === undefined ? this.role : parseRoleName(options.role);
    const entry = await this.#lookup(name);
    let isError = true;
    try {
      const route = this.#calls.route(name, entry);
      const mutating = await this.#authorise(name, entry, role);
      const result = await this.#calls.call({
        ...options,
        entry,
        route,
        mutating,
        role,
        arguments: options.arguments ?? {},
      });
      isError = result.isError === true;
      return await this.#guarded(name, result);
    } finally {
      this.#options.learning
        ?.called({ tool: name, isError })
        .catch((error: unknown) =>
          this.#log(`usage: use not recorded: ${errorText(error)}`),
        );
    }
  }

  /** A tool's result cleaned and flagged by the result guard (unless it is off); what it did is logged. */
  async #guarded(
    name: string,
    result: ToolCallResult,
  ): Promise<ToolCallResult> {
    if (this.#resultGuard === undefined || !Array.isArray(result.content))
      return result;
    const guarded = (await this.#resultGuard())(result);
    if (guarded.removed > 0)
      this.#log(
        `trust: result of ${quote(name)}: removed ${guarded.removed} hidden character${guarded.removed === 1 ? '' : 's'}${guarded.tagText === '' ? '' : ` (tag characters spelled ${quote(guarded.tagText)})`}`,
      );
    if (guarded.flags.length > 0)
      this.#log(
        `trust: result of ${quote(name)} flagged: ${guarded.flags
          .map((flag) => `${flag.rule} (${quote(flag.excerpt)})`)
          .join('; ')}`,
      );
    return guarded.result;
  }

  /** Aborts discovery and every call in flight (`CANCELLED`), ends the gateway; returns how many calls were in flight. */
  async close(): Promise<{ callsAborted: number }> {
    const callsAborted = this.#calls.inFlight;
    // New pins waiting for a quiet moment are written at once.
    void this.#trustReady?.pins?.flush();
    this.#discovery?.close();
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#options.hybrid?.close();
    this.#shutdown.abort();
    await this.#options.gateway?.close();
    await this.#review?.pinsWritten();
    return { callsAborted };
  }

  /**
   * A name the catalog lacks, of a known target: the backend's change may not have been pushed
   * (no stream beyond `HERETEK_GATEWAY_MAX_STREAMS`), so it is listed again, at most once per
   * {@link ON_DEMAND_RELIST_MS} per target, waited for up to {@link INITIAL_DISCOVERY_WAIT_MS}.
   */
  async #relistFor(name: string): Promise<void> {
    const discovery = this.#discovery;
    const route = splitMultiplexedName(name);
    if (
      discovery === undefined ||
      route === undefined ||
      !this.#backends.has(route.target)
    )
      return;
    // The name may be one of the index cache's tools still being restored.
    await waitAtMost(discovery.cacheApplied(), INITIAL_DISCOVERY_WAIT_MS);
    if (this.catalog.get(name) !== undefined) return;
    const last = this.#relistedOnDemand.get(route.target);
    if (last !== undefined && Date.now() - last < ON_DEMAND_RELIST_MS) return;
    this.#relistedOnDemand.set(route.target, Date.now());
    this.#log(
      `discovery: "${name}" is not in the catalog; listing backend "${route.target}" again`,
    );
    await waitAtMost(
      discovery.rediscover(route.target),
      INITIAL_DISCOVERY_WAIT_MS,
    );
  }

  /** Waits (once, bounded) for start-up discovery and starts a refresh when the catalog is stale. */
  async #fresh(): Promise<void> {
    const discovery = this.#discovery;
    if (discovery === undefined) return;
    await discovery.awaitInitial();
    // While the index cache is restored the catalog holds the seed alone: wait for the
    // restore (at most half the first wait, so the whole stays under a second).
    if (!this.#cacheSettled)
      await waitAtMost(
        discovery.cacheApplied().then(() => {
          this.#cacheSettled = true;
        }),
        INITIAL_DISCOVERY_WAIT_MS / 2,
      );
    discovery.refreshIfStale();
  }
}

import {
  DEFAULT_BACKENDS,
  ToolCatalog,
  toolEntryFromMcpTool,
  type Backend,
  type SearchResult,
  type ToolAnnotations,
  type ToolEntry,
} from '@heretek/catalog';
import { splitMultiplexedName } from '@heretek/gateway-client';
import { canCallMutating, parseRoleName, type RoleName } from '@heretek/prefix';
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { ArgumentValidator } from './argument-validator.js';
import { BrokerError } from './errors.js';

/** A tool as a gateway lists it (the MCP `Tool` shape, loosely). */
export type GatewayTool = {
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: ToolAnnotations;
};

/** The MCP `CallToolResult` shape the broker passes back to the agent. */
export type ToolCallResult = {
  content: ReadonlyArray<object>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
};

/**
 * What the broker needs from a gateway. `@heretek/gateway-client`'s
 * `GatewayClient` satisfies it; tests may pass any object that does.
 */
export type ToolGateway = {
  listTools(options: {
    target: string;
    signal?: AbortSignal;
  }): Promise<GatewayTool[]>;
  /** Multiplexed gateways list every target at once, grouped by target. */
  listAllTools?(options?: {
    signal?: AbortSignal;
  }): Promise<Map<string, GatewayTool[]>>;
  callTool(options: {
    target: string;
    tool: string;
    arguments: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<ToolCallResult>;
  close(): Promise<void>;
};

/** Options of {@link Broker}. */
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
  gatewayMode?: 'per-target' | 'multiplexed';
  /** Discovery runs again on the next search once the catalog is older than this. Default 300000. */
  discoveryTtlMs?: number;
  /** After a discovery in which a backend failed, retry once the catalog is this old (capped by the TTL). Default 30000. */
  failedDiscoveryRetryMs?: number;
  /** How long the first search waits for start-up discovery before answering from the seed. Default 3000. */
  initialDiscoveryWaitMs?: number;
  /** Profile applied to searches that name none. */
  defaultProfile?: string;
  /** Consecutive backend failures that open a backend's circuit (default 3) and how long it stays open (default 60000 ms). */
  circuitBreaker?: { failureThreshold?: number; cooldownMs?: number };
  /** Diagnostic sink (stderr in the CLI). */
  log?: (line: string) => void;
};

/** What `mcp_search_tools` answers. */
export type SearchToolsResult = SearchResult & {
  query: string;
  profile: string | undefined;
  target: string | undefined;
};

/** What `mcp_inspect_schema` answers. */
export type ToolSchemaView = {
  name: string;
  target: string;
  description: string;
  mutating: boolean;
  inputSchema: Record<string, unknown>;
};

/** One backend's discovery outcome. */
export type DiscoveryOutcome =
  | { target: string; ok: true; tools: number }
  | { target: string; ok: false; error: string };

/**
 * The broker's three operations (search, inspect, call) over a tool catalog,
 * with the authorization gate, argument validation, per-backend circuit
 * breakers and gateway discovery. The MCP server is a thin layer over this.
 */
export class Broker {
  readonly role: RoleName;
  readonly catalog: ToolCatalog;
  readonly #backends: Map<string, Backend>;
  readonly #gateway: ToolGateway | undefined;
  readonly #gatewayMode: 'per-target' | 'multiplexed';
  readonly #validator = new ArgumentValidator();
  readonly #breakers = new Map<
    string,
    { policy: CircuitBreakerPolicy; openedAt: number | undefined }
  >();
  readonly #breakerOptions: { failureThreshold: number; cooldownMs: number };
  readonly #discoveryTtlMs: number;
  readonly #initialDiscoveryWaitMs: number;
  readonly #failedDiscoveryRetryMs: number;
  readonly #defaultProfile: string | undefined;
  readonly #log: (line: string) => void;
  #discoveredAt: number | undefined;
  #discovery: Promise<DiscoveryOutcome[]> | undefined;
  #initialDiscovery: Promise<unknown> | undefined;
  #initialWaitDone = false;
  #lastDiscoveryFailed = false;

  constructor(options: BrokerOptions) {
    this.role = parseRoleName(options.role);
    this.catalog = options.catalog ?? ToolCatalog.fromSeed();
    this.#backends = new Map(
      (options.backends ?? DEFAULT_BACKENDS).map((b) => [b.target, b]),
    );
    this.#gateway = options.gateway;
    this.#gatewayMode = options.gatewayMode ?? 'per-target';
    this.#discoveryTtlMs = options.discoveryTtlMs ?? 300_000;
    this.#initialDiscoveryWaitMs = options.initialDiscoveryWaitMs ?? 3_000;
    this.#failedDiscoveryRetryMs = options.failedDiscoveryRetryMs ?? 30_000;
    this.#defaultProfile = options.defaultProfile;
    this.#breakerOptions = {
      failureThreshold: options.circuitBreaker?.failureThreshold ?? 3,
      cooldownMs: options.circuitBreaker?.cooldownMs ?? 60_000,
    };
    this.#log = options.log ?? (() => {});
  }

  /** Backends the broker knows, keyed by target (configured plus any a multiplexed listing revealed). */
  get backends(): ReadonlyMap<string, Backend> {
    return this.#backends;
  }

  /** Starts discovery in the background (no-op without a gateway). Searches never wait on a slow backend beyond the initial wait. */
  start(): void {
    if (this.#gateway === undefined || this.#initialDiscovery !== undefined)
      return;
    this.#initialDiscovery = this.discover();
  }

  /**
   * Lists tools on every backend through the gateway, in parallel; each
   * successful listing replaces that backend's catalog entries atomically, a
   * failed one keeps what the catalog had (the seed, or the last discovery).
   * Concurrent calls share one run.
   */
  discover(): Promise<DiscoveryOutcome[]> {
    if (this.#gateway === undefined) return Promise.resolve([]);
    if (this.#discovery !== undefined) return this.#discovery;
    const gateway = this.#gateway;
    const run = (async () => {
      let outcomes: DiscoveryOutcome[];
      try {
        outcomes =
          this.#gatewayMode === 'multiplexed' &&
          gateway.listAllTools !== undefined
            ? await this.#discoverMultiplexed(gateway)
            : await Promise.all(
                [...this.#backends.values()].map((b) =>
                  this.#discoverBackend(gateway, b),
                ),
              );
      } catch (error) {
        const message = errorMessage(error);
        this.#log(`discovery: failed, keeping previous entries: ${message}`);
        outcomes = [...this.#backends.keys()].map((target) => ({
          target,
          ok: false as const,
          error: message,
        }));
      } finally {
        this.#discoveredAt = Date.now();
      }
      const failed = outcomes.filter((o) => !o.ok);
      this.#lastDiscoveryFailed = failed.length > 0;
      this.#log(
        `discovery: ${outcomes.length - failed.length}/${outcomes.length} backends listed, catalog has ${this.catalog.size} tools`,
      );
      return outcomes;
    })().finally(() => {
      this.#discovery = undefined;
    });
    this.#discovery = run;
    return run;
  }

  async #discoverBackend(
    gateway: ToolGateway,
    backend: Backend,
  ): Promise<DiscoveryOutcome> {
    try {
      const tools = await gateway.listTools({ target: backend.target });
      this.#replace(backend, tools);
      return { target: backend.target, ok: true, tools: tools.length };
    } catch (error) {
      const message = errorMessage(error);
      this.#log(
        `discovery: ${backend.target} failed, keeping its previous entries: ${message}`,
      );
      return { target: backend.target, ok: false, error: message };
    }
  }

  async #discoverMultiplexed(
    gateway: ToolGateway,
  ): Promise<DiscoveryOutcome[]> {
    let listing: Map<string, GatewayTool[]>;
    try {
      listing = await gateway.listAllTools!();
    } catch (error) {
      const message = errorMessage(error);
      this.#log(
        `discovery: multiplexed listing failed, keeping previous entries: ${message}`,
      );
      return [...this.#backends.keys()].map((target) => ({
        target,
        ok: false as const,
        error: message,
      }));
    }
    const outcomes: DiscoveryOutcome[] = [];
    for (const target of this.#backends.keys()) {
      if (!listing.has(target)) {
        // Not listed: hidden by a gateway rule, or the target is down. Keep what we had, say so.
        outcomes.push({
          target,
          ok: false,
          error: 'absent from the multiplexed listing',
        });
      }
    }
    for (const [target, tools] of listing) {
      let backend = this.#backends.get(target);
      if (backend === undefined) {
        // A target the configuration does not know is still catalogued, never dropped.
        backend = { backend: target, target, profile: 'core' };
        this.#backends.set(target, backend);
        this.#log(
          `discovery: gateway lists unconfigured target "${target}"; catalogued under profile core`,
        );
      }
      try {
        this.#replace(backend, tools);
        outcomes.push({ target, ok: true, tools: tools.length });
      } catch (error) {
        outcomes.push({ target, ok: false, error: errorMessage(error) });
        this.#log(
          `discovery: ${target} listing rejected: ${errorMessage(error)}`,
        );
      }
    }
    return outcomes;
  }

  /** Replaces a backend's entries; a malformed or duplicate tool is skipped and named, never the whole backend. */
  #replace(backend: Backend, tools: readonly GatewayTool[]): void {
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
          this.#log(
            `discovery: ${backend.target} lists "${tool.name}" twice; keeping the first`,
          );
          continue;
        }
        seen.add(entry.name);
        entries.push(entry);
      } catch (error) {
        this.#log(
          `discovery: ${backend.target} tool ${JSON.stringify(tool?.name)} skipped: ${errorMessage(error)}`,
        );
      }
    }
    this.catalog.replaceBackend(backend.target, entries);
  }

  /** Searches the catalog. Triggers background re-discovery once the catalog is older than the TTL. */
  async searchTools(options: {
    query: string;
    profile?: string;
    target?: string;
    limit?: number;
  }): Promise<SearchToolsResult> {
    await this.#awaitInitialDiscovery();
    this.#refreshIfStale();
    const profile = options.profile ?? this.#defaultProfile;
    const result = this.catalog.search({
      query: options.query,
      ...(profile === undefined ? {} : { profile }),
      ...(options.target === undefined ? {} : { target: options.target }),
      ...(options.limit === undefined ? {} : { limit: options.limit }),
    });
    return { ...result, query: options.query, profile, target: options.target };
  }

  /** The full schema of a tool, by exact qualified name. Throws `UNKNOWN_TOOL` with suggestions. */
  async inspectToolSchema(name: string): Promise<ToolSchemaView> {
    if (this.catalog.get(name) === undefined) {
      await this.#awaitInitialDiscovery();
      this.#refreshIfStale();
    }
    const entry = this.catalog.get(name) ?? this.#unknownTool(name);
    return {
      name: entry.name,
      target: entry.target,
      description: entry.description,
      mutating: entry.mutating,
      inputSchema: entry.inputSchema,
    };
  }

  /**
   * Calls a tool by exact name: circuit breaker, role check (a tool not in the
   * catalog counts as mutating), argument check against the tool's schema, then
   * `tools/call` through the gateway. Refusals throw {@link BrokerError}; a
   * backend's own `isError` result is returned as it came.
   */
  async callTool(options: {
    name: string;
    arguments?: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<ToolCallResult> {
    if (this.catalog.get(options.name) === undefined) {
      await this.#awaitInitialDiscovery();
      this.#refreshIfStale();
    }
    const name = options.name;
    const args = options.arguments ?? {};
    const entry = this.catalog.get(name);
    // Offline, a name outside the catalog can only be a typo: nothing could serve it.
    const route =
      entry !== undefined
        ? { target: entry.target, tool: entry.tool }
        : this.#gateway === undefined
          ? undefined
          : this.#routeUnknown(name);
    if (route === undefined) this.#unknownTool(name);

    const breaker = this.#breakerFor(route.target);
    const pausedFor =
      breaker.openedAt === undefined
        ? 0
        : breaker.openedAt + this.#breakerOptions.cooldownMs - Date.now();
    if (breaker.policy.state === CircuitState.Open && pausedFor > 0) {
      // Still cooling down: refuse before anything else. Once the cooldown is
      // over, the next call goes through as the half-open trial.
      throw new BrokerError({
        code: 'CIRCUIT_OPEN',
        toolName: name,
        isRetryable: true,
        message: `Backend "${route.target}" failed ${this.#breakerOptions.failureThreshold} times in a row and is paused for ${Math.ceil(pausedFor / 1000)} s more. Use another tool or retry later.`,
      });
    }

    const mutating = entry?.mutating ?? true;
    if (mutating && !canCallMutating(this.role)) {
      throw new BrokerError({
        code: 'ROLE_FORBIDDEN',
        toolName: name,
        message:
          entry === undefined
            ? `Role "${this.role}" is read-only and "${name}" is not in the catalog, so it counts as mutating. Nothing was sent. Search for a read-only tool, or hand this work to a writer role.`
            : `Role "${this.role}" is read-only and "${name}" can change state (not marked read-only). Nothing was sent. Hand this work to a writer role.`,
      });
    }

    if (entry !== undefined) {
      const check = this.#validator.check(entry.inputSchema, args);
      if (check.ok === false) {
        throw new BrokerError({
          code: 'INVALID_ARGUMENTS',
          toolName: name,
          message: `Arguments for "${name}" do not match its schema; nothing was sent:\n${check.problems
            .map((p) => `- ${p}`)
            .join(
              '\n',
            )}\nCall mcp_inspect_schema with name "${name}" for the full schema.`,
        });
      }
      if (check.ok === 'unchecked') {
        this.#log(
          `call: schema of ${name} cannot be compiled (${check.reason}); arguments passed unchecked`,
        );
      }
    } else {
      this.#log(
        `call: ${name} is not in the catalog; passing it to target "${route.target}" unchecked`,
      );
    }

    const gateway = this.#gateway;
    if (gateway === undefined) {
      throw new BrokerError({
        code: 'NO_GATEWAY',
        toolName: name,
        message: `No gateway is configured: the broker runs offline (HERETEK_BROKER_OFFLINE=1). The call to "${name}" passed the role and argument checks but was not sent. Unset HERETEK_BROKER_OFFLINE and set HERETEK_GATEWAY_URL to call tools.`,
      });
    }

    try {
      return await breaker.policy.execute(() =>
        gateway.callTool({
          target: route.target,
          tool: route.tool,
          arguments: args,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        }),
      );
    } catch (error) {
      if (error instanceof BrokenCircuitError) {
        throw new BrokerError({
          code: 'CIRCUIT_OPEN',
          toolName: name,
          isRetryable: true,
          message: `Backend "${route.target}" is paused after repeated failures. Retry later.`,
          cause: error,
        });
      }
      if (options.signal?.aborted === true) {
        throw new BrokerError({
          code: 'CANCELLED',
          toolName: name,
          message: `The call to "${name}" was cancelled.`,
          cause: error,
        });
      }
      throw new BrokerError({
        code: 'BACKEND_FAILED',
        toolName: name,
        isRetryable: isRetryableError(error),
        message: `Calling "${name}" through the gateway failed: ${errorMessage(error)}. ${
          !isRetryableError(error)
            ? 'Retrying unchanged will fail the same way.'
            : mutating
              ? 'The tool may have run before the failure: check its effect before retrying.'
              : 'It may succeed if retried later.'
        }`,
        cause: error,
      });
    }
  }

  /** Ends the gateway connection, if any. */
  async close(): Promise<void> {
    await this.#gateway?.close();
  }

  #breakerFor(target: string): {
    policy: CircuitBreakerPolicy;
    openedAt: number | undefined;
  } {
    let breaker = this.#breakers.get(target);
    if (breaker === undefined) {
      // Only faults of the backend count (timeouts, connection, 5xx); refusals and
      // non-retryable protocol answers do not open the circuit.
      const counter = new ConsecutiveBreaker(
        this.#breakerOptions.failureThreshold,
      );
      const policy = circuitBreaker(handleWhen(isRetryableError), {
        halfOpenAfter: this.#breakerOptions.cooldownMs,
        breaker: counter,
      });
      const entry: {
        policy: CircuitBreakerPolicy;
        openedAt: number | undefined;
      } = { policy, openedAt: undefined };
      policy.onBreak(() => {
        entry.openedAt = Date.now();
        this.#log(
          `circuit: backend "${target}" opened after repeated failures`,
        );
      });
      policy.onReset(() => {
        // A trial that ended without a counted fault closes the circuit; start counting afresh.
        counter.success();
        entry.openedAt = undefined;
        this.#log(`circuit: backend "${target}" closed again`);
      });
      breaker = entry;
      this.#breakers.set(target, breaker);
    }
    return breaker;
  }

  /** Splits an uncatalogued name at the first `_` (agentgateway's convention) when the target is known. */
  #routeUnknown(name: string): { target: string; tool: string } | undefined {
    const route = splitMultiplexedName(name);
    return route !== undefined && this.#backends.has(route.target)
      ? route
      : undefined;
  }

  #unknownTool(name: string): never {
    const suggestions = this.catalog
      .search({ query: name.replace(/[_\-.]+/g, ' '), limit: 3 })
      .hits.map((h) => h.name);
    throw new BrokerError({
      code: 'UNKNOWN_TOOL',
      toolName: name,
      message: `No tool named "${name}" in the catalog.${
        suggestions.length > 0 ? ` Closest: ${suggestions.join(', ')}.` : ''
      } Use mcp_search_tools to find the exact name.`,
    });
  }

  /**
   * The first operation after start-up waits (bounded) for the initial
   * discovery, so a fresh broker does not answer from the seed alone; no later
   * operation waits, whatever discovery is doing.
   */
  async #awaitInitialDiscovery(): Promise<void> {
    const initial = this.#initialDiscovery;
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
        timer = setTimeout(resolve, this.#initialDiscoveryWaitMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Starts a background re-discovery once the catalog is older than the TTL,
   * or older than `failedDiscoveryRetryMs` when a backend failed last
   * time (a broker started before its gateway should not serve the seed for a
   * whole TTL). Never waits.
   */
  #refreshIfStale(): void {
    if (
      this.#gateway === undefined ||
      this.#discoveredAt === undefined ||
      this.#discovery !== undefined
    )
      return;
    const maxAge = this.#lastDiscoveryFailed
      ? Math.min(this.#discoveryTtlMs, this.#failedDiscoveryRetryMs)
      : this.#discoveryTtlMs;
    if (Date.now() - this.#discoveredAt < maxAge) return;
    this.#log(
      'discovery: catalog older than HERETEK_DISCOVERY_TTL_MS, refreshing in the background',
    );
    this.discover().catch((error: unknown) =>
      this.#log(`discovery: refresh failed: ${errorMessage(error)}`),
    );
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string'
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}

/** Errors that say so are taken at their word; unknown errors count as backend faults. */
function isRetryableError(error: unknown): boolean {
  if (typeof error === 'object' && error !== null && 'isRetryable' in error) {
    return (error as { isRetryable: unknown }).isRetryable === true;
  }
  return true;
}

export type { ToolEntry };

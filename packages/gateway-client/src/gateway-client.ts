import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ClientCapabilities,
  type PriorDiscovery,
  type Progress,
} from '@modelcontextprotocol/client';
import { multiplexedName } from '@heretek/internal';
import { Agent } from 'undici';
import {
  DEFAULT_MAX_CONCURRENT_PER_ENDPOINT,
  DEFAULT_MAX_LIST_PAGES,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  parseGatewayClientOptions,
  type CallHandlers,
  type ElicitationHandler,
  type GatewayClientOptions,
  type GatewayMode,
  type SamplingHandler,
  type ServerRequestExtra,
  type ServerRequestFrom,
  type ServerRequestKind,
} from './config.js';
import {
  GatewayAbortedError,
  GatewayClosedError,
  GatewayConfigError,
  GatewayError,
  GatewayTimeoutError,
} from './errors.js';
import {
  createCallContext,
  createGatewayFetch,
  takeOrigin,
  type CallContext,
  type TransportBinding,
} from './http-layer.js';
import {
  NO_SCRUB,
  toGatewayError,
  type ErrorMapping,
} from './error-mapping.js';
import { Limiter } from './limiter.js';
import {
  Operation,
  raceSignal,
  type OperationHost,
  type Requester,
} from './operation.js';
import { walkPages, type McpTool } from './listing.js';
import { callAsTask, type TaskOptions } from './tasks.js';
import { splitMultiplexedName, validateTargetName } from './target-name.js';
import { VERSION } from './version.js';

export type { McpTool };

/** The result of `tools/call`, as the SDK types it. */
export type { CallToolResult };

/** Options of {@link GatewayClient.listTools}. */
export type ListToolsOptions = {
  /** The target (backend) whose tools to list. */
  target: string;
  /** Cancels the listing; the client sends `notifications/cancelled`. */
  signal?: AbortSignal | undefined;
};

/** A progress notification of a call, as the backend sent it. */
export type CallProgress = {
  /** Progress so far (increases with each notification). */
  progress: number;
  /** Total, when the backend knows it. */
  total?: number;
  /** A human-readable message, when the backend sent one. */
  message?: string;
};

/** Options of {@link GatewayClient.callTool}. */
export type CallToolOptions = {
  /** The target (backend) that owns the tool. */
  target: string;
  /** The bare tool name (without the `<target>_` prefix, in both modes). */
  tool: string;
  /** Tool arguments. */
  arguments: Record<string, unknown>;
  /**
   * Cancels the call: the client sends `notifications/cancelled` for a plain
   * call, `tasks/cancel` for a task-augmented one.
   */
  signal?: AbortSignal | undefined;
  /**
   * Receives each `notifications/progress` of the call, with `progress`,
   * `total` and `message` as the backend sent them. When given, the request
   * carries a `progressToken`, and each progress restarts the request's
   * timeout (`timeoutMs`), up to `maxTotalTimeoutMs` in all.
   */
  onProgress?: ((progress: CallProgress) => void) | undefined;
  /**
   * Hard ceiling of the whole call in milliseconds, however much progress
   * arrives, however long a user takes to answer the backend's elicitation
   * or sampling request (while the answer is awaited the per-request
   * `timeoutMs` stops), and of a task-augmented call's wait for its task.
   * Default: 10 times the client's `timeoutMs`.
   */
  maxTotalTimeoutMs?: number | undefined;
  /**
   * Call task-augmented (MCP 2025-11-25 tasks): `tools/call` with
   * `params.task`, then `tasks/get` polled at the task's `pollInterval` until
   * the task ends, then `tasks/result`, whose `CallToolResult` is returned.
   * `true` leaves the task's time-to-live to the server; `{ ttlMs }` asks
   * for one. Needed for tools whose `execution.taskSupport` is `required`.
   */
  task?: boolean | { ttlMs?: number | undefined } | undefined;
  /**
   * Answers the `elicitation/create` requests this call's replies carry
   * (a 2025 server's request on the call's stream, or an embedded request
   * of a 2026-07-28 `input_required` answer), before the client-wide
   * `onElicitation`. Needs the `elicitation` capability declared: a
   * client-wide `onElicitation`, or `serverRequests: ['elicitation']`.
   */
  onElicitation?: ElicitationHandler | undefined;
  /** Answers the `sampling/createMessage` requests of this call, as `onElicitation` does. */
  onSampling?: SamplingHandler | undefined;
  /**
   * The role this call's requests carry as `x-heretek-role` instead of the
   * client's `role` (the session stays shared): the gateway's policy then
   * judges the call by the role of whoever makes it.
   */
  role?: string | undefined;
};

/** What the client knows about one endpoint, for diagnostics and tests. */
export type EndpointInfo = {
  /** The endpoint URL. */
  url: string;
  /** Negotiated protocol revision, e.g. `2025-11-25` or `2026-07-28`. */
  protocolVersion: string | undefined;
  /** `legacy` (initialize + sessions) or `modern` (2026-07-28, stateless). */
  era: 'legacy' | 'modern' | undefined;
  /** The current `Mcp-Session-Id`, if the server issued one. */
  sessionId: string | undefined;
  /** How many times this endpoint was initialized (1 + re-initializations). */
  initializations: number;
  /**
   * The current session holds a standalone stream slot (its stream is open
   * or being reopened), so its list changes are pushed; false beyond
   * `maxStandaloneStreams`, or when the server refused the stream.
   */
  streaming: boolean;
};

type Connection = {
  binding: TransportBinding;
  client: Client;
  transport: StreamableHTTPClientTransport;
  inflight: number;
  retired: boolean;
  closed: boolean;
};

type Endpoint = {
  url: URL;
  key: string;
  /** The target (`*` for the multiplexed endpoint). */
  target: string;
  limiter: Limiter;
  connection: Promise<Connection> | undefined;
  current: Connection | undefined;
  prior: PriorDiscovery | undefined;
  initializations: number;
  /** What the operations on this endpoint need of the client. */
  host: OperationHost<Connection>;
};

/** How long an SSE reply may stay open after its response arrived. */
const STREAM_GRACE_MS = 1_000;

/** Abort reason once an operation has its answer (one shared object: no per-call DOMException). */
const SETTLED = Object.freeze({
  name: 'Settled',
  message: 'the operation already has its answer',
});

/**
 * An MCP client for one agentgateway URL that lists and calls the tools of
 * any target, in `per-target` (`<url>/mcp/<target>`, bare names) or
 * `multiplexed` (`<url>/mcp`, `<target>_<tool>`) mode. Built on the MCP SDK
 * v2 `Client` and `StreamableHTTPClientTransport` with undici as HTTP layer.
 * One session per endpoint, initialized once; a session the gateway
 * rejects is re-initialized, at most once per request. Every failure is a
 * {@link GatewayError}.
 *
 * @example
 * ```ts
 * const gateway = new GatewayClient({ url: 'http://127.0.0.1:3000', mode: 'per-target', role: 'director' });
 * const tools = await gateway.listTools({ target: 'ghidra' });
 * const result = await gateway.callTool({ target: 'ghidra', tool: 'list_functions', arguments: {} });
 * await gateway.close();
 * ```
 */
export class GatewayClient {
  /** The routing mode. */
  readonly mode: GatewayMode;
  private readonly options: GatewayClientOptions;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly maxListPages: number;
  private readonly maxConcurrent: number;
  private readonly clientName: string;
  private readonly agent: Agent;
  private readonly fetch: ReturnType<typeof createGatewayFetch>;
  private readonly scrub: (text: string) => string;
  private readonly endpoints = new Map<string, Endpoint>();
  private multiplexedListing: Promise<Map<string, McpTool[]>> | undefined;
  /** Operations in progress, by id: the fetch layer finds a request's operation here. */
  private readonly operations = new Map<string, CallContext>();
  private operationCounter = 0;
  /** How to stop each running operation at once (`close()` calls them). */
  private readonly running = new Set<() => void>();
  /** Aborted by `close()`: ends server-to-client request handlers. */
  private readonly closing = new AbortController();
  private closed = false;
  /** What the error mapping needs of this client. */
  private readonly errorMapping: ErrorMapping;

  constructor(options: GatewayClientOptions) {
    const parsed = parseGatewayClientOptions(options);
    this.options = parsed;
    this.mode = parsed.mode;
    this.baseUrl = parsed.url.replace(/\/+$/, '');
    this.timeoutMs = parsed.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.connectTimeoutMs =
      parsed.connectTimeoutMs ??
      Math.max(this.timeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
    this.maxListPages = parsed.maxListPages ?? DEFAULT_MAX_LIST_PAGES;
    this.maxConcurrent =
      parsed.maxConcurrentPerEndpoint ?? DEFAULT_MAX_CONCURRENT_PER_ENDPOINT;
    this.clientName = parsed.clientName ?? 'heretek-gateway-client';
    const token = parsed.token;
    this.scrub =
      token === undefined
        ? NO_SCRUB
        : (text: string) => text.split(token).join('[redacted]');
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: this.timeoutMs },
    });
    this.errorMapping = {
      scrub: this.scrub,
      timeoutMs: this.timeoutMs,
      isClosed: () => this.closed,
    };
    this.fetch = createGatewayFetch({
      operations: this.operations,
      agent: this.agent,
      role: parsed.role,
      token,
      maxResponseBytes: parsed.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      backgroundTimeoutMs: this.timeoutMs,
      scrub: this.scrub,
      standaloneStream:
        parsed.onToolsListChanged !== undefined || parsed.onLog !== undefined,
      maxStandaloneStreams:
        parsed.maxStandaloneStreams ?? Number.POSITIVE_INFINITY,
      onLog: parsed.onLog,
      onStreamSessionLost: (binding) => this.reopenStream(binding),
      handledRequests: new Set(
        declaredKinds(parsed).map((kind) => SERVER_REQUEST_METHODS[kind]),
      ),
    });
  }

  /**
   * List every tool of `target`, following `nextCursor` to the end (a
   * repeated cursor or more than `maxListPages` pages is a `CURSOR_LOOP`
   * error). Names are bare in both modes. In multiplexed mode `/mcp` is
   * listed once (concurrent callers share one listing) and the tools whose
   * name starts with `<target>_` are returned with the prefix removed.
   *
   * A session that expires mid-listing is re-initialized and the listing
   * resumes with the same cursor in the new session; it starts over from
   * the first page only if the server rejects that cursor.
   */
  async listTools(options: ListToolsOptions): Promise<McpTool[]> {
    const target = validateTargetName(options.target);
    if (this.mode === 'multiplexed') {
      const all = await this.listAllToolsInternal({
        signal: options.signal,
        target,
      });
      return all.get(target) ?? [];
    }
    return this.run(
      this.endpoint(`${this.baseUrl}/mcp/${target}`, target),
      target,
      options.signal,
      undefined,
      undefined,
      (requester) => walkPages(requester, target, this.maxListPages),
    );
  }

  /**
   * Multiplexed mode: list `/mcp` once and group the tools by target, split
   * at the first `_` (bare names in the result). Names that cannot be split
   * (no `_`, or not a valid target before it, as happens when agentgateway's
   * `prefixMode` leaves names unprefixed) cannot be called by target and are
   * left out, unless `includeUnprefixed` is set: then they are kept, unsplit,
   * under the key `''`. Per-target mode has no single listing: this throws
   * `INVALID_CONFIG`.
   */
  async listAllTools(
    options: {
      signal?: AbortSignal | undefined;
      includeUnprefixed?: boolean;
    } = {},
  ): Promise<Map<string, McpTool[]>> {
    const all = await this.listAllToolsInternal(options);
    if (options.includeUnprefixed) return new Map(all);
    const prefixed = new Map(all);
    prefixed.delete('');
    return prefixed;
  }

  private listAllToolsInternal(options: {
    signal?: AbortSignal | undefined;
    target?: string;
  }): Promise<Map<string, McpTool[]>> {
    if (this.mode !== 'multiplexed') {
      return Promise.reject(
        new GatewayConfigError({
          setting: 'mode',
          message:
            "listAllTools needs mode 'multiplexed' (option 'mode'); in per-target mode list each target with listTools({ target }).",
        }),
      );
    }
    if (!this.multiplexedListing) {
      const listing = this.run(
        this.endpoint(`${this.baseUrl}/mcp`, '*'),
        undefined,
        undefined,
        undefined,
        undefined,
        async (requester) => {
          const tools = await walkPages(
            requester,
            undefined,
            this.maxListPages,
          );
          const grouped = new Map<string, McpTool[]>();
          for (const tool of tools) {
            const split = splitMultiplexedName(tool.name);
            const key = split?.target ?? '';
            const bare = split ? { ...tool, name: split.tool } : tool;
            const list = grouped.get(key);
            if (list) list.push(bare);
            else grouped.set(key, [bare]);
          }
          return grouped;
        },
      );
      this.multiplexedListing = listing;
      const clear = () => {
        if (this.multiplexedListing === listing)
          this.multiplexedListing = undefined;
      };
      listing.then(clear, clear);
    }
    return raceSignal(this.multiplexedListing, options.signal, () =>
      this.abortedError(options.target),
    );
  }

  /**
   * Call `tool` of `target` with `arguments`. Per-target mode posts the bare
   * name to `<url>/mcp/<target>`; multiplexed mode posts `<target>_<tool>` to
   * `<url>/mcp`. A result with `isError: true` is returned, not thrown; every
   * other failure throws a {@link GatewayError}. See {@link CallToolOptions}
   * for progress, task-augmented calls and cancellation.
   */
  async callTool(options: CallToolOptions): Promise<CallToolResult> {
    const target = validateTargetName(options.target);
    if (typeof options.tool !== 'string' || options.tool.length === 0) {
      throw new GatewayConfigError({
        setting: 'tool',
        target,
        message: 'callTool needs a non-empty tool name.',
      });
    }
    const maxTotal = options.maxTotalTimeoutMs ?? this.timeoutMs * 10;
    if (!Number.isInteger(maxTotal) || maxTotal <= 0) {
      throw new GatewayConfigError({
        setting: 'maxTotalTimeoutMs',
        target,
        message: `maxTotalTimeoutMs must be a positive whole number of milliseconds (got ${String(options.maxTotalTimeoutMs)}).`,
      });
    }
    const wrong = callOptionProblem(options, declaredKinds(this.options));
    if (wrong !== undefined) {
      throw new GatewayConfigError({
        setting: wrong.setting,
        target,
        message: `Invalid callTool option '${wrong.setting}': ${wrong.problem}.`,
      });
    }
    const multiplexed = this.mode === 'multiplexed';
    const endpoint = multiplexed
      ? this.endpoint(`${this.baseUrl}/mcp`, '*')
      : this.endpoint(`${this.baseUrl}/mcp/${target}`, target);
    const name = multiplexed
      ? multiplexedName(target, options.tool)
      : options.tool;
    const args = options.arguments ?? {};
    const onProgress = options.onProgress;
    const onprogress = onProgress
      ? (progress: Progress) => {
          const passed: CallProgress = { progress: progress.progress };
          if (progress.total !== undefined) passed.total = progress.total;
          if (progress.message !== undefined) passed.message = progress.message;
          onProgress(passed);
        }
      : undefined;
    const task = taskOptions(options.task);
    const handlers: CallHandlers | undefined =
      options.onElicitation === undefined &&
      options.onSampling === undefined &&
      options.role === undefined
        ? undefined
        : {
            onElicitation: options.onElicitation,
            onSampling: options.onSampling,
            role: options.role,
          };
    return this.run(
      endpoint,
      target,
      options.signal,
      maxTotal,
      handlers,
      (requester) =>
        task !== undefined
          ? callAsTask(requester, {
              name,
              arguments: args,
              task,
              onprogress,
              maxTotalTimeoutMs: maxTotal,
              timeoutMs: this.timeoutMs,
              target,
            })
          : requester.request(
              'during tools/call',
              (client, requestOptions) =>
                client.callTool(
                  { name, arguments: args },
                  requestOptions,
                ) as Promise<CallToolResult>,
              { onprogress },
            ),
    );
  }

  /** What the client knows about the endpoint of `target` (undefined before first use). */
  endpointInfo(options: { target?: string }): EndpointInfo | undefined {
    const url =
      this.mode === 'multiplexed' || options.target === undefined
        ? `${this.baseUrl}/mcp`
        : `${this.baseUrl}/mcp/${options.target}`;
    const endpoint = this.endpoints.get(url);
    if (!endpoint) return undefined;
    const connection = endpoint.current;
    const era = connection?.client.getProtocolEra();
    return {
      url,
      protocolVersion: connection?.client.getNegotiatedProtocolVersion(),
      era: era === 'modern' || era === 'legacy' ? era : undefined,
      sessionId: connection?.transport.sessionId,
      initializations: endpoint.initializations,
      streaming: connection?.binding.streamSlot === true,
    };
  }

  /**
   * Stop every listing and call in flight at once (they reject with
   * `CLIENT_CLOSED`; the server is told with `notifications/cancelled`), end
   * every session (HTTP DELETE; a 405 is fine), close the standalone
   * streams and the connection pool. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    for (const stop of [...this.running]) stop();
    this.running.clear();
    // Connects in progress too: close() does not wait for a silent server.
    for (const context of this.operations.values())
      context.fail(
        new GatewayClosedError({
          target: context.target,
          message: 'The gateway client was closed while connecting.',
        }),
      );
    const endpoints = [...this.endpoints.values()];
    this.endpoints.clear();
    await Promise.all(
      endpoints.map(async (endpoint) => {
        const connection = await endpoint.connection?.catch(() => undefined);
        if (connection) await this.closeConnection(connection, true);
      }),
    );
    await this.agent.destroy().catch(() => undefined);
    for (const context of this.operations.values())
      context.controller.abort(SETTLED);
    this.operations.clear();
  }

  // ---------------------------------------------------------------- internals

  private endpoint(url: string, target: string): Endpoint {
    if (this.closed)
      throw new GatewayClosedError({
        message: 'The gateway client is closed; create a new one.',
      });
    let endpoint = this.endpoints.get(url);
    if (!endpoint) {
      const created: Endpoint = {
        url: new URL(url),
        key: url,
        target,
        limiter: new Limiter(this.maxConcurrent),
        connection: undefined,
        current: undefined,
        prior: undefined,
        initializations: 0,
        host: undefined as never,
      };
      created.host = this.operationHost(created);
      endpoint = created;
      this.endpoints.set(url, endpoint);
    }
    return endpoint;
  }

  /** What the operations on `endpoint` need of this client. */
  private operationHost(endpoint: Endpoint): OperationHost<Connection> {
    return {
      key: endpoint.key,
      timeoutMs: this.timeoutMs,
      readySession: () => {
        const ready = endpoint.current;
        return ready && !ready.retired && !ready.closed ? ready : undefined;
      },
      connect: (target) => this.connection(endpoint, target),
      begin: (target, handlers) => this.startOperation(target, handlers),
      end: (context, succeeded) => this.finish(context, succeeded),
      retire: (connection) => this.retire(endpoint, connection),
      closeRetired: (connection) =>
        void this.closeConnection(connection, false),
      toError: (error, context, target) =>
        toGatewayError(this.errorMapping, error, context, target),
      isClosed: () => this.closed,
      timeoutError: (target, timeoutMs, ceiling) =>
        this.timeoutError(target, timeoutMs, ceiling),
    };
  }

  private abortedError(target: string | undefined): GatewayAbortedError {
    return new GatewayAbortedError({
      target,
      message: `The request${target ? ` to target '${target}'` : ''} was cancelled by the caller.`,
    });
  }

  private timeoutError(
    target: string | undefined,
    timeoutMs: number,
    ceiling: boolean,
  ): GatewayTimeoutError {
    const who = target ? `target '${target}'` : 'the gateway';
    return new GatewayTimeoutError({
      target,
      timeoutMs,
      message: ceiling
        ? `The call to ${who} did not finish within ${timeoutMs} ms in all (maxTotalTimeoutMs), progress or not; the request was cancelled.`
        : `No reply from ${who} within ${timeoutMs} ms (option 'timeoutMs'); the request was cancelled.`,
    });
  }

  /**
   * Run one operation (a listing, a call) on `endpoint` under the
   * concurrency cap and the caller's signal. Each request of the operation
   * gets `timeoutMs` (the first one's also covers waiting for a slot and
   * connecting; progress restarts it), the whole operation at most
   * `ceilingMs` when given. `close()` stops it at once.
   */
  private async run<T>(
    endpoint: Endpoint,
    target: string | undefined,
    callerSignal: AbortSignal | undefined,
    ceilingMs: number | undefined,
    handlers: CallHandlers | undefined,
    body: (requester: Requester) => Promise<T>,
  ): Promise<T> {
    if (callerSignal?.aborted) throw this.abortedError(target);
    const operation = new Operation(endpoint.host, target, ceilingMs, handlers);
    const onCallerAbort = () => operation.stop(this.abortedError(target));
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const onClose = () =>
      operation.stop(
        new GatewayClosedError({
          target,
          message:
            'The gateway client was closed while the request was in flight.',
        }),
      );
    this.running.add(onClose);
    let release: (() => void) | undefined;
    try {
      release =
        endpoint.limiter.tryAcquire() ??
        (await endpoint.limiter.acquire(operation.signal));
      return await body(operation);
    } catch (error) {
      if (GatewayError.isInstance(error)) throw error;
      if (operation.reason) throw operation.reason;
      throw toGatewayError(this.errorMapping, error, undefined, target);
    } finally {
      operation.dispose();
      callerSignal?.removeEventListener('abort', onCallerAbort);
      this.running.delete(onClose);
      release?.();
    }
  }

  private connection(
    endpoint: Endpoint,
    target: string | undefined,
  ): Promise<Connection> {
    if (this.closed)
      return Promise.reject(
        new GatewayClosedError({
          target,
          message: 'The gateway client is closed; create a new one.',
        }),
      );
    if (!endpoint.connection) {
      const pending = this.connect(endpoint, target);
      endpoint.connection = pending;
      pending.catch(() => {
        if (endpoint.connection === pending) endpoint.connection = undefined;
      });
    }
    return endpoint.connection;
  }

  private async connect(
    endpoint: Endpoint,
    target: string | undefined,
  ): Promise<Connection> {
    // Not tied to the request that started it: a request that stops waiting
    // (its own timeout, a cancel) leaves the connect going for the next one.
    const deadline = Date.now() + this.connectTimeoutMs;
    try {
      return await this.connectOnce(endpoint, target, endpoint.prior, deadline);
    } catch (error) {
      // A gateway that answers the `server/discover` probe with an error the
      // SDK will not read as "legacy" (a 5xx, for instance) still speaks
      // the 2025 handshake: try that once before giving up.
      if (
        endpoint.prior === undefined &&
        isProbeFailure(error) &&
        !this.closed
      ) {
        return this.connectOnce(endpoint, target, { kind: 'legacy' }, deadline);
      }
      throw error;
    }
  }

  private async connectOnce(
    endpoint: Endpoint,
    target: string | undefined,
    prior: PriorDiscovery | undefined,
    deadline: number,
  ): Promise<Connection> {
    const client = new Client(
      { name: this.clientName, version: VERSION },
      {
        capabilities: this.capabilities(),
        versionNegotiation: { mode: 'auto' },
      },
    );
    client.onerror = () => undefined;
    const binding: TransportBinding = {
      connecting: undefined,
      target: endpoint.target,
      serverRequests: new Map(),
      streamOpened: false,
    };
    this.handleServerMessages(client, binding);
    const transport = new StreamableHTTPClientTransport(endpoint.url, {
      fetch: this.fetch.bind(binding),
      // Resumptions of an operation's reply fail the operation at once in
      // the fetch layer; the retries are for the standalone stream.
      reconnectionOptions: {
        maxRetries: 6,
        initialReconnectionDelay: 250,
        maxReconnectionDelay: 5_000,
        reconnectionDelayGrowFactor: 2,
      },
    });
    const connection: Connection = {
      binding,
      client,
      transport,
      inflight: 0,
      retired: false,
      closed: false,
    };
    const context = this.startOperation(target);
    binding.connecting = context;
    const remaining = Math.max(1, deadline - Date.now());
    const timer = setTimeout(
      () =>
        context.fail(
          new GatewayTimeoutError({
            target,
            timeoutMs: this.connectTimeoutMs,
            message: `Connecting to ${endpoint.key} did not finish within ${this.connectTimeoutMs} ms (option 'connectTimeoutMs').`,
          }),
        ),
      remaining,
    );
    try {
      await client.connect(transport, {
        signal: context.controller.signal,
        timeout: remaining + 1_000,
        ...(prior ? { prior } : {}),
      });
    } catch (error) {
      binding.connecting = undefined;
      this.finish(context, false);
      await client.close().catch(() => undefined);
      if (!context.fault && isProbeFailure(error)) throw error;
      throw toGatewayError(this.errorMapping, error, context, target);
    } finally {
      clearTimeout(timer);
    }
    binding.connecting = undefined;
    this.finish(context, true);
    endpoint.initializations += 1;
    const discover = client.getDiscoverResult();
    endpoint.prior =
      client.getProtocolEra() === 'modern' && discover
        ? { kind: 'modern', discover }
        : { kind: 'legacy' };
    endpoint.current = connection;
    return connection;
  }

  /**
   * The session behind a standalone stream is gone (the gateway restarted,
   * say): start a new session at once, which opens a new stream, and report
   * a list change for the endpoint, since what changed in between is
   * unknown. If the new session cannot be made, the next request tries
   * again.
   */
  private reopenStream(binding: TransportBinding): void {
    if (this.closed) return;
    for (const endpoint of this.endpoints.values()) {
      const connection = endpoint.current;
      if (connection?.binding !== binding) continue;
      this.retire(endpoint, connection);
      if (connection.inflight === 0)
        void this.closeConnection(connection, false);
      const target = endpoint.target === '*' ? undefined : endpoint.target;
      this.connection(endpoint, target).then(
        () => {
          if (!this.closed)
            this.options.onToolsListChanged?.({ target: endpoint.target });
        },
        () => undefined,
      );
    }
  }

  /** The capabilities to declare: only what a handler was given for, or `serverRequests` names. */
  private capabilities(): ClientCapabilities {
    const capabilities: ClientCapabilities = {};
    const kinds = declaredKinds(this.options);
    if (kinds.includes('elicitation')) capabilities.elicitation = { form: {} };
    if (kinds.includes('sampling')) capabilities.sampling = {};
    return capabilities;
  }

  /**
   * Install the handlers of what a server sends the client: list changes,
   * and the server-to-client requests of each declared capability, which
   * go to the handler of the call whose reply carried them, else to the
   * client-wide one, else get Method not found (-32601). Without a declared
   * capability the SDK answers -32601 at once.
   */
  private handleServerMessages(
    client: Client,
    binding: TransportBinding,
  ): void {
    const { onToolsListChanged } = this.options;
    if (onToolsListChanged) {
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        if (!this.closed) onToolsListChanged({ target: binding.target });
      });
    }
    const kinds = declaredKinds(this.options);
    if (kinds.includes('elicitation'))
      client.setRequestHandler(
        'elicitation/create',
        this.answering(binding, 'elicitation', (on) => on.onElicitation),
      );
    if (kinds.includes('sampling'))
      client.setRequestHandler(
        'sampling/createMessage',
        this.answering(binding, 'sampling', (on) => on.onSampling),
      );
  }

  /**
   * The SDK handler of one kind of server request: it goes to the handler
   * (`pick`) of the call whose reply carried it, else to the client-wide
   * one, else gets -32601. The handler gets the call's target, and a
   * signal that also aborts when the server cancels the request, the call
   * stops or the client closes.
   */
  private answering<P, R>(
    binding: TransportBinding,
    kind: ServerRequestKind,
    pick: (
      handlers: CallHandlers,
    ) =>
      | ((
          request: ServerRequestFrom<P>,
          extra: ServerRequestExtra,
        ) => Promise<R>)
      | undefined,
  ) {
    return (
      request: { params: P },
      context: { mcpReq: { id: string | number; signal: AbortSignal } },
    ): Promise<R> => {
      const noted = takeOrigin(binding, context.mcpReq.id);
      const target = noted?.target ?? binding.target;
      const handler =
        (noted?.handlers === undefined ? undefined : pick(noted.handlers)) ??
        pick(this.options);
      if (handler === undefined) throw unanswered(kind, target);
      const signals = [context.mcpReq.signal, this.closing.signal];
      if (noted?.signal) signals.push(noted.signal);
      // The server waits for this answer: the call's timer waits with it.
      const release = noted?.hold?.();
      const answer = handler(
        { target, params: request.params },
        { signal: AbortSignal.any(signals) },
      );
      return release === undefined ? answer : answer.finally(release);
    };
  }

  /**
   * The operation is over: stop attributing faults, and abort what is left
   * of it. After a success with every reply read to its end nothing is left
   * (aborting anyway costs a signal dispatch into undici per call). An SSE
   * reply is normally read to its end a moment after the response was
   * taken from it (keeping the keep-alive connection reusable), so an open
   * one gets a short grace period before being cut.
   */
  private finish(context: CallContext, succeeded: boolean): void {
    context.settled = true;
    this.operations.delete(context.id);
    this.fetch.forget(context);
    if (context.openStreams === 0) {
      if (!succeeded) context.controller.abort(SETTLED);
      return;
    }
    setTimeout(() => {
      if (context.openStreams > 0) context.controller.abort(SETTLED);
    }, STREAM_GRACE_MS).unref();
  }

  /** A new operation context, registered so the fetch layer can find it by id. */
  private startOperation(
    target: string | undefined,
    handlers?: CallHandlers,
  ): CallContext {
    this.operationCounter += 1;
    const context = createCallContext(
      target,
      String(this.operationCounter),
      handlers,
    );
    this.operations.set(context.id, context);
    return context;
  }

  private retire(endpoint: Endpoint, connection: Connection): void {
    connection.retired = true;
    if (endpoint.current === connection) {
      endpoint.current = undefined;
      endpoint.connection = undefined;
    }
  }

  private async closeConnection(
    connection: Connection,
    endSession: boolean,
  ): Promise<void> {
    if (connection.closed) return;
    connection.closed = true;
    this.fetch.release(connection.binding);
    if (endSession && connection.transport.sessionId !== undefined) {
      await connection.transport.terminateSession().catch(() => undefined);
    }
    await connection.client.close().catch(() => undefined);
  }
}

/** The SDK could not read the `server/discover` probe's answer as an era verdict. */
function isProbeFailure(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed
  );
}

/** The method of each server-to-client request kind. */
const SERVER_REQUEST_METHODS = {
  elicitation: 'elicitation/create',
  sampling: 'sampling/createMessage',
} as const satisfies Record<ServerRequestKind, string>;

/** The server-to-client requests a client with `options` declares it answers. */
function declaredKinds(options: GatewayClientOptions): ServerRequestKind[] {
  const kinds = new Set(options.serverRequests ?? []);
  if (options.onElicitation) kinds.add('elicitation');
  if (options.onSampling) kinds.add('sampling');
  return [...kinds];
}

/** The answer to a server request that no handler answers. */
function unanswered(kind: ServerRequestKind, target: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `No ${kind} handler for this request from target '${target}': the call that carried it was made without one, and the client has none of its own.`,
  );
}

/** What is wrong with the optional parts of {@link CallToolOptions}, if anything. */
function callOptionProblem(
  options: CallToolOptions,
  declared: ReadonlyArray<ServerRequestKind>,
): { setting: string; problem: string } | undefined {
  const { onProgress, task, role } = options;
  if (role !== undefined && (typeof role !== 'string' || role.length === 0))
    return { setting: 'role', problem: 'must be a non-empty string' };
  for (const [setting, handler] of [
    ['onProgress', onProgress],
    ['onElicitation', options.onElicitation],
    ['onSampling', options.onSampling],
  ] as const) {
    if (handler !== undefined && typeof handler !== 'function')
      return { setting, problem: 'must be a function' };
  }
  for (const [kind, handler] of [
    ['elicitation', options.onElicitation],
    ['sampling', options.onSampling],
  ] as const) {
    if (handler !== undefined && !declared.includes(kind))
      return {
        setting: kind === 'elicitation' ? 'onElicitation' : 'onSampling',
        problem: `the client does not declare the ${kind} capability, so no server would ask; create the GatewayClient with serverRequests: ['${kind}'] (or a client-wide handler)`,
      };
  }
  if (task === undefined || typeof task === 'boolean') return undefined;
  if (typeof task !== 'object' || task === null)
    return {
      setting: 'task',
      problem: 'must be true, false or { ttlMs?: number }',
    };
  if (
    task.ttlMs !== undefined &&
    (!Number.isInteger(task.ttlMs) || task.ttlMs <= 0)
  )
    return {
      setting: 'task.ttlMs',
      problem: 'must be a positive whole number of milliseconds',
    };
  return undefined;
}

/** How {@link CallToolOptions.task} reads. */
function taskOptions(task: CallToolOptions['task']): TaskOptions | undefined {
  if (task === undefined || task === false) return undefined;
  if (task === true) return {};
  return task.ttlMs === undefined ? {} : { ttlMs: task.ttlMs };
}

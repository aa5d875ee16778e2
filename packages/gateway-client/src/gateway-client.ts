import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type PriorDiscovery,
  type RequestOptions,
  type Tool,
} from '@modelcontextprotocol/client';
import { Agent } from 'undici';
import {
  DEFAULT_MAX_CONCURRENT_PER_ENDPOINT,
  DEFAULT_MAX_LIST_PAGES,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  parseGatewayClientOptions,
  type GatewayClientOptions,
  type GatewayMode,
} from './config.js';
import {
  GatewayAbortedError,
  GatewayClosedError,
  GatewayConfigError,
  GatewayCursorLoopError,
  GatewayError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayJsonRpcError,
  GatewayMalformedResponseError,
  GatewayNegotiationError,
  GatewaySessionLostError,
  GatewayTimeoutError,
  GatewayConnectionError,
} from './errors.js';
import {
  createCallContext,
  createGatewayFetch,
  parseJsonRpcError,
  scrubValue,
  type CallContext,
  type TransportBinding,
} from './http-layer.js';
import { Limiter } from './limiter.js';
import { splitMultiplexedName, validateTargetName } from './target-name.js';
import { VERSION } from './version.js';

/** A tool as listed by a target: the SDK's `Tool` shape (name, description, inputSchema, annotations ...). */
export type McpTool = Tool;

/** The result of `tools/call`, as the SDK types it. */
export type { CallToolResult };

/** Options of {@link GatewayClient.listTools}. */
export type ListToolsOptions = {
  /** The target (backend) whose tools to list. */
  target: string;
  /** Cancels the listing; the client sends `notifications/cancelled`. */
  signal?: AbortSignal | undefined;
};

/** Options of {@link GatewayClient.callTool}. */
export type CallToolOptions = {
  /** The target (backend) that owns the tool. */
  target: string;
  /** The bare tool name (without the `<target>_` prefix, in both modes). */
  tool: string;
  /** Tool arguments. */
  arguments: Record<string, unknown>;
  /** Cancels the call; the client sends `notifications/cancelled`. */
  signal?: AbortSignal | undefined;
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
  limiter: Limiter;
  connection: Promise<Connection> | undefined;
  current: Connection | undefined;
  prior: PriorDiscovery | undefined;
  initializations: number;
};

const NO_SCRUB = (text: string) => text;

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
 * One session per endpoint, initialized once; a lost session is
 * re-initialized once. Every failure is a {@link GatewayError}.
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
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
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
  /** SDK timeout of one request: past the client's own deadline, which fires first. */
  private readonly sdkTimeoutMs: number;
  private closed = false;

  constructor(options: GatewayClientOptions) {
    const parsed = parseGatewayClientOptions(options);
    this.mode = parsed.mode;
    this.baseUrl = parsed.url.replace(/\/+$/, '');
    this.timeoutMs = parsed.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
    this.sdkTimeoutMs = this.timeoutMs + 1_000;
    this.fetch = createGatewayFetch({
      operations: this.operations,
      agent: this.agent,
      role: parsed.role,
      token,
      maxResponseBytes: parsed.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      backgroundTimeoutMs: this.timeoutMs,
      scrub: this.scrub,
    });
  }

  /**
   * List every tool of `target`, following `nextCursor` to the end (a
   * repeated cursor or more than `maxListPages` pages is a `CURSOR_LOOP`
   * error). Names are bare in both modes. In multiplexed mode `/mcp` is
   * listed once (concurrent callers share one listing) and the tools whose
   * name starts with `<target>_` are returned with the prefix removed.
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
      this.endpoint(`${this.baseUrl}/mcp/${target}`),
      target,
      options.signal,
      (connection, requestOptions) =>
        this.walkPages(connection, requestOptions, target),
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
        this.endpoint(`${this.baseUrl}/mcp`),
        undefined,
        undefined,
        async (connection, requestOptions) => {
          const tools = await this.walkPages(
            connection,
            requestOptions,
            undefined,
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
   * other failure throws a {@link GatewayError}.
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
    const multiplexed = this.mode === 'multiplexed';
    const url = multiplexed
      ? `${this.baseUrl}/mcp`
      : `${this.baseUrl}/mcp/${target}`;
    const name = multiplexed ? `${target}_${options.tool}` : options.tool;
    return this.run(
      this.endpoint(url),
      target,
      options.signal,
      (connection, requestOptions) =>
        connection.client.callTool(
          { name, arguments: options.arguments ?? {} },
          requestOptions,
        ) as Promise<CallToolResult>,
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
    };
  }

  /**
   * End every session (HTTP DELETE; a 405 is fine) and close the connection
   * pool. Requests still in flight fail with `CLIENT_CLOSED`. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const endpoints = [...this.endpoints.values()];
    this.endpoints.clear();
    await Promise.all(
      endpoints.map(async (endpoint) => {
        const connection = await endpoint.connection?.catch(() => undefined);
        if (connection) await this.closeConnection(connection, true);
      }),
    );
    // Requests still in flight were rejected by the SDK clients' close
    // (CLIENT_CLOSED); their sockets end with the pool.
    await this.agent.destroy().catch(() => undefined);
    for (const context of this.operations.values())
      context.controller.abort(SETTLED);
    this.operations.clear();
  }

  // ---------------------------------------------------------------- internals

  private endpoint(url: string): Endpoint {
    if (this.closed)
      throw new GatewayClosedError({
        message: 'The gateway client is closed; create a new one.',
      });
    let endpoint = this.endpoints.get(url);
    if (!endpoint) {
      endpoint = {
        url: new URL(url),
        key: url,
        limiter: new Limiter(this.maxConcurrent),
        connection: undefined,
        current: undefined,
        prior: undefined,
        initializations: 0,
      };
      this.endpoints.set(url, endpoint);
    }
    return endpoint;
  }

  private abortedError(target: string | undefined): GatewayAbortedError {
    return new GatewayAbortedError({
      target,
      message: `The request${target ? ` to target '${target}'` : ''} was cancelled by the caller.`,
    });
  }

  /**
   * Run `operation` on the endpoint's connection under the concurrency cap,
   * one deadline (`timeoutMs`) and the caller's signal; re-initialize once
   * when the session is gone.
   */
  private async run<T>(
    endpoint: Endpoint,
    target: string | undefined,
    callerSignal: AbortSignal | undefined,
    operation: (
      connection: Connection,
      requestOptions: RequestOptions,
    ) => Promise<T>,
  ): Promise<T> {
    if (callerSignal?.aborted) throw this.abortedError(target);
    // Operation state without an AbortController of its own on the fast path:
    // the timer and the caller's signal stop the current attempt directly,
    // and a controller is only made when the operation has to wait.
    const state: {
      reason: GatewayError | undefined;
      context: CallContext | undefined;
      waiting: AbortController | undefined;
    } = {
      reason: undefined,
      context: undefined,
      waiting: undefined,
    };
    const stop = (reason: GatewayError) => {
      if (state.reason) return;
      state.reason = reason;
      state.context?.fail(reason);
      state.waiting?.abort(reason);
    };
    const waitSignal = () => {
      state.waiting ??= new AbortController();
      if (state.reason) state.waiting.abort(state.reason);
      return state.waiting.signal;
    };
    // The error is built only when the timer fires: building one per call costs a stack capture.
    const timer = setTimeout(
      () =>
        stop(
          new GatewayTimeoutError({
            target,
            timeoutMs: this.timeoutMs,
            message: `No reply from ${target ? `target '${target}'` : 'the gateway'} within ${this.timeoutMs} ms (option 'timeoutMs'); the request was cancelled.`,
          }),
        ),
      this.timeoutMs,
    );
    const onCallerAbort = () => stop(this.abortedError(target));
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    let release: (() => void) | undefined;
    try {
      release =
        endpoint.limiter.tryAcquire() ??
        (await endpoint.limiter.acquire(waitSignal()));
      for (let attempt = 0; ; attempt += 1) {
        if (state.reason) throw state.reason;
        const ready = endpoint.current;
        const connection =
          ready && !ready.retired && !ready.closed
            ? ready
            : await raceSignal(
                this.connection(endpoint, target),
                waitSignal(),
                () => state.reason,
              );
        const context = this.startOperation(target);
        state.context = context;
        if (state.reason) context.fail(state.reason);
        connection.inflight += 1;
        let succeeded = false;
        try {
          const result = await operation(connection, {
            signal: context.controller.signal,
            timeout: this.sdkTimeoutMs,
            headers: context.headers,
          });
          succeeded = true;
          return result;
        } catch (error) {
          const typed = this.toGatewayError(error, context, target);
          if (context.sessionRejected && !this.closed) {
            this.retire(endpoint, connection);
            if (attempt === 0) continue;
            throw new GatewaySessionLostError({
              target,
              message: `The session with ${endpoint.key} was lost again right after a fresh initialize (HTTP ${(typed as GatewayHttpError).status ?? '?'}); the gateway or backend is dropping sessions.`,
              cause: typed,
            });
          }
          throw typed;
        } finally {
          state.context = undefined;
          this.finish(context, succeeded);
          connection.inflight -= 1;
          if (connection.retired && connection.inflight === 0)
            void this.closeConnection(connection, false);
        }
      }
    } catch (error) {
      if (GatewayError.isInstance(error)) throw error;
      throw this.toGatewayError(error, undefined, target);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
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
    const deadline = Date.now() + this.timeoutMs;
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
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    client.onerror = () => undefined;
    const binding: TransportBinding = { connecting: undefined };
    const transport = new StreamableHTTPClientTransport(endpoint.url, {
      fetch: this.fetch.bind(binding),
      reconnectionOptions: {
        maxRetries: 2,
        initialReconnectionDelay: 250,
        maxReconnectionDelay: 2_000,
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
            timeoutMs: this.timeoutMs,
            message: `Connecting to ${endpoint.key} did not finish within ${this.timeoutMs} ms (option 'timeoutMs').`,
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
      throw this.toGatewayError(error, context, target);
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
  private startOperation(target: string | undefined): CallContext {
    this.operationCounter += 1;
    const context = createCallContext(target, String(this.operationCounter));
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
    if (endSession && connection.transport.sessionId !== undefined) {
      await connection.transport.terminateSession().catch(() => undefined);
    }
    await connection.client.close().catch(() => undefined);
  }

  private async walkPages(
    connection: Connection,
    requestOptions: RequestOptions,
    target: string | undefined,
  ): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 1; ; pages += 1) {
      const page = await connection.client.request(
        {
          method: 'tools/list',
          params: cursor === undefined ? {} : { cursor },
        },
        requestOptions,
      );
      tools.push(...(page.tools as McpTool[]));
      const next = page.nextCursor;
      if (next === undefined || next === null) return tools;
      if (seen.has(next) || next === cursor) {
        throw new GatewayCursorLoopError({
          target,
          pages,
          message: `tools/list${target ? ` of target '${target}'` : ''} returned cursor ${JSON.stringify(next.slice(0, 80))} a second time after ${pages} pages; the server's pagination loops.`,
        });
      }
      if (pages >= this.maxListPages) {
        throw new GatewayCursorLoopError({
          target,
          pages,
          message: `tools/list${target ? ` of target '${target}'` : ''} still had a nextCursor after ${pages} pages (maxListPages); the server's pagination does not end.`,
        });
      }
      seen.add(next);
      cursor = next;
    }
  }

  /** Map anything thrown below to a typed, token-free {@link GatewayError}. */
  private toGatewayError(
    error: unknown,
    context: CallContext | undefined,
    target: string | undefined,
  ): GatewayError {
    if (
      this.closed &&
      context?.fault?.code !== GatewayErrorCode.Timeout &&
      context?.fault?.code !== GatewayErrorCode.Aborted
    ) {
      return new GatewayClosedError({
        target,
        message:
          'The gateway client was closed while the request was in flight.',
        cause: this.scrubCause(context?.fault ?? error),
      });
    }
    if (context?.fault) return context.fault;
    if (GatewayError.isInstance(error)) return error;
    const cause = this.scrubCause(error);
    if (error instanceof ProtocolError) {
      return new GatewayJsonRpcError({
        target,
        jsonRpcCode: error.code,
        data: scrubValue(error.data, this.scrub),
        message: this.scrub(
          `${target ? `Target '${target}'` : 'The gateway'} answered with JSON-RPC error ${error.code}: ${error.message}`,
        ),
        cause,
      });
    }
    if (error instanceof SdkHttpError) {
      const text = typeof error.data.text === 'string' ? error.data.text : '';
      return new GatewayHttpError({
        target,
        status: error.status,
        jsonRpcError: scrubValue(parseJsonRpcError(text), this.scrub),
        message: this.scrub(
          `The gateway answered HTTP ${error.status}: ${text.slice(0, 300) || error.message}`,
        ),
        cause,
      });
    }
    if (error instanceof SdkError) {
      switch (error.code) {
        case SdkErrorCode.RequestTimeout:
          return new GatewayTimeoutError({
            target,
            timeoutMs: this.timeoutMs,
            message: this.scrub(`The request timed out: ${error.message}`),
            cause,
          });
        case SdkErrorCode.ConnectionClosed:
          return new GatewayConnectionError({
            code: GatewayErrorCode.ConnectionReset,
            target,
            message:
              'The connection to the gateway closed before the reply arrived.',
            cause,
          });
        case SdkErrorCode.InvalidResult:
          return new GatewayMalformedResponseError({
            code: GatewayErrorCode.InvalidResult,
            target,
            message: this.scrub(
              `The reply is not a valid result: ${error.message}`,
            ),
            cause,
          });
        case SdkErrorCode.ClientHttpUnexpectedContent:
          return new GatewayMalformedResponseError({
            code: GatewayErrorCode.UnexpectedContentType,
            target,
            message: this.scrub(error.message),
            cause,
          });
        case SdkErrorCode.ListPaginationExceeded:
          return new GatewayCursorLoopError({
            target,
            pages: 0,
            message: this.scrub(error.message),
            cause,
          });
        case SdkErrorCode.EraNegotiationFailed:
          return new GatewayNegotiationError({
            target,
            message: this.scrub(
              `No protocol revision could be agreed: ${error.message}`,
            ),
            cause,
          });
        default:
          break;
      }
    }
    const message = error instanceof Error ? error.message : String(error);
    return new GatewayError({
      code: GatewayErrorCode.Unknown,
      target,
      message: this.scrub(
        `Unexpected failure talking to the gateway: ${message}`,
      ),
      cause,
    });
  }

  /** The original error, or a token-free copy of it when its text mentions the token. */
  private scrubCause(error: unknown): unknown {
    if (this.scrub === NO_SCRUB || !(error instanceof Error)) return error;
    let text = `${error.message}\n${error.stack ?? ''}`;
    try {
      text += JSON.stringify(error);
    } catch {
      // circular: the message and stack were checked
    }
    if (this.scrub(text) === text) return error;
    const copy = new Error(this.scrub(error.message));
    copy.name = error.name;
    copy.stack = this.scrub(error.stack ?? '');
    return copy;
  }
}

/** The SDK could not read the `server/discover` probe's answer as an era verdict. */
function isProbeFailure(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed
  );
}

function raceSignal<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

import {
  isInputRequiredResult,
  type CallToolRequest,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/client';
import { multiplexedName, splitMultiplexedName } from '@heretek/internal';
import {
  DEFAULTS,
  SERVER_REQUEST_KINDS,
  SERVER_REQUESTS,
  checkCallOptions,
  parseGatewayClientOptions,
  type CallHandlers,
  type GatewayClientOptions,
  type GatewayMode,
} from './config.js';
import { Endpoint, type EndpointSettings } from './endpoint.js';
import {
  GatewayAbortedError,
  GatewayClosedError,
  GatewayConfigError,
  GatewayError,
  GatewayProtocolError,
} from './errors.js';
import { GatewayFetch } from './http-layer.js';
import { NO_SCRUB, toGatewayError } from './error-mapping.js';
import { Operation, raceSignal } from './operation.js';
import { walkPages, type McpTool } from './listing.js';
import { callAsTask } from './tasks.js';
import { validateTargetName } from './target-name.js';

export type { McpTool };

export type { CallToolResult };

/** Most `input_required` rounds of one call, as the SDK's own driver allows. */
const MAX_INPUT_ROUNDS = 10;

/**
 * `tools/call`, answering each `input_required` result (2026-07-28) with the
 * call's handlers and sending the call again with the answers and the
 * server's `requestState`. The SDK's client can run these rounds itself, but
 * only with the handlers of the whole client, which cannot tell which call asked.
 */
async function callInRounds(
  requester: Operation,
  call: CallToolRequest['params'],
  onprogress: ((progress: Progress) => void) | undefined,
): Promise<CallToolResult> {
  let params: CallToolRequest['params'] & {
    inputResponses?: Record<string, unknown>;
    requestState?: string;
  } = call;
  for (let round = 0; ; round += 1) {
    const result = await requester.request(
      'during tools/call',
      (client, requestOptions) =>
        client.callTool(params, {
          ...requestOptions,
          allowInputRequired: true,
        }),
      { onprogress },
    );
    if (!isInputRequiredResult(result)) return result;
    if (round === MAX_INPUT_ROUNDS)
      throw new GatewayProtocolError({
        target: requester.plan.target,
        message: `tools/call '${call.name}' still asked for input after ${MAX_INPUT_ROUNDS} rounds; the backend's input rounds do not end.`,
      });
    const inputResponses = await requester.answerInputs(
      result.inputRequests ?? {},
    );
    params = { ...call, inputResponses, requestState: result.requestState };
  }
}

/** Options of {@link GatewayClient.listTools}. */
export type ListToolsOptions = {
  target: string;
  /** Cancels the listing; the client sends `notifications/cancelled`. */
  signal?: AbortSignal | undefined;
};

/** A progress notification of a call, as the backend sent it. */
export type CallProgress = {
  progress: number;
  total?: number;
  message?: string;
};

/** Options of {@link GatewayClient.callTool}. */
export type CallToolOptions = CallHandlers & {
  target: string;
  /** The bare tool name (without the `<target>_` prefix, in both modes). */
  tool: string;
  arguments: Record<string, unknown>;
  /** Cancels the call (`notifications/cancelled`, or `tasks/cancel` for a task). */
  signal?: AbortSignal | undefined;
  /** Receives each `notifications/progress` of the call; each restarts the request's `timeoutMs`. */
  onProgress?: ((progress: CallProgress) => void) | undefined;
  /**
   * Ceiling of the whole call in milliseconds, progress, answers to the
   * backend's requests and a task's wait included (default 10 x `timeoutMs`).
   */
  maxTotalTimeoutMs?: number | undefined;
  /**
   * Call task-augmented (MCP 2025-11-25 tasks), for tools whose
   * `execution.taskSupport` is `required`; `{ ttlMs }` asks for a time-to-live.
   */
  task?: boolean | { ttlMs?: number | undefined } | undefined;
  /** This call's `x-heretek-role`, instead of the client's `role` (the session stays shared). */
  role?: string | undefined;
};

/** What the client knows about one endpoint, for diagnostics and tests. */
export type EndpointInfo = {
  url: string;
  protocolVersion: string | undefined;
  /** `legacy` (initialize + sessions) or `modern` (2026-07-28, stateless). */
  era: 'legacy' | 'modern' | undefined;
  sessionId: string | undefined;
  /** How many times this endpoint was initialized (1 + re-initializations). */
  initializations: number;
  /** The session holds a standalone stream (open or being reopened): its list changes are pushed. */
  streaming: boolean;
};

/**
 * An MCP client for one agentgateway URL that lists and calls the tools of
 * any target, in `per-target` (`<url>/mcp/<target>`, bare names) or
 * `multiplexed` (`<url>/mcp`, `<target>_<tool>`) mode. One session per
 * endpoint; a session the gateway rejects is re-initialized, at most once
 * per request. Every failure is a {@link GatewayError} (the package README
 * shows its use).
 */
export class GatewayClient {
  readonly mode: GatewayMode;
  private readonly baseUrl: string;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly settings: EndpointSettings;
  private multiplexedListing: Promise<Map<string, McpTool[]>> | undefined;
  /** The operations in flight (`close()` stops them). */
  private readonly running = new Set<Operation>();
  /** Aborted by `close()`: ends server-to-client request handlers. */
  private readonly closing = new AbortController();

  constructor(options: GatewayClientOptions) {
    const parsed = parseGatewayClientOptions(options);
    this.mode = parsed.mode;
    this.baseUrl = parsed.url.replace(/\/+$/, '');
    const timeoutMs = parsed.timeoutMs ?? DEFAULTS.timeoutMs;
    const token = parsed.token;
    const scrub =
      token === undefined
        ? NO_SCRUB
        : (text: string) => text.split(token).join('[redacted]');
    // Only what a handler was given for, or `serverRequests` names.
    const kinds = SERVER_REQUEST_KINDS.filter(
      (kind) =>
        parsed[SERVER_REQUESTS[kind].handler] ||
        parsed.serverRequests?.includes(kind),
    );
    this.settings = {
      options: parsed,
      capabilities: Object.fromEntries(
        kinds.map((kind) => [kind, SERVER_REQUESTS[kind].capability]),
      ),
      kinds,
      scrub,
      timeoutMs,
      closing: this.closing.signal,
      fetch: new GatewayFetch({
        connectTimeoutMs: timeoutMs,
        authorization: token === undefined ? undefined : `Bearer ${token}`,
        maxResponseBytes: parsed.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
        backgroundTimeoutMs: timeoutMs,
        // No stream when nobody listens for what the server sends outside a request.
        maxStandaloneStreams:
          parsed.onToolsListChanged === undefined && parsed.onLog === undefined
            ? 0
            : (parsed.maxStandaloneStreams ?? Number.POSITIVE_INFINITY),
      }),
    };
  }

  /**
   * List every tool of `target` (every page; bare names in both modes). In
   * multiplexed mode `/mcp` is listed once for concurrent callers and the
   * tools named `<target>_...` are returned.
   */
  async listTools(options: ListToolsOptions): Promise<McpTool[]> {
    const target = validateTargetName(options.target);
    if (this.mode === 'multiplexed') {
      const all = await this.multiplexedTools(options.signal, target);
      return all.get(target) ?? [];
    }
    return this.run(
      this.endpoint(target),
      { target, signal: options.signal },
      walkPages,
    );
  }

  /** Multiplexed mode only: the tools of `/mcp` by target (bare names); names that do not split are left out, or kept under `''`. */
  async listAllTools(
    options: {
      signal?: AbortSignal | undefined;
      includeUnprefixed?: boolean;
    } = {},
  ): Promise<Map<string, McpTool[]>> {
    if (this.mode !== 'multiplexed')
      throw new GatewayConfigError({
        setting: 'mode',
        message:
          "listAllTools needs mode 'multiplexed' (option 'mode'); in per-target mode list each target with listTools({ target }).",
      });
    const all = new Map(await this.multiplexedTools(options.signal));
    if (!options.includeUnprefixed) all.delete('');
    return all;
  }

  /** The tools of `/mcp` by target, from the one listing in flight (`target`: whom an abort names). */
  private multiplexedTools(
    signal: AbortSignal | undefined,
    target?: string,
  ): Promise<Map<string, McpTool[]>> {
    if (!this.multiplexedListing) {
      const listing = this.run(
        this.endpoint('*'),
        { target: undefined },
        async (requester) => {
          const tools = await walkPages(requester);
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
    return raceSignal(this.multiplexedListing, signal, () =>
      this.abortedError(target),
    );
  }

  /**
   * Call `tool` of `target`. A result with `isError: true` is returned, not
   * thrown; every other failure throws a {@link GatewayError}.
   */
  async callTool(options: CallToolOptions): Promise<CallToolResult> {
    const target = validateTargetName(options.target);
    checkCallOptions(options, target, this.settings.kinds);
    const call = {
      name:
        this.mode === 'multiplexed'
          ? multiplexedName(target, options.tool)
          : options.tool,
      arguments: options.arguments ?? {},
    };
    const { onProgress, task } = options;
    const onprogress = onProgress
      ? (progress: Progress) => {
          const passed: CallProgress = { progress: progress.progress };
          if (progress.total !== undefined) passed.total = progress.total;
          if (progress.message !== undefined) passed.message = progress.message;
          onProgress(passed);
        }
      : undefined;
    const ceilingMs = options.maxTotalTimeoutMs ?? this.settings.timeoutMs * 10;
    return this.run(
      this.endpoint(target),
      // Its signal and role; its onElicitation and onSampling as handlers.
      { ...options, target, ceilingMs, handlers: options },
      (requester) =>
        task
          ? callAsTask(requester, {
              ...call,
              ttlMs: task === true ? undefined : task.ttlMs,
              onprogress,
            })
          : callInRounds(requester, call, onprogress),
    );
  }

  /** What the client knows about the endpoint of `target` (undefined before first use). */
  endpointInfo(options: { target?: string }): EndpointInfo | undefined {
    const url = this.urlOf(options.target);
    const endpoint = this.endpoints.get(url);
    if (!endpoint) return undefined;
    const session = endpoint.current;
    return {
      url,
      protocolVersion: session?.client.getNegotiatedProtocolVersion(),
      era: session?.client.getProtocolEra(),
      sessionId: session?.transport.sessionId,
      initializations: endpoint.initializations,
      streaming: session?.stream.slot === true,
    };
  }

  /**
   * Stop everything in flight at once (`CLIENT_CLOSED`; the server is told
   * `notifications/cancelled`), end every session (DELETE) and close the
   * connections. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    for (const operation of this.running)
      operation.stop(
        new GatewayClosedError({
          target: operation.plan.target,
          message:
            'The gateway client was closed while the request was in flight.',
        }),
      );
    this.running.clear();
    // Connects in progress too: close() does not wait for a silent server.
    const endpoints = [...this.endpoints.values()];
    this.endpoints.clear();
    await Promise.all(endpoints.map((endpoint) => endpoint.close()));
    await this.settings.fetch.close();
  }

  /** The URL of the endpoint of `target` (`<url>/mcp` for every target in multiplexed mode). */
  private urlOf(target: string | undefined): string {
    return this.mode === 'multiplexed' || target === undefined
      ? `${this.baseUrl}/mcp`
      : `${this.baseUrl}/mcp/${target}`;
  }

  /** The endpoint of `target` (`*`: the multiplexed endpoint). */
  private endpoint(target: string): Endpoint {
    const url = this.urlOf(target);
    if (this.closing.signal.aborted)
      throw new GatewayClosedError({
        message: 'The gateway client is closed; create a new one.',
      });
    const endpoint =
      this.endpoints.get(url) ??
      new Endpoint(
        url,
        this.mode === 'multiplexed' ? '*' : target,
        this.settings,
      );
    this.endpoints.set(url, endpoint);
    return endpoint;
  }

  private abortedError(target: string | undefined): GatewayAbortedError {
    return new GatewayAbortedError({
      target,
      message: `The request${target ? ` to target '${target}'` : ''} was cancelled by the caller.`,
    });
  }

  /**
   * Run one operation on `endpoint` under the concurrency cap and the
   * caller's signal; its first request's `timeoutMs` also covers waiting for
   * a slot and connecting.
   */
  private async run<T>(
    endpoint: Endpoint,
    call: {
      target: string | undefined;
      signal?: AbortSignal | undefined;
      ceilingMs?: number | undefined;
      handlers?: CallHandlers | undefined;
      role?: string | undefined;
    },
    body: (operation: Operation) => Promise<T>,
  ): Promise<T> {
    const { target, signal } = call;
    if (signal?.aborted) throw this.abortedError(target);
    const operation = new Operation({
      endpoint,
      target,
      role: call.role ?? this.settings.options.role,
      ceilingMs: call.ceilingMs,
      handlers: call.handlers,
    });
    const onCallerAbort = () => operation.stop(this.abortedError(target));
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    this.running.add(operation);
    let release: (() => void) | undefined;
    try {
      release =
        endpoint.limiter.tryAcquire() ??
        (await endpoint.limiter.acquire(operation.signal));
      return await body(operation);
    } catch (error) {
      if (GatewayError.isInstance(error)) throw error;
      if (operation.reason) throw operation.reason;
      throw toGatewayError(this.settings, error, { target });
    } finally {
      operation.dispose();
      signal?.removeEventListener('abort', onCallerAbort);
      this.running.delete(operation);
      release?.();
    }
  }
}

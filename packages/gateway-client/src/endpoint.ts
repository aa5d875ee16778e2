import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type ClientCapabilities,
  type JSONRPCMessage,
  type PriorDiscovery,
  type RequestId,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import {
  DEFAULTS,
  type CallHandlers,
  type GatewayClientOptions,
  type ServerRequestKind,
} from './config.js';
import {
  GatewayClosedError,
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayProtocolError,
  GatewayTimeoutError,
} from './errors.js';
import { toGatewayError, type ErrorMapping } from './error-mapping.js';
import {
  FetchOwner,
  type GatewayFetch,
  type StandaloneStream,
} from './http-layer.js';
import { Limiter } from './limiter.js';
import { VERSION } from './version.js';

/** What every endpoint of one client shares, given at construction. */
export type EndpointSettings = ErrorMapping & {
  options: GatewayClientOptions;
  capabilities: ClientCapabilities;
  /** The server requests the client declares it answers. */
  kinds: ReadonlyArray<ServerRequestKind>;
  fetch: GatewayFetch;
};

/** One session: an SDK client on the endpoint, initialized once. */
export type Session = {
  client: Client;
  transport: StreamableHTTPClientTransport;
  stream: StandaloneStream;
  /** How the session was negotiated, for the clients of its requests. */
  prior: PriorDiscovery;
  /** Requests on it right now. */
  inflight: number;
  /** The last request id given out on it (its own client sent `initialize` as 0). */
  requests: number;
  /** The gateway rejected it: no new request goes out on it. */
  retired: boolean;
  closed: boolean;
};

/** Who makes one request: the call's target, role and handlers, and how to hold its timer. */
export type RequestScope = {
  target: string | undefined;
  role: string;
  handlers?: CallHandlers | undefined;
  /** Stops the call's per-request timer while a server request is answered; returns the release. */
  hold?: (() => () => void) | undefined;
};

/** One request on a session: its own SDK client and transport, whose fetch reports to `owner`. */
export type Exchange = {
  owner: FetchOwner;
  client: Client;
  /** The request is over: close what is left of it (an open reply after a short grace). */
  finish(succeeded: boolean): void;
};

/** How long an SSE reply may stay open after its response arrived. */
const STREAM_GRACE_MS = 1_000;

const RECONNECTION = {
  maxRetries: 6,
  initialReconnectionDelay: 250,
  maxReconnectionDelay: 5_000,
  reconnectionDelayGrowFactor: 2,
};

/** The method of each server-to-client request kind. */
const SERVER_REQUEST_METHODS = {
  elicitation: 'elicitation/create',
  sampling: 'sampling/createMessage',
} as const satisfies Record<ServerRequestKind, string>;

/**
 * The transport of one request. Its SDK client numbers requests from 0,
 * so the request goes out under the next id of the session (and its
 * progress token and cancellation with it), and comes back under the
 * client's own. The SDK reports a reply stream that ends without the
 * response, a response to another id and an unreadable message only as
 * events of the transport: here they are the owner's fault at once,
 * instead of a wait for the timeout.
 */
class ExchangeTransport extends StreamableHTTPClientTransport {
  /** The request's id in its client, and on the wire. */
  #local: RequestId | undefined;
  #wire: number | undefined;
  #answered = false;
  readonly #ended: () => void;

  constructor(
    url: URL,
    private readonly session: Session,
    owner: FetchOwner,
    settings: EndpointSettings,
  ) {
    super(url, {
      fetch: settings.fetch.fetchFor(owner),
      reconnectionOptions: RECONNECTION,
      // An empty id: a server without sessions, already initialized (no header is sent for it).
      sessionId: session.transport.sessionId ?? '',
      ...(session.transport.protocolVersion === undefined
        ? {}
        : { protocolVersion: session.transport.protocolVersion }),
    });
    // Set before connect: the SDK's client calls these first.
    this.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCNotification(message)) {
        const params = message.params as
          { progressToken?: unknown } | undefined;
        if (
          params &&
          this.#wire !== undefined &&
          params.progressToken === this.#wire
        )
          params.progressToken = this.#local;
        return;
      }
      if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message))
        return;
      if (message.id === this.#wire && this.#local !== undefined) {
        this.#answered = true;
        message.id = this.#local;
        return;
      }
      owner.fail(
        new GatewayProtocolError({
          target: owner.target,
          message: `The gateway answered request id ${JSON.stringify(this.#wire)} with a response for id ${JSON.stringify(message.id)}; the reply is discarded.`,
        }),
      );
    };
    this.onerror = (error: Error) => {
      // A POST's error status rejects the request itself (it may be retried in a new session).
      if (
        error instanceof SdkHttpError &&
        error.code === SdkErrorCode.ClientHttpNotImplemented
      )
        return;
      owner.fail(toGatewayError(settings, error, owner));
    };
    this.#ended = () => {
      if (!this.#answered)
        owner.fail(
          new GatewayConnectionError({
            code: GatewayErrorCode.ConnectionReset,
            target: owner.target,
            message: `The gateway's reply stream at ${url.href} ended before the response; retry, and check the gateway and backend logs.`,
          }),
        );
    };
  }

  override send(
    message: JSONRPCMessage,
    options?: TransportSendOptions,
  ): Promise<void> {
    if (isJSONRPCRequest(message)) {
      this.#local = message.id;
      this.session.requests += 1;
      const wire = this.session.requests;
      this.#wire = wire;
      const meta = message.params?._meta;
      const progress =
        meta?.progressToken === message.id
          ? {
              params: {
                ...message.params,
                _meta: { ...meta, progressToken: wire },
              },
            }
          : {};
      return super.send(
        { ...message, ...progress, id: wire },
        { ...options, onRequestStreamEnd: this.#ended },
      );
    }
    const cancelled =
      isJSONRPCNotification(message) &&
      message.method === 'notifications/cancelled' &&
      message.params?.requestId === this.#local;
    return super.send(
      cancelled
        ? { ...message, params: { ...message.params, requestId: this.#wire } }
        : message,
      options,
    );
  }
}

/**
 * One MCP endpoint of the gateway (`<url>/mcp/<target>`, or `<url>/mcp`):
 * its session, connected once and re-initialized after the gateway rejects
 * it, and the clients of the requests made on it.
 */
export class Endpoint {
  readonly url: URL;
  readonly limiter: Limiter;
  current: Session | undefined;
  initializations = 0;
  #connection: Promise<Session> | undefined;
  #prior: PriorDiscovery | undefined;
  #connecting = new Set<FetchOwner>();

  constructor(
    readonly key: string,
    /** The target (`*` for the multiplexed endpoint). */
    readonly target: string,
    readonly settings: EndpointSettings,
  ) {
    this.url = new URL(key);
    this.limiter = new Limiter(
      settings.options.maxConcurrentPerEndpoint ??
        DEFAULTS.maxConcurrentPerEndpoint,
    );
  }

  readySession(): Session | undefined {
    const ready = this.current;
    return ready && !ready.retired && !ready.closed ? ready : undefined;
  }

  /** The session, connecting it (or joining the connect in progress). */
  session(target: string | undefined): Promise<Session> {
    if (this.settings.closing.aborted)
      return Promise.reject(
        new GatewayClosedError({
          target,
          message: 'The gateway client is closed; create a new one.',
        }),
      );
    if (!this.#connection) {
      const pending = this.#connect(target);
      this.#connection = pending;
      pending.catch(() => {
        if (this.#connection === pending) this.#connection = undefined;
      });
    }
    return this.#connection;
  }

  /** The gateway rejected `session`: the next request connects anew. */
  retire(session: Session): void {
    session.retired = true;
    if (this.current === session) {
      this.current = undefined;
      this.#connection = undefined;
    }
  }

  /** Close `session`, ending it at the gateway (DELETE) when `end`. */
  async closeSession(session: Session, end: boolean): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    this.settings.fetch.release(session.stream);
    if (end && session.transport.sessionId !== undefined)
      await session.transport.terminateSession().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  /** Stop the connects in progress, and end the session. */
  async close(): Promise<void> {
    for (const owner of this.#connecting)
      owner.fail(
        new GatewayClosedError({
          target: owner.target,
          message: 'The gateway client was closed while connecting.',
        }),
      );
    const session = await this.#connection?.catch(() => undefined);
    if (session) await this.closeSession(session, true);
  }

  /** A client of its own for one request on `session`. */
  async open(session: Session, scope: RequestScope): Promise<Exchange> {
    const owner = new FetchOwner(scope.target, scope.role);
    const transport = new ExchangeTransport(
      this.url,
      session,
      owner,
      this.settings,
    );
    const client = this.#client({
      ...scope,
      target: scope.target ?? this.target,
      signal: owner.signal,
    });
    await client.connect(transport, { prior: session.prior });
    const close = () => void client.close().catch(() => undefined);
    return {
      owner,
      client,
      finish: (succeeded) => {
        if (owner.openStreams === 0) {
          if (!succeeded) owner.cut();
          close();
          return;
        }
        setTimeout(() => {
          if (owner.openStreams > 0) owner.cut();
          close();
        }, STREAM_GRACE_MS).unref();
      },
    };
  }

  async #connect(target: string | undefined): Promise<Session> {
    // Not tied to the request that started it: a request that stops waiting
    // (its own timeout, a cancel) leaves the connect going for the next one.
    const { options, timeoutMs } = this.settings;
    const ms =
      options.connectTimeoutMs ??
      Math.max(timeoutMs, DEFAULTS.connectTimeoutMs);
    const deadline = { at: Date.now() + ms, ms };
    try {
      return await this.#connectOnce(target, this.#prior, deadline);
    } catch (error) {
      // A gateway that answers the `server/discover` probe with an error the
      // SDK will not read as "legacy" (a 5xx, for instance) still speaks
      // the 2025 handshake: try that once before giving up.
      if (
        this.#prior === undefined &&
        isProbeFailure(error) &&
        !this.settings.closing.aborted
      )
        return this.#connectOnce(target, { kind: 'legacy' }, deadline);
      throw error;
    }
  }

  async #connectOnce(
    target: string | undefined,
    prior: PriorDiscovery | undefined,
    deadline: { at: number; ms: number },
  ): Promise<Session> {
    const { options } = this.settings;
    const stream: StandaloneStream = {
      opened: false,
      slot: false,
      onSessionLost: () => this.#reopen(session),
    };
    const owner = new FetchOwner(target, options.role, stream);
    const client = this.#client({ target: this.target });
    const transport = new StreamableHTTPClientTransport(this.url, {
      fetch: this.settings.fetch.fetchFor(owner),
      reconnectionOptions: RECONNECTION,
    });
    const session: Session = {
      client,
      transport,
      stream,
      prior: prior ?? { kind: 'legacy' },
      inflight: 0,
      requests: 0,
      retired: false,
      closed: false,
    };
    this.#connecting.add(owner);
    const remaining = Math.max(1, deadline.at - Date.now());
    const timer = setTimeout(
      () =>
        owner.fail(
          new GatewayTimeoutError({
            target,
            timeoutMs: deadline.ms,
            message: `Connecting to ${this.key} did not finish within ${deadline.ms} ms (option 'connectTimeoutMs').`,
          }),
        ),
      remaining,
    );
    try {
      await client.connect(transport, {
        signal: owner.signal,
        timeout: remaining + 1_000,
        ...(prior ? { prior } : {}),
      });
    } catch (error) {
      await client.close().catch(() => undefined);
      if (!owner.fault && isProbeFailure(error)) throw error;
      throw toGatewayError(this.settings, error, {
        target,
        where: this.key,
        fault: owner.fault,
      });
    } finally {
      clearTimeout(timer);
      this.#connecting.delete(owner);
    }
    this.initializations += 1;
    const discover = client.getDiscoverResult();
    session.prior =
      client.getProtocolEra() === 'modern' && discover
        ? { kind: 'modern', discover }
        : { kind: 'legacy' };
    this.#prior = session.prior;
    this.current = session;
    return session;
  }

  /**
   * The session behind a standalone stream is gone (the gateway restarted,
   * say): start a new session at once, which opens a new stream, and report
   * a list change for the endpoint, since what changed in between is
   * unknown. If the new session cannot be made, the next request tries
   * again.
   */
  #reopen(session: Session): void {
    if (this.settings.closing.aborted || this.current !== session) return;
    this.retire(session);
    if (session.inflight === 0) void this.closeSession(session, false);
    const target = this.target === '*' ? undefined : this.target;
    this.session(target).then(
      () => {
        if (!this.settings.closing.aborted)
          this.settings.options.onToolsListChanged?.({ target: this.target });
      },
      () => undefined,
    );
  }

  /**
   * An SDK client with the handlers of what a server sends: list changes,
   * log messages, and the server requests of each declared capability,
   * which go to the call's handler, else to the client-wide one, else get
   * Method not found (-32601). Without a declared capability the SDK
   * answers -32601 at once.
   */
  #client(
    scope: Omit<RequestScope, 'role'> & {
      target: string;
      signal?: AbortSignal;
    },
  ): Client {
    const { options, kinds, capabilities, closing } = this.settings;
    const client = new Client(
      {
        name: options.clientName ?? 'heretek-gateway-client',
        version: VERSION,
      },
      { capabilities, versionNegotiation: { mode: 'auto' } },
    );
    client.onerror = () => undefined;
    const { onToolsListChanged, onLog } = options;
    if (onToolsListChanged)
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        if (!closing.aborted) onToolsListChanged({ target: this.target });
      });
    if (onLog)
      client.setNotificationHandler('notifications/message', ({ params }) => {
        try {
          onLog({
            target: scope.target,
            level: params.level,
            ...(params.logger === undefined ? {} : { logger: params.logger }),
            data: params.data,
          });
        } catch {
          // a failing log sink must not break the stream
        }
      });
    for (const kind of kinds)
      client.setRequestHandler(
        SERVER_REQUEST_METHODS[kind],
        (request, context) => {
          const handler =
            kind === 'elicitation'
              ? (scope.handlers?.onElicitation ?? options.onElicitation)
              : (scope.handlers?.onSampling ?? options.onSampling);
          if (handler === undefined)
            throw new ProtocolError(
              ProtocolErrorCode.MethodNotFound,
              `No ${kind} handler for this request from target '${scope.target}': the call that carried it was made without one, and the client has none of its own.`,
            );
          const signals = [context.mcpReq.signal, closing];
          if (scope.signal) signals.push(scope.signal);
          // The server waits for this answer: the call's timer waits with it.
          const release = scope.hold?.();
          const answer = handler(
            { target: scope.target, params: request.params as never },
            { signal: AbortSignal.any(signals) },
          );
          return (
            release === undefined ? answer : answer.finally(release)
          ) as never;
        },
      );
    return client;
  }
}

/** The SDK could not read the `server/discover` probe's answer as an era verdict. */
function isProbeFailure(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed
  );
}

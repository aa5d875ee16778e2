import {
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  isSpecType,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import type { CallHandlers, GatewayClientOptions } from './config.js';
import {
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayProtocolError,
} from './errors.js';
import { toGatewayError, type ErrorMapping } from './error-mapping.js';
import { FetchOwner, ROLE_HEADER, type GatewayFetch } from './http-layer.js';

/** Names a request's {@link Exchange} in its `RequestOptions.headers`; `send` takes it out before the wire. */
const EXCHANGE_HEADER = 'x-heretek-exchange';

/** How long an SSE reply may stay open after its response arrived. */
const STREAM_GRACE_MS = 1_000;

const RECONNECTION = {
  maxRetries: 6,
  initialReconnectionDelay: 250,
  maxReconnectionDelay: 5_000,
  reconnectionDelayGrowFactor: 2,
};

export type TransportSettings = ErrorMapping & {
  options: GatewayClientOptions;
  fetch: GatewayFetch;
};

/** Who makes one request: the call's target, role and handlers, and how to hold its timer. */
export type RequestScope = {
  target: string;
  role: string;
  handlers?: CallHandlers | undefined;
  hold?: (() => () => void) | undefined;
};

/**
 * One request on a session: the Streamable HTTP transport its POST (and the
 * SSE reply, and its resumption) goes out on, whose `fetch` reports to
 * `owner`. What its reply carries belongs to this request.
 */
export class Exchange {
  readonly owner: FetchOwner;
  /** The `RequestOptions.headers` that send a request on this exchange. */
  readonly headers: Record<string, string>;
  requestId: RequestId | undefined;
  #answered = false;
  readonly #transport: StreamableHTTPClientTransport;

  constructor(
    readonly key: string,
    readonly scope: RequestScope,
    private readonly session: SessionTransport,
  ) {
    this.owner = new FetchOwner(scope.target, scope.role);
    this.headers = { [EXCHANGE_HEADER]: key };
    const { settings, main } = session;
    this.#transport = new StreamableHTTPClientTransport(session.url, {
      fetch: settings.fetch.fetchFor(this.owner),
      reconnectionOptions: RECONNECTION,
      sessionId: main.sessionId,
      protocolVersion: main.protocolVersion,
    });
    this.#transport.onmessage = (message) => this.#receive(message);
    this.#transport.onerror = (error) => {
      // A POST's error status rejects the request itself (it may be retried in a new session).
      if (
        error instanceof SdkHttpError &&
        error.code === SdkErrorCode.ClientHttpNotImplemented
      )
        return;
      this.owner.fail(toGatewayError(settings, error, this.owner));
    };
  }

  async send(
    message: JSONRPCMessage & { id: RequestId },
    options: TransportSendOptions | undefined,
  ): Promise<void> {
    // The SDK's client may send the request again (a refreshed tools/call).
    const first = this.requestId === undefined;
    this.requestId = message.id;
    if (first) await this.#transport.start();
    const { [EXCHANGE_HEADER]: _key, ...headers } = options?.headers ?? {};
    return this.#transport.send(message, {
      ...options,
      headers,
      onRequestStreamEnd: () => {
        if (!this.#answered)
          this.owner.fail(
            new GatewayConnectionError({
              code: GatewayErrorCode.ConnectionReset,
              target: this.owner.target,
              message: `The gateway's reply stream at ${this.session.url.href} ended before the response; retry, and check the gateway and backend logs.`,
            }),
          );
      },
    });
  }

  /**
   * The request is over: close what is left of it (an open reply after a
   * short grace); nothing once answered and its reply ended (closing aborts a
   * controller, and makes an exception, on every call).
   */
  finish(succeeded: boolean): void {
    this.session.forget(this);
    const close = () => void this.#transport.close().catch(() => undefined);
    if (this.owner.openStreams === 0) {
      if (succeeded) return;
      this.owner.cut();
      close();
      return;
    }
    setTimeout(() => {
      if (this.owner.openStreams > 0) this.owner.cut();
      close();
    }, STREAM_GRACE_MS).unref();
  }

  /** A message of this request's reply; a response for another id fails the request, and is not passed on to answer another. */
  #receive(message: JSONRPCMessage) {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id !== this.requestId) {
        this.owner.fail(
          new GatewayProtocolError({
            target: this.owner.target,
            message: `The gateway answered request id ${JSON.stringify(this.requestId)} with a response for id ${JSON.stringify(message.id)}; the reply is discarded.`,
          }),
        );
        return;
      }
      this.#answered = true;
    }
    this.session.receive(message, this);
  }
}

/**
 * The transport of one session's SDK `Client`. The SDK's Streamable HTTP
 * transport drops which POST's reply stream a message came on
 * (typescript-sdk#2659), and a server request or a log on a call's stream
 * belongs to that call. So each request sent with an exchange's header goes
 * out on a transport of its own (same session id and revision); the rest
 * goes out on the session's main transport.
 */
export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    | (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void)
    | undefined;
  readonly hasPerRequestStream = true;
  readonly main: StreamableHTTPClientTransport;
  readonly #exchanges = new Map<string, Exchange>();
  /** The exchange whose reply carried each server request being answered. */
  readonly #carriers = new Map<RequestId, Exchange>();
  #nextKey = 0;

  constructor(
    readonly url: URL,
    readonly target: string,
    readonly settings: TransportSettings,
    owner: FetchOwner,
  ) {
    this.main = new StreamableHTTPClientTransport(url, {
      fetch: settings.fetch.fetchFor(owner),
      reconnectionOptions: RECONNECTION,
    });
  }

  get sessionId(): string | undefined {
    return this.main.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.main.setProtocolVersion(version);
  }

  start(): Promise<void> {
    this.main.onmessage = (message) => this.receive(message, undefined);
    this.main.onerror = (error) => this.onerror?.(error);
    this.main.onclose = () => this.onclose?.();
    return this.main.start();
  }

  close(): Promise<void> {
    return this.main.close();
  }

  terminateSession(): Promise<void> {
    return this.main.terminateSession();
  }

  /** A new exchange: a request goes out on it with its {@link Exchange.headers}. */
  open(scope: RequestScope): Exchange {
    const exchange = new Exchange(String(this.#nextKey++), scope, this);
    this.#exchanges.set(exchange.key, exchange);
    return exchange;
  }

  carrier(id: RequestId): Exchange | undefined {
    return this.#carriers.get(id);
  }

  forget(exchange: Exchange): void {
    this.#exchanges.delete(exchange.key);
    for (const [id, carrier] of this.#carriers)
      if (carrier === exchange) this.#carriers.delete(id);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const key = options?.headers?.[EXCHANGE_HEADER];
    const exchange = key === undefined ? undefined : this.#exchanges.get(key);
    if (exchange && isJSONRPCRequest(message))
      return exchange.send(message, options);
    // A cancellation, or an answer to what a call's reply carried, goes with that call's role.
    let related: Exchange | undefined;
    if (
      isJSONRPCNotification(message) &&
      message.method === 'notifications/cancelled'
    ) {
      const id = message.params?.requestId;
      for (const candidate of this.#exchanges.values())
        if (candidate.requestId === id) related = candidate;
    } else if (
      isJSONRPCResultResponse(message) ||
      isJSONRPCErrorResponse(message)
    ) {
      const { id } = message;
      if (id !== undefined) {
        related = this.#carriers.get(id);
        this.#carriers.delete(id);
      }
    }
    return this.main.send(message, {
      ...options,
      headers: related && { [ROLE_HEADER]: related.scope.role },
    });
  }

  /** A message on the reply of `exchange`, or on the main transport: logs go to `onLog`, the rest to the client. */
  receive(message: JSONRPCMessage, exchange: Exchange | undefined): void {
    if (
      isJSONRPCNotification(message) &&
      message.method === 'notifications/message' &&
      isSpecType.LoggingMessageNotification(message)
    ) {
      const { params } = message;
      try {
        this.settings.options.onLog?.({
          target: exchange?.scope.target ?? this.target,
          level: params.level,
          ...(params.logger === undefined ? {} : { logger: params.logger }),
          data: params.data,
        });
      } catch {
        // a failing log sink must not break the stream
      }
      return;
    }
    if (exchange && isJSONRPCRequest(message))
      this.#carriers.set(message.id, exchange);
    this.onmessage?.(message);
  }
}

import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type ClientCapabilities,
  type PriorDiscovery,
} from '@modelcontextprotocol/client';
import { DEFAULTS, SERVER_REQUESTS, type ServerRequestKind } from './config.js';
import { GatewayClosedError, GatewayTimeoutError } from './errors.js';
import { toGatewayError } from './error-mapping.js';
import { FetchOwner, type StandaloneStream } from './http-layer.js';
import { Limiter } from './limiter.js';
import {
  SessionTransport,
  type RequestScope,
  type TransportSettings,
} from './session-transport.js';
import { VERSION } from './version.js';

export type EndpointSettings = TransportSettings & {
  capabilities: ClientCapabilities;
  kinds: ReadonlyArray<ServerRequestKind>;
};

/** One session: the endpoint's SDK client on its transport, initialized once. */
export type Session = {
  client: Client;
  transport: SessionTransport;
  stream: StandaloneStream;
  inflight: number;
  /** The gateway rejected it: no new request goes out on it. */
  retired: boolean;
  closed: boolean;
};

/**
 * Answer a server request of `kind` with the handler of the call that
 * carried it, else the client-wide one, else Method not found (-32601). The
 * call's per-request timer stops while it runs (the server waits for the user).
 */
export function answerServerRequest(
  settings: EndpointSettings,
  kind: ServerRequestKind,
  params: unknown,
  scope: Omit<RequestScope, 'role'>,
  signals: AbortSignal[],
): Promise<unknown> {
  const { options, closing } = settings;
  const setting = SERVER_REQUESTS[kind].handler;
  const handler = scope.handlers?.[setting] ?? options[setting];
  if (handler === undefined)
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `No ${kind} handler for this request from target '${scope.target}': the call that carried it was made without one, and the client has none of its own.`,
    );
  const release = scope.hold?.();
  const answer = handler(
    { target: scope.target, params: params as never },
    { signal: AbortSignal.any([...signals, closing]) },
  );
  return release === undefined ? answer : answer.finally(release);
}

/** One MCP endpoint of the gateway (`<url>/mcp/<target>`, or `<url>/mcp`) and its session. */
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

  async closeSession(session: Session, end: boolean): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    this.settings.fetch.release(session.stream);
    if (end && session.transport.sessionId !== undefined)
      await session.transport.terminateSession().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

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
    const transport = new SessionTransport(
      this.url,
      this.target,
      this.settings,
      owner,
    );
    const client = this.#client(transport);
    const session: Session = {
      client,
      transport,
      stream,
      inflight: 0,
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
        prior,
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
    // Its later requests are notifications and answers: none is waited for.
    owner.waiting = false;
    this.initializations += 1;
    const discover = client.getDiscoverResult();
    this.#prior =
      client.getProtocolEra() === 'modern' && discover
        ? { kind: 'modern', discover }
        : { kind: 'legacy' };
    this.current = session;
    return session;
  }

  /**
   * The session behind a standalone stream is gone (a gateway restart): start
   * a new one at once, and report a list change, since what changed in
   * between is unknown. If it fails, the next request tries again.
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

  /** The session's SDK client (logs are passed on by the transport, which knows whose reply carried them). */
  #client(transport: SessionTransport): Client {
    const { options, kinds, capabilities, closing } = this.settings;
    const client = new Client(
      {
        name: options.clientName ?? 'heretek-gateway-client',
        version: VERSION,
      },
      { capabilities, versionNegotiation: { mode: 'auto' } },
    );
    client.onerror = () => undefined;
    const { onToolsListChanged } = options;
    if (onToolsListChanged)
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        if (!closing.aborted) onToolsListChanged({ target: this.target });
      });
    for (const kind of kinds)
      client.setRequestHandler(
        SERVER_REQUESTS[kind].method,
        (request, context) => {
          const exchange = transport.carrier(context.mcpReq.id);
          const signals = [context.mcpReq.signal];
          if (exchange) signals.push(exchange.owner.signal);
          return answerServerRequest(
            this.settings,
            kind,
            request.params,
            exchange?.scope ?? { target: this.target },
            signals,
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

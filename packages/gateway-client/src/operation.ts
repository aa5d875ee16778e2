import type {
  Client,
  Progress,
  RequestOptions,
} from '@modelcontextprotocol/client';
import type { GatewayError } from './errors.js';
import { GatewayHttpError, GatewaySessionLostError } from './errors.js';
import type { CallHandlers } from './config.js';
import type { CallContext } from './http-layer.js';

/** Per-request settings of {@link Requester.request}. */
export type RequestExtra<R = unknown> = {
  /** Progress of this request; each one also restarts its timeout. */
  onprogress?: ((progress: Progress) => void) | undefined;
  /** This request's timeout instead of `timeoutMs` (a request that blocks until a task ends). */
  timeoutMs?: number | undefined;
  /**
   * The request is not cut off when the operation stops (timeout, caller
   * cancel): the operation rejects at once with its reason, and the
   * request runs to its own end (bounded by the SDK's timeout), whose
   * outcome this gets. A task-augmented call's creation uses it: the
   * server may have made the task before the stop, and only the answer
   * names the task to cancel.
   */
  afterStop?: ((late: Promise<R>) => void) | undefined;
};

/**
 * The requests of one operation (a listing, a call), as the client hands
 * it to the code that makes them: `request(what, send)` sends on the
 * endpoint's session and, when the gateway rejects the session,
 * re-initializes and sends once more (counted per request: a listing of
 * many pages survives several expiries).
 */
export type Requester = {
  request<R>(
    what: string,
    send: (client: Client, options: RequestOptions) => Promise<R>,
    extra?: RequestExtra<R>,
  ): Promise<R>;
  /** Re-initializes so far in this operation. */
  readonly reinitializations: number;
  /** Aborted when the operation stops (timeout, caller cancel, close). */
  readonly signal: AbortSignal;
  /** Why the operation stopped, once it has. */
  readonly reason: GatewayError | undefined;
};

/** A session (one SDK client on one endpoint) as operations use it. */
export type Session = {
  client: Client;
  /** Requests of operations on it right now. */
  inflight: number;
  /** The gateway rejected it: no new request goes out on it. */
  retired: boolean;
  closed: boolean;
};

/** What an operation needs of the client, for the endpoint it runs on. */
export type OperationHost<S extends Session> = {
  /** The endpoint URL, for messages. */
  readonly key: string;
  /** The client's per-request timeout. */
  readonly timeoutMs: number;
  /** The endpoint's session when one is ready. */
  readySession(): S | undefined;
  /** Connect the endpoint (or join the connect in progress). */
  connect(target: string | undefined): Promise<S>;
  /** A new request context the fetch layer can find, carrying the call's handlers. */
  begin(
    target: string | undefined,
    handlers: CallHandlers | undefined,
  ): CallContext;
  /** The request of `context` is over. */
  end(context: CallContext, succeeded: boolean): void;
  /** The gateway rejected `session`: the next request re-initializes. */
  retire(session: S): void;
  /** `session` was retired and no request uses it any more: close it. */
  closeRetired(session: S): void;
  /** Anything thrown below, as a typed error. */
  toError(
    error: unknown,
    context: CallContext | undefined,
    target: string | undefined,
  ): GatewayError;
  isClosed(): boolean;
  timeoutError(
    target: string | undefined,
    timeoutMs: number,
    ceiling: boolean,
  ): GatewayError;
};

/** `promise`, or `reason()` once `signal` aborts. */
export function raceSignal<T>(
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

/**
 * One operation's state: why it stopped (timeout, caller cancel, close),
 * the request in flight, the per-request timer and the ceiling. No
 * AbortController of its own on the fast path: stopping fails the current
 * request's context directly, and a controller is only made when the
 * operation has to wait (for a slot, a connect, a task poll).
 */
export class Operation<S extends Session> implements Requester {
  /** Why the operation stopped, once it has. */
  reason: GatewayError | undefined;
  /** Re-initializes so far. */
  reinitializations = 0;
  private context: CallContext | undefined;
  private waiting: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly ceiling: NodeJS.Timeout | undefined;
  private requestTimeoutMs: number;
  private requests = 0;
  /** Server requests of this operation being answered (see `hold`). */
  private holds = 0;
  // The error is built only when the timer fires: building one per call costs a stack capture.
  private readonly onTimeout = () =>
    this.stop(
      this.host.timeoutError(this.target, this.requestTimeoutMs, false),
    );

  constructor(
    private readonly host: OperationHost<S>,
    private readonly target: string | undefined,
    private readonly ceilingMs: number | undefined,
    private readonly handlers?: CallHandlers,
  ) {
    this.requestTimeoutMs = host.timeoutMs;
    this.arm(host.timeoutMs);
    if (ceilingMs !== undefined)
      this.ceiling = setTimeout(
        () => this.stop(host.timeoutError(target, ceilingMs, true)),
        ceilingMs,
      );
  }

  /** Stop the operation with `reason` (the first reason wins). */
  stop(reason: GatewayError): void {
    if (this.reason) return;
    this.reason = reason;
    this.context?.fail(reason);
    this.waiting?.abort(reason);
  }

  /** Aborted when the operation stops. */
  get signal(): AbortSignal {
    this.waiting ??= new AbortController();
    if (this.reason) this.waiting.abort(this.reason);
    return this.waiting.signal;
  }

  /** Clear the timers; the operation is over. */
  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.ceiling);
  }

  async request<R>(
    what: string,
    send: (client: Client, options: RequestOptions) => Promise<R>,
    extra?: RequestExtra<R>,
  ): Promise<R> {
    const timeoutMs = extra?.timeoutMs ?? this.host.timeoutMs;
    if (this.requests > 0 || timeoutMs !== this.requestTimeoutMs)
      this.arm(timeoutMs);
    this.requests += 1;
    for (let attempt = 0; ; attempt += 1) {
      if (this.reason) throw this.reason;
      const session =
        this.host.readySession() ??
        (await raceSignal(
          this.host.connect(this.target),
          this.signal,
          () => this.reason,
        ));
      const context = this.host.begin(this.target, this.handlers);
      context.hold = () => this.hold();
      const afterStop = extra?.afterStop;
      if (afterStop === undefined) this.context = context;
      if (this.reason) context.fail(this.reason);
      session.inflight += 1;
      let succeeded = false;
      let detached = false;
      let sending: Promise<R> | undefined;
      try {
        sending = send(
          session.client,
          this.requestOptions(context, timeoutMs, extra?.onprogress),
        );
        const result =
          afterStop === undefined
            ? await sending
            : await raceSignal(sending, this.signal, () => this.reason);
        succeeded = true;
        return result;
      } catch (error) {
        if (afterStop !== undefined && error === this.reason && sending) {
          // Stopped while the request runs on: it ends (and is accounted
          // for) when its answer or its own timeout comes.
          detached = true;
          afterStop(sending);
          const settle = (ok: boolean) => () =>
            this.release(session, context, ok);
          sending.then(settle(true), settle(false));
          throw error;
        }
        const typed = this.host.toError(error, context, this.target);
        if (
          !context.sessionRejected ||
          this.host.isClosed() ||
          this.reason !== undefined
        )
          throw typed;
        this.host.retire(session);
        if (attempt === 0) {
          this.reinitializations += 1;
          continue;
        }
        const status = GatewayHttpError.isInstance(typed)
          ? ` (HTTP ${typed.status})`
          : '';
        throw new GatewaySessionLostError({
          target: this.target,
          message: `The session with ${this.host.key} expired ${what}; re-initialized; the server rejected the session again${status}: the gateway or backend is dropping sessions.`,
          cause: typed,
        });
      } finally {
        if (this.context === context) this.context = undefined;
        if (!detached) this.release(session, context, succeeded);
      }
    }
  }

  /** The request of `context` on `session` is over. */
  private release(session: S, context: CallContext, succeeded: boolean): void {
    this.host.end(context, succeeded);
    session.inflight -= 1;
    if (session.retired && session.inflight === 0)
      this.host.closeRetired(session);
  }

  private requestOptions(
    context: CallContext,
    timeoutMs: number,
    onprogress: ((progress: Progress) => void) | undefined,
  ): RequestOptions {
    // The SDK's own timeout is past the operation's timer, which fires first
    // (and past the ceiling, when there is one: the timer is held while the
    // user answers a request the reply carried, see `hold`).
    const options: RequestOptions = {
      signal: context.controller.signal,
      timeout: Math.max(timeoutMs, this.ceilingMs ?? 0) + 1_000,
      headers: context.headers,
    };
    if (onprogress) {
      options.onprogress = (progress) => {
        if (!this.reason) this.arm(this.requestTimeoutMs);
        onprogress(progress);
      };
      options.resetTimeoutOnProgress = true;
      if (this.ceilingMs !== undefined)
        options.maxTotalTimeout = this.ceilingMs + 1_000;
    }
    return options;
  }

  private arm(timeoutMs: number): void {
    this.requestTimeoutMs = timeoutMs;
    clearTimeout(this.timer);
    if (this.holds === 0) this.timer = setTimeout(this.onTimeout, timeoutMs);
  }

  /**
   * A server request carried by this operation's reply (an elicitation, a
   * sampling request) is being answered: the server waits for the user, so
   * the per-request timer stops until every such answer is in, then starts
   * afresh. The ceiling (`maxTotalTimeoutMs`) still bounds the operation.
   * Returns the release; calling it twice releases once.
   */
  private hold(): () => void {
    this.holds += 1;
    clearTimeout(this.timer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds === 0 && !this.reason) this.arm(this.requestTimeoutMs);
    };
  }
}

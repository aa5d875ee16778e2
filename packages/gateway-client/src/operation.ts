import type {
  Client,
  Progress,
  RequestOptions,
} from '@modelcontextprotocol/client';
import { SERVER_REQUESTS, type CallHandlers } from './config.js';
import {
  answerServerRequest,
  type Endpoint,
  type Session,
} from './endpoint.js';
import type { Exchange } from './session-transport.js';
import {
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayProtocolError,
  GatewayTimeoutError,
  type GatewayError,
} from './errors.js';
import { rejectsSession, toGatewayError } from './error-mapping.js';

export type RequestExtra<R = unknown> = {
  /** Progress of this request; each one also restarts its timeout. */
  onprogress?: ((progress: Progress) => void) | undefined;
  /** This request's timeout instead of `timeoutMs` (a request that blocks until a task ends). */
  timeoutMs?: number | undefined;
  /**
   * The request is not cut off when the operation stops: the operation
   * rejects at once, and the request runs to its own end, whose outcome this
   * gets. A task's creation uses it: only the answer names the task to cancel.
   */
  afterStop?: ((late: Promise<R>) => void) | undefined;
};

export type OperationPlan = {
  endpoint: Endpoint;
  target: string | undefined;
  role: string;
  ceilingMs: number | undefined;
  handlers: CallHandlers | undefined;
};

/** The timeout error of `target` after `timeoutMs` (`ceiling`: `maxTotalTimeoutMs`). */
export function timeoutError(
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
    promise
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One operation's state: why it stopped, the exchange in flight, the
 * per-request timer and the ceiling. No AbortController on the fast path:
 * stopping fails the current exchange directly, and a controller is only
 * made when the operation has to wait (for a slot, a connect, a task poll).
 */
export class Operation {
  reason: GatewayError | undefined;
  reinitializations = 0;
  private exchange: Exchange | undefined;
  private waiting: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly ceiling: NodeJS.Timeout | undefined;
  private requestTimeoutMs: number;
  private requests = 0;
  private holds = 0;
  // The error is built only when the timer fires: building one per call costs a stack capture.
  private readonly onTimeout = () =>
    this.stop(timeoutError(this.plan.target, this.requestTimeoutMs, false));

  constructor(readonly plan: OperationPlan) {
    const { ceilingMs, target } = plan;
    const { timeoutMs } = plan.endpoint.settings;
    this.requestTimeoutMs = timeoutMs;
    this.arm(timeoutMs);
    if (ceilingMs !== undefined)
      this.ceiling = setTimeout(
        () => this.stop(timeoutError(target, ceilingMs, true)),
        ceilingMs,
      );
  }

  /** Stop the operation with `reason` (the first reason wins). */
  stop(reason: GatewayError): void {
    if (this.reason) return;
    this.reason = reason;
    this.exchange?.owner.fail(reason);
    this.waiting?.abort(reason);
  }

  get signal(): AbortSignal {
    this.waiting ??= new AbortController();
    if (this.reason) this.waiting.abort(this.reason);
    return this.waiting.signal;
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.ceiling);
  }

  /**
   * Send on the endpoint's session; when the gateway rejects the session,
   * re-initialize and send once more (per request: a listing of many pages
   * survives several expiries).
   */
  async request<R>(
    what: string,
    send: (client: Client, options: RequestOptions) => Promise<R>,
    extra?: RequestExtra<R>,
  ): Promise<R> {
    const { endpoint, target } = this.plan;
    const settings = endpoint.settings;
    const timeoutMs = extra?.timeoutMs ?? settings.timeoutMs;
    if (this.requests > 0 || timeoutMs !== this.requestTimeoutMs)
      this.arm(timeoutMs);
    this.requests += 1;
    for (let attempt = 0; ; attempt += 1) {
      if (this.reason) throw this.reason;
      const session =
        endpoint.readySession() ??
        (await raceSignal(
          endpoint.session(target),
          this.signal,
          () => this.reason,
        ));
      session.inflight += 1;
      const exchange = session.transport.open({
        target: target ?? endpoint.target,
        role: this.plan.role,
        handlers: this.plan.handlers,
        hold: () => this.hold(),
      });
      let succeeded = false;
      let detached = false;
      let sending: Promise<R> | undefined;
      try {
        const afterStop = extra?.afterStop;
        if (afterStop === undefined) this.exchange = exchange;
        if (this.reason) exchange.owner.fail(this.reason);
        sending = send(
          session.client,
          this.requestOptions(exchange, timeoutMs, extra?.onprogress),
        );
        const result =
          afterStop === undefined
            ? await sending
            : await raceSignal(sending, this.signal, () => this.reason);
        succeeded = true;
        return result;
      } catch (error) {
        if (extra?.afterStop && error === this.reason && sending) {
          // Stopped while the request runs on: it ends (and is accounted
          // for) when its answer or its own timeout comes.
          detached = true;
          extra.afterStop(sending);
          const settle = (ok: boolean) => () =>
            this.release(session, exchange, ok);
          sending.then(settle(true), settle(false));
          throw error;
        }
        const typed = toGatewayError(settings, error, {
          target,
          where: endpoint.key,
          fault: exchange.owner.fault,
        });
        if (
          exchange.owner.fault !== undefined ||
          !rejectsSession(error) ||
          !session.transport.sessionId ||
          settings.closing.aborted ||
          this.reason !== undefined
        )
          throw typed;
        endpoint.retire(session);
        if (attempt === 0) {
          this.reinitializations += 1;
          continue;
        }
        const status = GatewayHttpError.isInstance(typed)
          ? ` (HTTP ${typed.status})`
          : '';
        throw new GatewayConnectionError({
          code: GatewayErrorCode.ConnectionReset,
          target,
          message: `The session with ${endpoint.key} expired ${what}; re-initialized; the server rejected the session again${status}: the gateway or backend is dropping sessions.`,
          cause: typed,
        });
      } finally {
        if (this.exchange === exchange) this.exchange = undefined;
        if (!detached) this.release(session, exchange, succeeded);
      }
    }
  }

  /** A request that stopping the operation does not cut (a task's cancellation), bounded by `timeoutMs`. */
  async detached<R>(
    send: (client: Client, options: RequestOptions) => Promise<R>,
  ): Promise<R> {
    const { endpoint, target, role } = this.plan;
    const session = endpoint.readySession() ?? (await endpoint.session(target));
    session.inflight += 1;
    const exchange = session.transport.open({
      target: target ?? endpoint.target,
      role,
    });
    try {
      return await send(session.client, {
        timeout: endpoint.settings.timeoutMs,
        headers: exchange.headers,
      });
    } finally {
      this.release(session, exchange, true);
    }
  }

  /** The answers to the `inputRequests` of an `input_required` result (2026-07-28), keyed as asked. */
  async answerInputs(
    inputRequests: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const { endpoint, target, handlers } = this.plan;
    const { settings } = endpoint;
    const entries = Object.entries(inputRequests).map(async ([key, entry]) => {
      const { method, params } = (entry ?? {}) as {
        method?: unknown;
        params?: unknown;
      };
      const kind = settings.kinds.find(
        (declared) => SERVER_REQUESTS[declared].method === method,
      );
      if (kind === undefined)
        throw new GatewayProtocolError({
          target,
          message: `Target '${target ?? endpoint.target}' asked for input ${JSON.stringify(key)} by ${JSON.stringify(method)}, which this client does not declare it answers (options onElicitation, onSampling, serverRequests).`,
        });
      const answer = await answerServerRequest(
        settings,
        kind,
        params,
        {
          target: target ?? endpoint.target,
          handlers,
          hold: () => this.hold(),
        },
        [this.signal],
      );
      return [key, answer] as const;
    });
    return Object.fromEntries(await Promise.all(entries));
  }

  private release(
    session: Session,
    exchange: Exchange,
    succeeded: boolean,
  ): void {
    exchange.finish(succeeded);
    session.inflight -= 1;
    if (session.retired && session.inflight === 0)
      void this.plan.endpoint.closeSession(session, false);
  }

  private requestOptions(
    exchange: Exchange,
    timeoutMs: number,
    onprogress: ((progress: Progress) => void) | undefined,
  ): RequestOptions {
    // The SDK's own timeout is past the operation's timer, which fires first
    // (and past the ceiling, when there is one: the timer is held while the
    // user answers a request the reply carried, see `hold`).
    const { ceilingMs } = this.plan;
    const options: RequestOptions = {
      signal: exchange.owner.signal,
      timeout: Math.max(timeoutMs, ceilingMs ?? 0) + 1_000,
      headers: exchange.headers,
    };
    if (onprogress) {
      options.onprogress = (progress) => {
        if (!this.reason) this.arm(this.requestTimeoutMs);
        onprogress(progress);
      };
      options.resetTimeoutOnProgress = true;
      if (ceilingMs !== undefined) options.maxTotalTimeout = ceilingMs + 1_000;
    }
    return options;
  }
  private arm(timeoutMs: number): void {
    this.requestTimeoutMs = timeoutMs;
    clearTimeout(this.timer);
    if (this.holds === 0) this.timer = setTimeout(this.onTimeout, timeoutMs);
  }

  /**
   * A server request this operation's reply carried is being answered: the
   * server waits for the user, so the per-request timer stops until every
   * answer is in (the ceiling still runs). Returns the release (idempotent).
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

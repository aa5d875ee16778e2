import { Readable } from 'node:stream';
import {
  Headers as UndiciHeaders,
  fetch as undiciFetch,
  request as undiciRequest,
  Agent,
  type Dispatcher,
} from 'undici';
import {
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayResponseTooLargeError,
  type GatewayError,
} from './errors.js';

/** Request header carrying the caller's role to the gateway's policy. */
export const ROLE_HEADER = 'x-heretek-role';

/** Abort reason once an exchange has its answer (one shared object: no per-call DOMException). */
const SETTLED = Object.freeze({
  name: 'Settled',
  message: 'the exchange already has its answer',
});

/** A session's standalone GET stream, as the fetch layer keeps it. */
export type StandaloneStream = {
  opened: boolean;
  /** The session holds one of the client's stream slots (`maxStandaloneStreams`). */
  slot: boolean;
  /** The gateway answered 404 to reopening the stream: the session is gone. */
  readonly onSessionLost: () => void;
};

/** Whom one SDK transport sends for (a request, or a session): its own `fetch` gives it its reply's faults directly. */
export class FetchOwner {
  /** The first fault; it wins over whatever the SDK rejects with. */
  fault: GatewayError | undefined;
  /** Its POSTs are requests it waits for, bound to its signal; once false (a session after its handshake), notifications and answers. */
  waiting = true;
  openStreams = 0;
  readonly #controller = new AbortController();
  /** Aborted on a fault, or when what is left of a finished exchange is cut. */
  readonly signal: AbortSignal = this.#controller.signal;

  constructor(
    readonly target: string | undefined,
    readonly role: string,
    readonly stream?: StandaloneStream,
  ) {}

  /** Take `error` as the fault (the first one wins) and stop every request. */
  fail(error: GatewayError): void {
    if (this.fault !== undefined || this.signal.aborted) return;
    this.fault = error;
    this.#controller.abort(error);
  }

  /** Cut what is left (a reply stream still open after the answer). */
  cut(): void {
    this.#controller.abort(SETTLED);
  }
}

/** The first network code of `error` or of the causes undici wraps it in. */
function networkCode(error: unknown, depth = 0): string | undefined {
  if (depth > 4 || typeof error !== 'object' || error === null) return;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return typeof code === 'string' && code !== '' && code !== 'ABORT_ERR'
    ? code
    : networkCode(cause, depth + 1);
}

/** Codes of a connection closed or reset under a request (not refused). */
const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
]);

/** A network failure as a typed error: no response at all (`request`), or a reply body that broke off (`body`). */
function connectionError(
  error: unknown,
  target: string | undefined,
  where: string,
  phase: 'request' | 'body',
): GatewayConnectionError {
  const code = networkCode(error);
  const reason =
    code ??
    (error instanceof Error
      ? error.cause instanceof Error
        ? error.cause.message
        : error.message
      : 'stream ended early');
  const refused = phase === 'request' && !RESET_CODES.has(code ?? '');
  return new GatewayConnectionError({
    code: refused
      ? GatewayErrorCode.ConnectionRefused
      : GatewayErrorCode.ConnectionReset,
    target,
    message: refused
      ? `Cannot connect to the gateway at ${where} (${reason}): check the gateway URL (option 'url') and that the gateway is running.`
      : `The connection to the gateway at ${where} dropped before the reply was complete (${reason}); retry, and check the gateway and backend logs.`,
    cause: error,
  });
}

type FetchResponse = Awaited<ReturnType<typeof undiciFetch>>;

/** What the checks read of a reply: a fetch `Response`, or a {@link RequestReply}. */
type UndiciResponse = Pick<
  FetchResponse,
  'status' | 'statusText' | 'ok' | 'headers' | 'body'
>;

/** Statuses whose reply has no body (a web `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A reply of undici's `request` as the checks read a fetch `Response`. Its
 * body becomes a web stream only when something needs one: the web stream,
 * its controller and fetch's copies are not made for every JSON reply.
 */
class RequestReply implements UndiciResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers = new UndiciHeaders();
  readonly node: Dispatcher.ResponseData['body'];
  #body: FetchResponse['body'] | undefined;

  constructor(data: Dispatcher.ResponseData) {
    this.status = data.statusCode;
    this.statusText = data.statusText;
    this.node = data.body;
    for (const [name, value] of Object.entries(data.headers)) {
      if (Array.isArray(value))
        for (const item of value) this.headers.append(name, item);
      else if (value !== undefined) this.headers.append(name, value);
    }
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  get body(): FetchResponse['body'] {
    if (this.#body === undefined) {
      if (NULL_BODY_STATUSES.has(this.status)) {
        this.node.dump().catch(() => undefined);
        this.#body = null;
      } else this.#body = Readable.toWeb(this.node) as FetchResponse['body'];
    }
    return this.#body;
  }
}

/** Redirect statuses (with a location). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A web `Response` with `body` (none for a status that may not have one), status and headers. */
function toWebResponse(
  response: UndiciResponse,
  body: ReadableStream<Uint8Array> | Uint8Array | string | null,
): Response {
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** `body` passed through, with what happens to it reported to `on` (each once). */
function watched(
  body: ReadableStream<Uint8Array>,
  limit: number,
  on: {
    tooLarge: () => GatewayError;
    broke?: (error: unknown) => unknown;
    ended?: () => void;
  },
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let total = 0;
  let open = true;
  const end = () => {
    if (open) on.ended?.();
    open = false;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          end();
          controller.close();
          return;
        }
        total += chunk.value.byteLength;
        if (total > limit) {
          end();
          await reader.cancel().catch(() => undefined);
          controller.error(on.tooLarge());
          return;
        }
        controller.enqueue(chunk.value);
      } catch (error) {
        end();
        controller.error(on.broke ? on.broke(error) : error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

export type GatewayFetchOptions = {
  connectTimeoutMs: number;
  authorization: string | undefined;
  maxResponseBytes: number;
  /** Timeout of what waits for no reply (notifications, DELETE, opening the standalone stream). */
  backgroundTimeoutMs: number;
  /** Most sessions holding a standalone stream at once (0: none); later ones are told 405 locally until one frees its slot. */
  maxStandaloneStreams: number;
};

type Outgoing = {
  method: string;
  headers: Headers;
  body: string | null;
  where: string;
  /** It waits for a reply the owner waits for: a JSON-RPC request, or the resumption of its reply. */
  bound: boolean;
  /** A GET without `Last-Event-ID`: the session's standalone stream. */
  standalone: boolean;
};

/**
 * The `fetch` of the SDK's transports: undici on one keep-alive `Agent`, with
 * the role and token headers, a reply size cap, and the faults of what the
 * SDK reads later given to the owner at once.
 */
export class GatewayFetch {
  // undici's keep-alive default (4 s, or the server's `Keep-Alive: timeout`
  // hint less 2 s): below the idle timeouts of common servers (Node 5 s).
  readonly #agent: Agent;
  #streamSlots = 0;
  /** The gateway redirected a request (or a proxy asked for credentials): requests go out ready to follow. */
  #following = false;

  constructor(private readonly options: GatewayFetchOptions) {
    this.#agent = this.newAgent();
  }

  fetchFor(
    owner: FetchOwner,
  ): (input: string | URL, init?: RequestInit) => Promise<Response> {
    return (input, init) => this.fetch(owner, input, init);
  }

  /** The session is closed: its stream slot goes to the next session that asks. */
  release(stream: StandaloneStream | undefined): void {
    if (!stream?.slot) return;
    stream.slot = false;
    this.#streamSlots -= 1;
  }

  close(): Promise<void> {
    return this.#agent.destroy().catch(() => undefined);
  }

  private newAgent(): Agent {
    return new Agent({ connect: { timeout: this.options.connectTimeoutMs } });
  }

  private async fetch(
    owner: FetchOwner,
    input: string | URL,
    init: RequestInit | undefined,
  ): Promise<Response> {
    const request = this.outgoing(owner, input, init);
    const { stream } = owner;
    if (request.standalone && !stream?.slot) {
      // Nobody listens outside a request, or every slot is taken: the
      // transport is told 405, as a server without streams answers.
      if (!stream || this.#streamSlots >= this.options.maxStandaloneStreams)
        return new Response(null, {
          status: 405,
          statusText: 'Method Not Allowed',
        });
      this.#streamSlots += 1;
      stream.slot = true;
    }
    let response: UndiciResponse;
    try {
      response = await this.send(owner, request, init);
    } catch (error) {
      if (request.standalone) this.release(stream);
      throw error;
    }
    if (request.standalone && stream) {
      // A refused stream frees its slot; a dropped one keeps it for the retry.
      if (!response.ok) this.release(stream);
      if (response.status === 404 && stream.opened) {
        stream.opened = false;
        stream.onSessionLost();
      }
      if (response.ok && response.body) {
        stream.opened = true;
        return toWebResponse(response, this.standaloneBody(response.body));
      }
    }
    return request.bound
      ? this.boundReply(owner, request, response)
      : this.passedReply(owner, response);
  }

  /** What a request is, with the role and token headers added. */
  private outgoing(
    owner: FetchOwner,
    input: string | URL,
    init: RequestInit | undefined,
  ): Outgoing {
    const method = (init?.method ?? 'GET').toUpperCase();
    // The transport builds a fresh Headers object for every request: add to it in place.
    const headers =
      init?.headers instanceof Headers
        ? init.headers
        : new Headers(init?.headers);
    // A request may carry its own (a call's cancellation, sent on the session's transport).
    if (!headers.has(ROLE_HEADER)) headers.set(ROLE_HEADER, owner.role);
    if (this.options.authorization !== undefined)
      headers.set('authorization', this.options.authorization);
    const resumption = method === 'GET' && headers.has('last-event-id');
    return {
      method,
      headers,
      body: typeof init?.body === 'string' ? init.body : null,
      where: String(input),
      bound: resumption || (method === 'POST' && owner.waiting),
      standalone: method === 'GET' && !resumption,
    };
  }

  /** The signal a request goes out with, and the timer to clear after its headers. */
  private signalOf(
    owner: FetchOwner,
    request: Outgoing,
    init: RequestInit | undefined,
  ): { signal: AbortSignal; timer?: NodeJS.Timeout } {
    // A bound request follows its owner, which the client stops on timeout,
    // cancel and close; anything else gets a timeout of its own.
    if (request.bound) return { signal: owner.signal };
    const ms = this.options.backgroundTimeoutMs;
    // The standalone stream is long-lived: only waiting for its headers is
    // bounded, and it ends with its session.
    if (!request.standalone) return { signal: AbortSignal.timeout(ms) };
    const opening = new AbortController();
    const timer = setTimeout(() => opening.abort(), ms);
    return {
      signal: init?.signal
        ? AbortSignal.any([init.signal, opening.signal])
        : opening.signal,
      timer,
    };
  }

  /** Send the request; a network failure becomes a typed connection error (the owner's fault when bound). */
  private async send(
    owner: FetchOwner,
    request: Outgoing,
    init: RequestInit | undefined,
  ): Promise<UndiciResponse> {
    const { signal, timer } = this.signalOf(owner, request, init);
    if (request.bound && signal.aborted) throw owner.fault ?? signal.reason;
    let fresh: Agent | undefined;
    try {
      for (;;) {
        const options = {
          method: request.method,
          headers: Object.fromEntries(request.headers),
          body: request.body,
          signal,
          dispatcher: fresh ?? this.#agent,
        };
        try {
          // A GET or DELETE is rare (one of each per session), and has no body to copy.
          if (this.#following || request.method !== 'POST')
            return await undiciFetch(request.where, options);
          const reply = new RequestReply(
            await undiciRequest(request.where, { ...options, method: 'POST' }),
          );
          // A redirect or a proxy asking for credentials: the server did not
          // take the request, so it and later ones go the way fetch follows.
          if (
            reply.status !== 407 &&
            !(
              REDIRECT_STATUSES.has(reply.status) &&
              reply.headers.has('location')
            )
          )
            return reply;
          await reply.node.dump().catch(() => undefined);
          this.#following = true;
          return await undiciFetch(request.where, options);
        } catch (error) {
          // A pooled connection the server closed while idle (its keep-alive
          // timeout, a restart) fails before any reply: the request goes once
          // more, on a connection of its own, as browsers do.
          if (
            fresh ||
            signal.aborted ||
            !RESET_CODES.has(networkCode(error) ?? '')
          )
            throw error;
          fresh = this.newAgent();
        }
      }
    } catch (error) {
      if (signal.aborted) throw request.bound ? (owner.fault ?? error) : error;
      const typed = connectionError(
        error,
        owner.target,
        request.where,
        'request',
      );
      if (request.bound) owner.fail(typed);
      throw typed;
    } finally {
      clearTimeout(timer);
      // It closes once the reply has been read.
      fresh?.close().catch(() => undefined);
    }
  }

  /**
   * A reply the owner waits for: a JSON body read here under the size cap,
   * an SSE body passed through under the cap. A body that breaks off or grows
   * past the cap is the owner's fault at once.
   */
  private async boundReply(
    owner: FetchOwner,
    request: Outgoing,
    response: UndiciResponse,
  ): Promise<Response> {
    const fail = (error: unknown): GatewayError => {
      const typed = GatewayResponseTooLargeError.isInstance(error)
        ? error
        : (owner.fault ??
          connectionError(error, owner.target, request.where, 'body'));
      owner.fail(typed);
      return typed;
    };
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(length) && length > this.options.maxResponseBytes)
      throw fail(this.tooLarge(owner.target));
    if (!response.ok) return this.passedReply(owner, response);
    if (
      (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ) {
      if (!response.body) return toWebResponse(response, null);
      owner.openStreams += 1;
      return toWebResponse(
        response,
        watched(response.body, this.options.maxResponseBytes, {
          tooLarge: () => fail(this.tooLarge(owner.target)),
          broke: fail,
          ended: () => {
            owner.openStreams -= 1;
          },
        }),
      );
    }
    const body = await this.readLimited(response, owner.target).catch(
      (error: unknown) => {
        throw fail(error);
      },
    );
    return toWebResponse(response, body);
  }

  /** A reply no owner waits for (a notification's 202, a DELETE), or any error status: passed on under the size cap. */
  private async passedReply(
    owner: FetchOwner,
    response: UndiciResponse,
  ): Promise<Response> {
    if (response.ok)
      return toWebResponse(
        response,
        response.body &&
          watched(response.body, this.options.maxResponseBytes, {
            tooLarge: () => this.tooLarge(owner.target),
          }),
      );
    const body = await this.readLimited(response, owner.target).catch(() => '');
    return toWebResponse(response, body);
  }

  /** The standalone GET stream, each event held to `maxResponseBytes` (the stream may run for days). */
  private standaloneBody(
    body: ReadableStream<Uint8Array>,
  ): ReadableStream<Uint8Array> {
    const decoder = new TextDecoder();
    let sinceBoundary = 0;
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          const text = decoder.decode(chunk, { stream: true });
          const boundary = Math.max(
            text.lastIndexOf('\n\n'),
            text.lastIndexOf('\r\n\r\n'),
          );
          sinceBoundary =
            boundary < 0
              ? sinceBoundary + chunk.byteLength
              : text.length - boundary;
          if (sinceBoundary > this.options.maxResponseBytes)
            controller.error(this.tooLarge(undefined));
          else controller.enqueue(chunk);
        },
      }),
    );
  }

  /** The body of `reply`, refused past `maxResponseBytes`. */
  private async readLimited(
    reply: UndiciResponse,
    target: string | undefined,
  ): Promise<Buffer> {
    const body =
      (reply as Partial<RequestReply>).node ??
      (reply.body && Readable.fromWeb(reply.body));
    if (!body) return Buffer.alloc(0);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > this.options.maxResponseBytes) {
        body.destroy();
        throw this.tooLarge(target);
      }
      chunks.push(chunk);
    }
    // A reply that came in one piece is not copied.
    const [only] = chunks;
    return chunks.length === 1 && only
      ? Buffer.from(only.buffer, only.byteOffset, only.byteLength)
      : Buffer.concat(chunks, total);
  }

  private tooLarge(target: string | undefined): GatewayResponseTooLargeError {
    const limitBytes = this.options.maxResponseBytes;
    return new GatewayResponseTooLargeError({
      target,
      limitBytes,
      message: `The reply exceeded ${limitBytes} bytes (maxResponseBytes); raise the cap or ask the backend for less data.`,
    });
  }
}

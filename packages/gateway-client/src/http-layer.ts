import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Readable } from 'node:stream';
import {
  Headers as UndiciHeaders,
  fetch as undiciFetch,
  request as undiciRequest,
  type Agent,
  type Dispatcher,
} from 'undici';
import {
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayMalformedResponseError,
  GatewayResponseTooLargeError,
  type GatewayError,
  type JsonRpcErrorObject,
} from './errors.js';
import type { CallHandlers } from './config.js';

/**
 * Request header that tells the fetch layer which operation a request
 * belongs to. The client passes it to the SDK as a per-request header; the
 * fetch layer removes it before the request leaves the process.
 */
export const OPERATION_HEADER = 'x-heretek-operation';

/** Request header carrying the caller's role to the gateway's policy. */
const ROLE_HEADER = 'x-heretek-role';

/**
 * Per-operation state shared between the client and the fetch layer: the
 * SDK transport reports malformed SSE, foreign ids and dropped streams only
 * through an uncorrelated `onerror`, so the fetch layer records the typed
 * fault here and aborts the operation at once. The fetch layer finds the
 * operation by the {@link OPERATION_HEADER} of the request (no
 * `AsyncLocalStorage`: on Node 20 it puts a hook on every promise).
 */
export type CallContext = {
  /** Operation id, the value of {@link OPERATION_HEADER}. */
  id: string;
  /** Per-request headers handed to the SDK for this operation. */
  headers: Record<string, string>;
  /** Target the operation is for (for error messages). */
  target: string | undefined;
  /** First fault seen; it wins over whatever the SDK rejects with. */
  fault: GatewayError | undefined;
  /** Aborted on fault, timeout, caller cancel, or after completion. */
  controller: AbortController;
  /** Set once the operation has its answer: later stream noise is ignored. */
  settled: boolean;
  /** The gateway rejected the session this request carried (404, or 400/500 naming the session). */
  sessionRejected: boolean;
  /** Record `error` as the fault (first one wins) and abort the operation. */
  fail(error: GatewayError): void;
  /** SSE reply streams of this operation still being read. */
  openStreams: number;
  /** Id of the last request this operation posted (what a `Last-Event-ID` resumption answers). */
  requestId: string | number | undefined;
  /** Last SSE event id seen on this operation's streams (what a resumption sends back). */
  lastEventId: string | undefined;
  /** The handlers of the call this operation makes, for the server requests its replies carry. */
  handlers: CallHandlers | undefined;
  /**
   * Stops the operation's per-request timer while a server request its reply
   * carried is answered; returns the release (set by the operation).
   */
  hold: (() => () => void) | undefined;
};

/** Create a fresh operation context with id `id`. */
export function createCallContext(
  target: string | undefined,
  id: string,
  handlers?: CallHandlers,
): CallContext {
  const context: CallContext = {
    id,
    headers:
      handlers?.role === undefined
        ? { [OPERATION_HEADER]: id }
        : { [OPERATION_HEADER]: id, [ROLE_HEADER]: handlers.role },
    target,
    fault: undefined,
    controller: new AbortController(),
    settled: false,
    sessionRejected: false,
    openStreams: 0,
    requestId: undefined,
    lastEventId: undefined,
    handlers,
    hold: undefined,
    fail(error) {
      if (context.settled || context.fault !== undefined) return;
      context.fault = error;
      context.controller.abort(error);
    },
  };
  return context;
}

/**
 * What one transport's fetch knows besides the request: the operation that
 * is connecting it (the SDK's `connect()` takes no per-request headers, and
 * a transport connects once, before any other request).
 */
export type TransportBinding = {
  /** The connect operation while `connect()` runs, then `undefined`. */
  connecting: CallContext | undefined;
  /** The endpoint's target (`*` for the multiplexed endpoint), for what arrives outside an operation. */
  target: string;
  /**
   * Where each server-to-client request came from, by JSON-RPC id (a
   * request on an operation's SSE reply) or by `inputRequests` key (an
   * embedded request of a 2026-07-28 `input_required` answer): the handler
   * of that request takes it out with {@link takeOrigin}. Keys of embedded
   * requests repeat across calls, so each id holds a queue, oldest first.
   */
  serverRequests: Map<JsonRpcId, ServerRequestOrigin[]>;
  /** The standalone GET stream was open at least once for this session. */
  streamOpened: boolean;
  /** The session holds one of the client's standalone stream slots ({@link GatewayFetchOptions.maxStandaloneStreams}). */
  streamSlot?: boolean;
};

/** Where a server-to-client request arrived: the call whose reply carried it. */
export type ServerRequestOrigin = {
  /** The call's target (`*`: outside any call on the multiplexed endpoint). */
  target: string;
  /** Aborted when the call stops (caller cancel, timeout, close). */
  signal: AbortSignal | undefined;
  /** The call's own handlers, if it was given any. */
  handlers: CallHandlers | undefined;
  /** Holds the call's per-request timer while the request is answered. */
  hold: (() => () => void) | undefined;
};

/** Note that the server request `id` came from `origin`. */
function noteOrigin(
  binding: TransportBinding,
  id: JsonRpcId,
  origin: ServerRequestOrigin,
): void {
  const queue = binding.serverRequests.get(id);
  if (queue === undefined) binding.serverRequests.set(id, [origin]);
  else queue.push(origin);
}

/** Where the server request `id` came from (taken out), if it was noted. */
export function takeOrigin(
  binding: TransportBinding,
  id: JsonRpcId,
): ServerRequestOrigin | undefined {
  const queue = binding.serverRequests.get(id);
  const origin = queue?.shift();
  if (queue?.length === 0) binding.serverRequests.delete(id);
  return origin;
}

/** The origin of what `operation`'s replies carry. */
function originOf(
  binding: TransportBinding,
  operation: CallContext | undefined,
): ServerRequestOrigin {
  return {
    target: operation?.target ?? binding.target,
    signal: operation?.controller.signal,
    handlers: operation?.handlers,
    hold: operation?.hold,
  };
}

/** A backend's `notifications/message`, with the target it came from. */
export type LogEntry = {
  /** The target whose reply carried it (`*`: the multiplexed endpoint's own stream). */
  target: string;
  /** The log level (`debug` ... `emergency`). */
  level: string;
  /** The server's logger name, if it sent one. */
  logger?: string;
  /** The logged data, as sent. */
  data: unknown;
};

/** Options of {@link createGatewayFetch}. */
export type GatewayFetchOptions = {
  /** Operations in progress, by id (the client adds and removes them). */
  operations: Map<string, CallContext>;
  agent: Agent;
  role: string;
  token: string | undefined;
  maxResponseBytes: number;
  /** Timeout for fetches that belong to no operation (notifications, DELETE, opening the standalone stream). */
  backgroundTimeoutMs: number;
  scrub: (text: string) => string;
  /** Open the standalone GET stream (otherwise the transport is told 405 without asking the server). */
  standaloneStream: boolean;
  /** Most sessions holding a standalone stream at once; later ones are told 405 locally until one frees its slot. */
  maxStandaloneStreams: number;
  /** Receives each `notifications/message` of a backend. */
  onLog: ((entry: LogEntry) => void) | undefined;
  /** Server-to-client request methods the client has a handler for (their targets are noted). */
  handledRequests: ReadonlySet<string>;
  /**
   * The gateway answered 404 to reopening the standalone stream of a session
   * whose stream had been open: the session is gone, and nothing will be
   * pushed until a new one opens a new stream.
   */
  onStreamSessionLost: (binding: TransportBinding) => void;
};

/** A JSON-RPC request id. */
export type JsonRpcId = string | number;

const SESSION_WORDING = /session/i;

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (
    let depth = 0;
    depth < 5 && current !== null && typeof current === 'object';
    depth += 1
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0 && code !== 'ABORT_ERR')
      return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Map a network-level failure from undici to a typed connection error.
 * `phase` says whether the request got no response at all (`request`) or
 * the reply body broke off (`body`).
 */
export function connectionError(
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
  const resetCodes = new Set([
    'ECONNRESET',
    'EPIPE',
    'UND_ERR_SOCKET',
    'UND_ERR_CLOSED',
    'ECONNABORTED',
  ]);
  const refused =
    phase === 'request' && !(code !== undefined && resetCodes.has(code));
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

function parseJsonRpcError(text: string): JsonRpcErrorObject | undefined {
  try {
    const body: unknown = JSON.parse(text);
    const error = (body as { error?: unknown } | null)?.error as
      { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (
      error &&
      typeof error.code === 'number' &&
      typeof error.message === 'string'
    ) {
      return {
        code: error.code,
        message: error.message,
        ...(error.data === undefined ? {} : { data: error.data }),
      };
    }
  } catch {
    // not JSON: no JSON-RPC error to report
  }
  return undefined;
}

/** The JSON-RPC error inside an HTTP error body, if the body is one. */
export { parseJsonRpcError };

/** `value` with every occurrence of the token removed (a JSON round trip, only when needed). */
export function scrubValue<T>(value: T, scrub: (text: string) => string): T {
  if (value === undefined) return value;
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  const clean = scrub(text);
  return clean === text ? value : (JSON.parse(clean) as T);
}

function isResponseMessage(
  message: unknown,
): message is { id: JsonRpcId | null } {
  return (
    typeof message === 'object' &&
    message !== null &&
    !Array.isArray(message) &&
    'id' in message &&
    !('method' in message) &&
    ('result' in message || 'error' in message)
  );
}

function isJsonRpcMessage(message: unknown): boolean {
  if (Array.isArray(message))
    return message.length > 0 && message.every(isJsonRpcMessage);
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { jsonrpc?: unknown }).jsonrpc === '2.0'
  );
}

async function readLimited(
  reply: UndiciResponse,
  limit: number,
  onTooLarge: () => GatewayError,
): Promise<string> {
  const { node } = reply as Partial<RequestReply>;
  if (node !== undefined) return readNodeLimited(node, limit, onTooLarge);
  const body = reply.body;
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw onTooLarge();
    }
    chunks.push(value);
  }
  return decodeChunks(chunks, total);
}

/** {@link readLimited} straight from undici's body stream (no web stream over it). */
async function readNodeLimited(
  body: Readable,
  limit: number,
  onTooLarge: () => GatewayError,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > limit) {
      body.destroy();
      throw onTooLarge();
    }
    chunks.push(chunk);
  }
  return decodeChunks(chunks, total);
}

function decodeChunks(chunks: Uint8Array[], total: number): string {
  // A reply that came in one piece is decoded in place, not copied first.
  return chunks.length === 1
    ? UTF8.decode(chunks[0]!)
    : Buffer.concat(chunks, total).toString('utf8');
}

const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** `body`, erroring with `onTooLarge()` once more than `limit` bytes came through. */
function capped(
  body: ReadableStream<Uint8Array>,
  limit: number,
  onTooLarge: () => GatewayError,
): ReadableStream<Uint8Array> {
  let total = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > limit) controller.error(onTooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * The id of a JSON-RPC request as the SDK serializes it (`{...,"id":7}`,
 * id last) read from the end of the body without parsing it; `undefined`
 * when the body does not end that way (then it is parsed).
 */
function trailingNumericId(body: string): number | undefined {
  if (body.charCodeAt(body.length - 1) !== 125 /* } */) return undefined;
  const at = body.lastIndexOf(',"id":');
  if (at < 0 || body.length - at > 24) return undefined;
  const digits = body.slice(at + 6, -1);
  return /^\d{1,15}$/.test(digits) ? Number(digits) : undefined;
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
 * A reply of undici's `request` with what the checks read of a fetch
 * `Response`. Its body is read as undici's own stream, and becomes a web
 * stream only when something needs one (an SSE reply, a body handed to the
 * SDK): the web stream, its controller and fetch's copies of the request
 * are not made for every JSON reply.
 */
class RequestReply implements UndiciResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchResponse['headers'];
  /** The body as undici's stream. */
  readonly node: Dispatcher.ResponseData['body'];
  #body: FetchResponse['body'] | undefined;

  constructor(data: Dispatcher.ResponseData) {
    this.status = data.statusCode;
    this.statusText = data.statusText;
    this.node = data.body;
    const headers = new UndiciHeaders();
    for (const [name, value] of Object.entries(data.headers)) {
      if (Array.isArray(value))
        for (const item of value) headers.append(name, item);
      else if (value !== undefined) headers.append(name, value);
    }
    this.headers = headers;
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

/** Redirect statuses: fetch refuses them under `redirect: 'error'` when they name a location. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Whether fetch would have refused this reply (a redirect, or a proxy asking for credentials). */
function refusedByFetch(reply: RequestReply): boolean {
  return (
    reply.status === 407 ||
    (REDIRECT_STATUSES.has(reply.status) && reply.headers.has('location'))
  );
}

/** What the fetch layer shares between the requests of one client. */
type FetchEnvironment = GatewayFetchOptions & {
  /** `Bearer <token>`, or `undefined` without a token. */
  authorization: string | undefined;
  /** Operation by the last SSE event id it saw, for `Last-Event-ID` resumptions. */
  resumable: Map<string, CallContext>;
  /** Sessions holding a standalone stream slot. */
  streamSlots: number;
  /** The gateway redirected a request (or a proxy asked for credentials): requests go out ready to follow. */
  following: boolean;
};

/** One outgoing request, as far as the checks of its reply care. */
type RequestPlan = {
  method: string;
  headers: Headers;
  /** The URL, for messages. */
  where: string;
  /** The operation the request belongs to, if any. */
  context: CallContext | undefined;
  /** The request is the operation's own: its reply is checked and its faults go to the operation. */
  bound: boolean;
  /** Id of the response the request waits for. */
  expectedId: JsonRpcId | undefined;
  /** The SDK's `server/discover` probe (the SDK reads its error statuses itself). */
  probe: boolean;
  /** A GET with `Last-Event-ID`: the resumption of an operation's SSE reply. */
  resumption: boolean;
  /** A GET without `Last-Event-ID`: the session's standalone stream. */
  standalone: boolean;
  /** The transport the request came from. */
  binding: TransportBinding;
};

function tooLarge(
  environment: FetchEnvironment,
  target: string | undefined,
): GatewayResponseTooLargeError {
  return new GatewayResponseTooLargeError({
    target,
    limitBytes: environment.maxResponseBytes,
    message: `The reply exceeded ${environment.maxResponseBytes} bytes (maxResponseBytes); raise the cap or ask the backend for less data.`,
  });
}

/** A web `Response` with `body` and the status and headers of undici's `response`. */
function toWebResponse(
  response: UndiciResponse,
  body: ReadableStream<Uint8Array> | string | null,
): Response {
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The request headers: the SDK's, minus the operation marker, plus role and token. */
function outgoingHeaders(
  environment: FetchEnvironment,
  init: RequestInit | undefined,
): { headers: Headers; operationId: string | null } {
  // The transport builds a fresh Headers object for every request: add to it in place.
  const headers =
    init?.headers instanceof Headers
      ? init.headers
      : new Headers(init?.headers);
  const operationId = headers.get(OPERATION_HEADER);
  if (operationId !== null) headers.delete(OPERATION_HEADER);
  // A call's own role (sent with the request) wins over the client's.
  if (!headers.has(ROLE_HEADER)) headers.set(ROLE_HEADER, environment.role);
  if (environment.authorization !== undefined)
    headers.set('authorization', environment.authorization);
  return { headers, operationId };
}

/**
 * The id of the JSON-RPC request in `body`, and whether it is the SDK's
 * `server/discover` probe. An operation's request is read from the end of
 * the body; anything else is parsed (the probe must be recognised).
 */
function requestIdentity(
  body: string,
  ofOperation: boolean,
): { expectedId: JsonRpcId | undefined; probe: boolean } {
  const quick = ofOperation ? trailingNumericId(body) : undefined;
  if (quick !== undefined) return { expectedId: quick, probe: false };
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    // the SDK always sends JSON; anything else is passed on untouched
    return { expectedId: undefined, probe: false };
  }
  if (typeof message !== 'object' || message === null)
    return { expectedId: undefined, probe: false };
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (
    typeof method === 'string' &&
    (typeof id === 'string' || typeof id === 'number')
  )
    return { expectedId: id, probe: method === 'server/discover' };
  return { expectedId: undefined, probe: false };
}

/** Work out what a request is and which operation it belongs to. */
function planRequest(
  environment: FetchEnvironment,
  binding: TransportBinding,
  input: string | URL,
  init: RequestInit | undefined,
): RequestPlan {
  const method = (init?.method ?? 'GET').toUpperCase();
  const { headers, operationId } = outgoingHeaders(environment, init);
  const lastEventId = method === 'GET' ? headers.get('last-event-id') : null;
  const resumption = lastEventId !== null;
  const context =
    operationId !== null
      ? environment.operations.get(operationId)
      : lastEventId !== null
        ? environment.resumable.get(lastEventId)
        : binding.connecting;
  const identity =
    method === 'POST' && typeof init?.body === 'string'
      ? requestIdentity(init.body, operationId !== null)
      : { expectedId: undefined, probe: false };
  const bound =
    context !== undefined && (identity.expectedId !== undefined || resumption);
  let expectedId = identity.expectedId;
  if (bound && expectedId !== undefined) context.requestId = expectedId;
  // A resumed stream (GET + Last-Event-ID) carries the response to the request it resumes.
  if (bound && resumption) expectedId = context.requestId;
  return {
    method,
    headers,
    where: String(input),
    context,
    bound,
    expectedId,
    probe: identity.probe,
    resumption,
    standalone: method === 'GET' && !resumption,
    binding,
  };
}

/**
 * Whether undici refused a reply that a plain fetch would have handled: a
 * redirect (refused under `redirect: 'error'`) or a proxy's 407 (refused
 * without a window). Connection failures carry a `code` and a message.
 */
function needsFollowing(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (!(cause instanceof Error) || 'code' in cause) return false;
  return cause.message === 'unexpected redirect' || cause.message === '';
}

/**
 * Send the request with undici on the client's keep-alive agent. A bound
 * request follows its operation's signal (the client aborts every open
 * operation on close, which is when the transport's own signal fires);
 * anything else gets a timeout of its own. A network failure becomes a
 * typed connection error (recorded on the operation when bound).
 */
async function send(
  environment: FetchEnvironment,
  plan: RequestPlan,
  input: string | URL,
  init: RequestInit | undefined,
): Promise<UndiciResponse> {
  const { context } = plan;
  let signal: AbortSignal;
  let openingTimer: NodeJS.Timeout | undefined;
  if (plan.bound && context) {
    if (context.controller.signal.aborted)
      throw context.fault ?? context.controller.signal.reason;
    signal = context.controller.signal;
  } else if (plan.standalone) {
    // Long-lived: only waiting for the headers is bounded; the transport's
    // own signal ends the stream on close.
    const opening = new AbortController();
    openingTimer = setTimeout(
      () => opening.abort(),
      environment.backgroundTimeoutMs,
    );
    signal = init?.signal
      ? AbortSignal.any([init.signal, opening.signal])
      : opening.signal;
  } else {
    const timeout = AbortSignal.timeout(environment.backgroundTimeoutMs);
    signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  }
  const request = {
    method: plan.method,
    headers: Object.fromEntries(plan.headers),
    // The SDK sends JSON text or nothing.
    body: typeof init?.body === 'string' ? init.body : null,
    signal,
    dispatcher: environment.agent,
  };
  try {
    if (environment.following) return await undiciFetch(input, request);
    if (plan.method === 'POST') {
      // undici's request: the reply's body is read as undici's stream, not
      // through fetch's web streams and copies.
      const reply = new RequestReply(
        await undiciRequest(input, { ...request, method: 'POST' }),
      );
      if (!refusedByFetch(reply)) return reply;
      await reply.node.dump().catch(() => undefined);
      // Sent again the way fetch follows redirects, as below.
      environment.following = true;
      return await undiciFetch(input, request);
    }
    try {
      // Without a window and with redirects refused, undici sends the request
      // as it is: it neither copies it nor splits its body in two (what it
      // does to be able to send it again after a redirect).
      return await undiciFetch(input, {
        ...request,
        window: null,
        redirect: 'error',
      });
    } catch (error) {
      if (signal.aborted || !needsFollowing(error)) throw error;
      // A redirect (or a proxy asking for credentials): the server did not
      // take the request, so it goes again the way fetch follows redirects,
      // and so do this client's later requests.
      environment.following = true;
      return await undiciFetch(input, request);
    }
  } catch (error) {
    if (signal.aborted)
      throw plan.bound && context ? (context.fault ?? error) : error;
    const typed = connectionError(
      error,
      context?.target,
      plan.where,
      'request',
    );
    if (plan.bound) context?.fail(typed);
    throw typed;
  } finally {
    clearTimeout(openingTimer);
  }
}

/**
 * The reply to a request no operation waits for (a notification's 202, a
 * DELETE, an error status the SDK reads itself): no checks, but the size
 * cap still holds.
 */
async function passUnbound(
  environment: FetchEnvironment,
  plan: RequestPlan,
  response: UndiciResponse,
): Promise<Response> {
  const target = plan.context?.target;
  if (response.ok) {
    return toWebResponse(
      response,
      response.body
        ? capped(response.body, environment.maxResponseBytes, () =>
            tooLarge(environment, target),
          )
        : null,
    );
  }
  const text = await readLimited(response, environment.maxResponseBytes, () =>
    tooLarge(environment, target),
  ).catch(() => '');
  return toWebResponse(response, text);
}

/** Read a bound reply's body under the size cap; a failure is the operation's fault. */
async function readBoundBody(
  environment: FetchEnvironment,
  plan: RequestPlan,
  context: CallContext,
  response: UndiciResponse,
): Promise<string> {
  try {
    return await readLimited(response, environment.maxResponseBytes, () =>
      tooLarge(environment, context.target),
    );
  } catch (error) {
    const typed = GatewayResponseTooLargeError.isInstance(error)
      ? error
      : (context.fault ??
        connectionError(error, context.target, plan.where, 'body'));
    context.fail(typed);
    throw typed;
  }
}

/**
 * A non-2xx reply to an operation's request: a typed HTTP error, noting on
 * the operation when the gateway rejected the session it carried (404, or
 * 400/500 naming the session). The probe's reply goes to the SDK as is.
 */
async function rejectStatus(
  environment: FetchEnvironment,
  plan: RequestPlan,
  context: CallContext,
  response: UndiciResponse,
): Promise<Response> {
  const text = await readBoundBody(environment, plan, context, response);
  if (plan.probe) return toWebResponse(response, text);
  const jsonRpcError = scrubValue(parseJsonRpcError(text), environment.scrub);
  if (
    plan.headers.has('mcp-session-id') &&
    (response.status === 404 ||
      ((response.status === 400 || response.status === 500) &&
        SESSION_WORDING.test(jsonRpcError?.message ?? text)))
  ) {
    context.sessionRejected = true;
  }
  const detail = jsonRpcError
    ? `JSON-RPC ${jsonRpcError.code} ${jsonRpcError.message}`
    : text.trim().slice(0, 300) || response.statusText;
  const error = new GatewayHttpError({
    target: context.target,
    status: response.status,
    jsonRpcError,
    message: environment.scrub(
      `The gateway answered HTTP ${response.status} at ${plan.where}: ${detail}`,
    ),
  });
  context.fail(error);
  throw error;
}

/** Record `error` on the operation and throw it. */
function failWith(context: CallContext, error: GatewayError): never {
  context.fail(error);
  throw error;
}

/**
 * A JSON reply to an operation's request: it must parse, be JSON-RPC 2.0
 * and answer the request's id. The SDK gets the parsed value instead of
 * parsing the text again.
 */
async function checkJsonReply(
  environment: FetchEnvironment,
  plan: RequestPlan,
  context: CallContext,
  response: UndiciResponse,
): Promise<Response> {
  const { target } = context;
  const text = await readBoundBody(environment, plan, context, response);
  const malformed = (why: string, cause?: unknown) =>
    failWith(
      context,
      new GatewayMalformedResponseError({
        code: GatewayErrorCode.MalformedJson,
        target,
        message: environment.scrub(
          `The gateway sent ${why}: ${text.slice(0, 120)}`,
        ),
        ...(cause === undefined ? {} : { cause }),
      }),
    );
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    return malformed(
      `a JSON reply that does not parse (${(error as Error).message})`,
      error,
    );
  }
  if (!isJsonRpcMessage(message)) {
    return malformed('JSON that is not a JSON-RPC 2.0 message');
  }
  if (isResponseMessage(message) && message.id !== plan.expectedId) {
    return failWith(
      context,
      new GatewayMalformedResponseError({
        code: GatewayErrorCode.WrongResponseId,
        target,
        message: `The gateway answered request id ${JSON.stringify(plan.expectedId)} with a response for id ${JSON.stringify(message.id)}; the reply is discarded.`,
      }),
    );
  }
  noteInputRequests(environment, plan.binding, context, message);
  // No body stream over the text (the SDK reads a JSON reply with `json()`):
  // a stream and its controller per reply were made only to be dropped.
  const checked = toWebResponse(response, null);
  Object.defineProperties(checked, {
    json: { value: () => Promise.resolve(message) },
    text: { value: () => Promise.resolve(text) },
  });
  return checked;
}

/** What an operation's SSE reply has shown so far. */
type StreamSeen = {
  /** An event with an id (the reply can be resumed from it). */
  eventId: boolean;
  /** The response to the operation's request. */
  response: boolean;
};

/**
 * One SSE event of an operation's reply: its id is remembered for a
 * resumption, its data must be JSON-RPC 2.0, a response must answer the
 * request's id, and a server message is noted (requests, logs). A bad
 * event fails the operation.
 */
function checkEvent(
  environment: FetchEnvironment,
  plan: RequestPlan,
  operation: CallContext,
  seen: StreamSeen,
  event: EventSourceMessage,
): void {
  const { target } = operation;
  const malformed = (message: string, cause?: unknown) =>
    operation.fail(
      new GatewayMalformedResponseError({
        code: GatewayErrorCode.MalformedSse,
        target,
        message: environment.scrub(message),
        cause,
      }),
    );
  if (event.id) {
    seen.eventId = true;
    forgetResumption(environment, operation);
    operation.lastEventId = event.id;
    environment.resumable.set(event.id, operation);
  }
  if (!event.data || (event.event !== undefined && event.event !== 'message'))
    return;
  let message: unknown;
  try {
    message = JSON.parse(event.data);
  } catch (error) {
    malformed(
      `The gateway sent an SSE event whose data is not JSON (${(error as Error).message}): ${event.data.slice(0, 120)}`,
      error,
    );
    return;
  }
  if (!isJsonRpcMessage(message)) {
    malformed(
      `The gateway sent an SSE event that is not a JSON-RPC 2.0 message: ${event.data.slice(0, 120)}`,
    );
    return;
  }
  if (!isResponseMessage(message)) {
    noteServerMessage(environment, plan.binding, operation, message);
    return;
  }
  if (message.id !== plan.expectedId) {
    operation.fail(
      new GatewayMalformedResponseError({
        code: GatewayErrorCode.WrongResponseId,
        target,
        message: `The gateway answered request id ${JSON.stringify(plan.expectedId)} with a response for id ${JSON.stringify(message.id)} on its SSE stream; the reply is discarded.`,
      }),
    );
    return;
  }
  seen.response = true;
  noteInputRequests(environment, plan.binding, operation, message);
}

/**
 * The operation's SSE reply, passed through while each event is checked:
 * data parses as JSON-RPC 2.0, a response answers the request's id, the
 * size cap holds, and a stream that ends before its response (and without
 * an event id to resume from) is a dropped connection.
 */
function inspectEventStream(
  environment: FetchEnvironment,
  plan: RequestPlan,
  operation: CallContext,
  body: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  const { target } = operation;
  const { maxResponseBytes } = environment;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const seen: StreamSeen = { eventId: false, response: false };
  let total = 0;
  let open = true;
  operation.openStreams += 1;
  const finished = () => {
    if (!open) return;
    open = false;
    operation.openStreams -= 1;
  };
  const parser = createParser({
    onEvent: (event) => checkEvent(environment, plan, operation, seen, event),
  });
  const endedEarly = () =>
    !operation.settled && !seen.response && !seen.eventId;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        finished();
        if (endedEarly())
          operation.fail(
            operation.fault ??
              connectionError(error, target, plan.where, 'body'),
          );
        controller.error(operation.fault ?? error);
        return;
      }
      if (chunk.done) {
        finished();
        if (endedEarly())
          operation.fail(
            connectionError(undefined, target, plan.where, 'body'),
          );
        controller.close();
        return;
      }
      total += chunk.value.byteLength;
      if (total > maxResponseBytes) {
        finished();
        operation.fail(tooLarge(environment, target));
        await reader.cancel().catch(() => undefined);
        controller.error(operation.fault);
        return;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      if (operation.fault && !operation.settled) {
        finished();
        await reader.cancel().catch(() => undefined);
        controller.error(operation.fault);
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      finished();
      return reader.cancel(reason);
    },
  });
}

function forgetResumption(
  environment: FetchEnvironment,
  context: CallContext,
): void {
  if (
    context.lastEventId !== undefined &&
    environment.resumable.get(context.lastEventId) === context
  )
    environment.resumable.delete(context.lastEventId);
}

/** The media type of a reply, lowercase, without parameters. */
function mediaTypeOf(response: UndiciResponse): string {
  return (
    (response.headers.get('content-type') ?? '')
      .split(';')[0]
      ?.trim()
      .toLowerCase() ?? ''
  );
}

/** Check an operation's 2xx reply by its content type. */
async function checkBoundReply(
  environment: FetchEnvironment,
  plan: RequestPlan,
  context: CallContext,
  response: UndiciResponse,
): Promise<Response> {
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(length) && length > environment.maxResponseBytes)
    return failWith(context, tooLarge(environment, context.target));
  if (!response.ok) return rejectStatus(environment, plan, context, response);
  if (response.status === 202 || plan.expectedId === undefined)
    return toWebResponse(response, response.body);
  const mediaType = mediaTypeOf(response);
  if (mediaType === 'application/json' && !plan.resumption)
    return checkJsonReply(environment, plan, context, response);
  if (mediaType === 'text/event-stream') {
    return toWebResponse(
      response,
      response.body
        ? inspectEventStream(environment, plan, context, response.body)
        : null,
    );
  }
  await response.body?.cancel().catch(() => undefined);
  return failWith(
    context,
    new GatewayMalformedResponseError({
      code: GatewayErrorCode.UnexpectedContentType,
      target: context.target,
      message: `The gateway replied with content type ${JSON.stringify(mediaType || 'none')}; expected application/json or text/event-stream.`,
    }),
  );
}

/**
 * Note where the embedded requests of a 2026-07-28 `input_required` answer
 * came from: the SDK hands each to the client's handler under its key.
 */
function noteInputRequests(
  environment: FetchEnvironment,
  binding: TransportBinding,
  operation: CallContext,
  message: unknown,
): void {
  const result = (message as { result?: unknown }).result as
    { resultType?: unknown; inputRequests?: unknown } | undefined;
  if (
    result?.resultType !== 'input_required' ||
    typeof result.inputRequests !== 'object' ||
    result.inputRequests === null
  )
    return;
  for (const [key, request] of Object.entries(result.inputRequests)) {
    const method = (request as { method?: unknown } | null)?.method;
    if (typeof method === 'string' && environment.handledRequests.has(method))
      noteOrigin(binding, key, originOf(binding, operation));
  }
}

/**
 * A server-to-client message seen on a stream: remember which target a
 * request came from (its handler asks), and pass a log notification on.
 */
function noteServerMessage(
  environment: FetchEnvironment,
  binding: TransportBinding,
  operation: CallContext | undefined,
  message: unknown,
): void {
  if (typeof message !== 'object' || message === null) return;
  const { method, id, params } = message as {
    method?: unknown;
    id?: unknown;
    params?: unknown;
  };
  if (typeof method !== 'string') return;
  const from = operation?.target ?? binding.target;
  if (typeof id === 'string' || typeof id === 'number') {
    if (environment.handledRequests.has(method))
      noteOrigin(binding, id, originOf(binding, operation));
    return;
  }
  if (method !== 'notifications/message' || !environment.onLog) return;
  const fields = (params ?? {}) as {
    level?: unknown;
    logger?: unknown;
    data?: unknown;
  };
  const entry: LogEntry = {
    target: from,
    level: typeof fields.level === 'string' ? fields.level : 'info',
    data: fields.data,
  };
  if (typeof fields.logger === 'string') entry.logger = fields.logger;
  try {
    environment.onLog(entry);
  } catch {
    // a failing log sink must not break the stream
  }
}

/**
 * The standalone GET stream, passed through to the SDK (which dispatches
 * `notifications/tools/list_changed` and reconnects it with backoff when it
 * drops) while log notifications are passed on and each event is held to
 * `maxResponseBytes` (the stream itself may run for days).
 */
function watchStandaloneStream(
  environment: FetchEnvironment,
  plan: RequestPlan,
  body: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  const parser = createParser({
    onEvent(event) {
      if (
        !event.data ||
        (event.event !== undefined && event.event !== 'message')
      )
        return;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        return; // the SDK reports it
      }
      noteServerMessage(environment, plan.binding, undefined, message);
    },
  });
  const decoder = new TextDecoder();
  let sinceBoundary = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const text = decoder.decode(chunk, { stream: true });
        const boundary = Math.max(
          text.lastIndexOf('\n\n'),
          text.lastIndexOf('\r\n\r\n'),
        );
        sinceBoundary =
          boundary < 0
            ? sinceBoundary + chunk.byteLength
            : text.length - boundary;
        if (sinceBoundary > environment.maxResponseBytes) {
          controller.error(tooLarge(environment, undefined));
          return;
        }
        parser.feed(text);
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * The `fetch` factory for the SDK's `StreamableHTTPClientTransport`s:
 * undici's fetch on one keep-alive `Agent`, plus the headers this client
 * always sends (`x-heretek-role`, bearer token), a reply size cap, and
 * per-request checks of the reply (JSON parses, SSE events parse, the
 * response id is the request's) that turn into typed faults on the
 * operation's {@link CallContext}. Call `bind` with a transport's
 * {@link TransportBinding} to get that transport's `fetch`; call `forget`
 * when an operation is over.
 */
export function createGatewayFetch(options: GatewayFetchOptions) {
  const environment: FetchEnvironment = {
    ...options,
    authorization:
      options.token === undefined ? undefined : `Bearer ${options.token}`,
    resumable: new Map(),
    streamSlots: 0,
    following: false,
  };

  /** Takes a stream slot for the session (it keeps it until released); false when all are taken. */
  const takeStreamSlot = (binding: TransportBinding): boolean => {
    if (binding.streamSlot === true) return true;
    if (environment.streamSlots >= environment.maxStandaloneStreams)
      return false;
    environment.streamSlots += 1;
    binding.streamSlot = true;
    return true;
  };
  const releaseStreamSlot = (binding: TransportBinding): void => {
    if (binding.streamSlot !== true) return;
    binding.streamSlot = false;
    environment.streamSlots -= 1;
  };

  async function gatewayFetch(
    binding: TransportBinding,
    input: string | URL,
    init: RequestInit | undefined,
  ): Promise<Response> {
    const plan = planRequest(environment, binding, input, init);
    if (
      plan.standalone &&
      (!environment.standaloneStream || !takeStreamSlot(binding))
    ) {
      // Nobody listens for what the server would send outside a request, or
      // the client holds as many streams as it may: do not open one for this
      // session (a server may refuse it with 405 too, which is what the
      // transport is told here).
      return new Response(null, {
        status: 405,
        statusText: 'Method Not Allowed',
      });
    }
    let response: Awaited<ReturnType<typeof send>>;
    try {
      response = await send(environment, plan, input, init);
    } catch (error) {
      if (plan.standalone) releaseStreamSlot(binding);
      throw error;
    }
    // A refused stream frees its slot; a dropped one keeps it for the retry.
    if (plan.standalone && !response.ok) releaseStreamSlot(binding);
    if (plan.standalone && response.status === 404 && binding.streamOpened) {
      binding.streamOpened = false;
      environment.onStreamSessionLost(binding);
    }
    if (plan.standalone && response.ok && response.body) {
      binding.streamOpened = true;
      return toWebResponse(
        response,
        watchStandaloneStream(environment, plan, response.body),
      );
    }
    if (!plan.bound || !plan.context)
      return passUnbound(environment, plan, response);
    return checkBoundReply(environment, plan, plan.context, response);
  }

  return {
    bind:
      (binding: TransportBinding) =>
      (input: string | URL, init?: RequestInit): Promise<Response> =>
        gatewayFetch(binding, input, init),
    forget: (context: CallContext) => forgetResumption(environment, context),
    /** The session is closed: its stream slot goes to the next session that asks. */
    release: releaseStreamSlot,
    /** Sessions holding a standalone stream slot now. */
    openStreams: () => environment.streamSlots,
  };
}

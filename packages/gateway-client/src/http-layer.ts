import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { fetch as undiciFetch, type Agent } from 'undici';
import {
  GatewayConnectionError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayMalformedResponseError,
  GatewayResponseTooLargeError,
  type GatewayError,
  type JsonRpcErrorObject,
} from './errors.js';

/**
 * Request header that tells the fetch layer which operation a request
 * belongs to. The client passes it to the SDK as a per-request header; the
 * fetch layer removes it before the request leaves the process.
 */
export const OPERATION_HEADER = 'x-heretek-operation';

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
};

/** Create a fresh operation context with id `id`. */
export function createCallContext(
  target: string | undefined,
  id: string,
): CallContext {
  const context: CallContext = {
    id,
    headers: { [OPERATION_HEADER]: id },
    target,
    fault: undefined,
    controller: new AbortController(),
    settled: false,
    sessionRejected: false,
    openStreams: 0,
    requestId: undefined,
    lastEventId: undefined,
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
};

/** Options of {@link createGatewayFetch}. */
export type GatewayFetchOptions = {
  /** Operations in progress, by id (the client adds and removes them). */
  operations: Map<string, CallContext>;
  agent: Agent;
  role: string;
  token: string | undefined;
  maxResponseBytes: number;
  /** Timeout for fetches that belong to no operation (notifications, DELETE). */
  backgroundTimeoutMs: number;
  scrub: (text: string) => string;
};

type JsonRpcId = string | number;

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
      ? `Cannot connect to the gateway at ${where} (${reason}): check HERETEK_GATEWAY_URL and that the gateway is running.`
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
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  onTooLarge: () => GatewayError,
): Promise<string> {
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
  return Buffer.concat(chunks).toString('utf8');
}

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

/**
 * The `fetch` factory for the SDK's `StreamableHTTPClientTransport`s:
 * undici's fetch on one keep-alive `Agent`, plus the headers this client
 * always sends (`x-heretek-role`, bearer token), a reply size cap, and
 * per-request checks of the reply (JSON parses, SSE events parse, the
 * response id is the request's) that turn into typed faults on the
 * operation's {@link CallContext}. Call the result with a transport's
 * {@link TransportBinding} to get that transport's `fetch`.
 */
export function createGatewayFetch(options: GatewayFetchOptions) {
  const { agent, role, token, maxResponseBytes, scrub, operations } = options;
  const authorization = token === undefined ? undefined : `Bearer ${token}`;
  /** Operation by the last SSE event id it saw, for `Last-Event-ID` resumptions. */
  const resumable = new Map<string, CallContext>();

  const tooLarge = (target: string | undefined) =>
    new GatewayResponseTooLargeError({
      target,
      limitBytes: maxResponseBytes,
      message: `The reply exceeded ${maxResponseBytes} bytes (maxResponseBytes); raise the cap or ask the backend for less data.`,
    });

  const forget = (context: CallContext) => {
    if (
      context.lastEventId !== undefined &&
      resumable.get(context.lastEventId) === context
    )
      resumable.delete(context.lastEventId);
  };

  const bind =
    (binding: TransportBinding) => (input: string | URL, init?: RequestInit) =>
      gatewayFetch(input, init, binding);
  return { bind, forget };

  async function gatewayFetch(
    input: string | URL,
    init: RequestInit | undefined,
    binding: TransportBinding,
  ): Promise<Response> {
    const method = (init?.method ?? 'GET').toUpperCase();
    // The transport builds a fresh Headers object for every request: add to it in place.
    const headers =
      init?.headers instanceof Headers
        ? init.headers
        : new Headers(init?.headers);
    const operationId = headers.get(OPERATION_HEADER);
    if (operationId !== null) headers.delete(OPERATION_HEADER);
    headers.set('x-heretek-role', role);
    if (authorization !== undefined)
      headers.set('authorization', authorization);
    const lastEventId = method === 'GET' ? headers.get('last-event-id') : null;
    const resumption = lastEventId !== null;
    const context =
      operationId !== null
        ? operations.get(operationId)
        : resumption
          ? resumable.get(lastEventId)
          : binding.connecting;
    const where = String(input);

    let expectedId: JsonRpcId | undefined;
    let probe = false;
    if (method === 'POST' && typeof init?.body === 'string') {
      // An operation's request: its id is the body's last member. Otherwise
      // (connecting, notifications) parse: the probe must be recognised.
      const quick =
        operationId !== null ? trailingNumericId(init.body) : undefined;
      if (quick !== undefined) {
        expectedId = quick;
      } else {
        try {
          const message = JSON.parse(init.body) as {
            id?: unknown;
            method?: unknown;
          };
          if (
            typeof message.method === 'string' &&
            (typeof message.id === 'string' || typeof message.id === 'number')
          ) {
            expectedId = message.id;
            // The SDK classifies the answer to its `server/discover` probe
            // itself (an error status there means "legacy server").
            probe = message.method === 'server/discover';
          }
        } catch {
          // the SDK always sends JSON; anything else is passed on untouched
        }
      }
    }
    if (method === 'GET' && !resumption) {
      // This client is request/response only: it does not hold the optional
      // standalone GET stream open per session (a server may refuse it with
      // 405 too, which is what the transport is told here).
      return new Response(null, {
        status: 405,
        statusText: 'Method Not Allowed',
      });
    }
    const bound =
      context !== undefined && (expectedId !== undefined || resumption);
    if (bound && context.controller.signal.aborted)
      throw context.fault ?? context.controller.signal.reason;
    if (bound && expectedId !== undefined) context.requestId = expectedId;
    // A resumed stream (GET + Last-Event-ID) carries the response to the request it resumes.
    if (bound && resumption) expectedId = context.requestId;

    // One signal per request: a bound request follows its operation (the
    // client aborts every open operation on close, which is when the
    // transport's own signal fires); anything else gets a timeout of its own.
    let signal: AbortSignal;
    if (bound) {
      signal = context.controller.signal;
    } else {
      const timeout = AbortSignal.timeout(options.backgroundTimeoutMs);
      signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    }

    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(input, {
        ...(init as Record<string, unknown>),
        method,
        headers,
        signal,
        dispatcher: agent,
      } as unknown as Parameters<typeof undiciFetch>[1]);
    } catch (error) {
      if (signal.aborted) throw bound ? (context.fault ?? error) : error;
      const typed = connectionError(error, context?.target, where, 'request');
      if (bound) context.fail(typed);
      throw typed;
    }

    const target = context?.target;
    if (!bound) {
      if (response.ok) {
        // Not an operation's request (a notification's 202, a DELETE, a stream
        // no operation waits for): no checks, but the size cap still holds.
        if (!response.body) return response as unknown as Response;
        return new Response(
          capped(
            response.body as ReadableStream<Uint8Array>,
            maxResponseBytes,
            () => tooLarge(target),
          ),
          {
            status: response.status,
            statusText: response.statusText,
            headers: response.headers as unknown as Headers,
          },
        );
      }
      const text = await readLimited(
        response.body as ReadableStream<Uint8Array> | null,
        maxResponseBytes,
        () => tooLarge(target),
      ).catch(() => '');
      return new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers as unknown as Headers,
      });
    }

    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(length) && length > maxResponseBytes) {
      const error = tooLarge(target);
      context.fail(error);
      throw error;
    }

    const readBody = async (): Promise<string> => {
      try {
        return await readLimited(
          response.body as ReadableStream<Uint8Array> | null,
          maxResponseBytes,
          () => tooLarge(target),
        );
      } catch (error) {
        const typed =
          (error as { code?: unknown }).code ===
          GatewayErrorCode.ResponseTooLarge
            ? (error as GatewayError)
            : (context.fault ?? connectionError(error, target, where, 'body'));
        context.fail(typed);
        throw typed;
      }
    };

    if (!response.ok) {
      const text = await readBody();
      if (probe)
        return new Response(text, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers as unknown as Headers,
        });
      const jsonRpcError = scrubValue(parseJsonRpcError(text), scrub);
      const sentSession = headers.has('mcp-session-id');
      if (
        sentSession &&
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
        target,
        status: response.status,
        jsonRpcError,
        message: scrub(
          `The gateway answered HTTP ${response.status} at ${where}: ${detail}`,
        ),
      });
      context.fail(error);
      throw error;
    }

    if (response.status === 202 || expectedId === undefined)
      return response as unknown as Response;

    const mediaType =
      (response.headers.get('content-type') ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase() ?? '';

    if (mediaType === 'application/json' && !resumption) {
      const text = await readBody();
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch (error) {
        const typed = new GatewayMalformedResponseError({
          code: GatewayErrorCode.MalformedJson,
          target,
          message: scrub(
            `The gateway sent a JSON reply that does not parse (${(error as Error).message}): ${text.slice(0, 120)}`,
          ),
          cause: error,
        });
        context.fail(typed);
        throw typed;
      }
      if (!isJsonRpcMessage(message)) {
        const typed = new GatewayMalformedResponseError({
          code: GatewayErrorCode.MalformedJson,
          target,
          message: scrub(
            `The gateway sent JSON that is not a JSON-RPC 2.0 message: ${text.slice(0, 120)}`,
          ),
        });
        context.fail(typed);
        throw typed;
      }
      if (isResponseMessage(message) && message.id !== expectedId) {
        const typed = new GatewayMalformedResponseError({
          code: GatewayErrorCode.WrongResponseId,
          target,
          message: `The gateway answered request id ${JSON.stringify(expectedId)} with a response for id ${JSON.stringify(message.id)}; the reply is discarded.`,
        });
        context.fail(typed);
        throw typed;
      }
      const checked = new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers as unknown as Headers,
      });
      // The body was parsed above: hand the SDK that value instead of parsing it twice.
      Object.defineProperty(checked, 'json', {
        value: () => Promise.resolve(message),
      });
      return checked;
    }

    if (mediaType === 'text/event-stream') {
      return new Response(
        inspectEventStream(response.body as ReadableStream<Uint8Array> | null),
        {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers as unknown as Headers,
        },
      );
    }

    const typed = new GatewayMalformedResponseError({
      code: GatewayErrorCode.UnexpectedContentType,
      target,
      message: `The gateway replied with content type ${JSON.stringify(mediaType || 'none')}; expected application/json or text/event-stream.`,
    });
    await response.body?.cancel().catch(() => undefined);
    context.fail(typed);
    throw typed;

    function inspectEventStream(
      body: ReadableStream<Uint8Array> | null,
    ): ReadableStream<Uint8Array> | null {
      if (!body || !context) return body;
      const operation = context;
      const reader = body.getReader();
      const decoder = new TextDecoder();
      let total = 0;
      let sawEventId = false;
      let sawResponse = false;
      let open = true;
      operation.openStreams += 1;
      const finished = () => {
        if (!open) return;
        open = false;
        operation.openStreams -= 1;
      };
      const check = (event: EventSourceMessage) => {
        if (event.id) {
          sawEventId = true;
          forget(operation);
          operation.lastEventId = event.id;
          resumable.set(event.id, operation);
        }
        if (
          !event.data ||
          (event.event !== undefined && event.event !== 'message')
        )
          return;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch (error) {
          operation.fail(
            new GatewayMalformedResponseError({
              code: GatewayErrorCode.MalformedSse,
              target,
              message: scrub(
                `The gateway sent an SSE event whose data is not JSON (${(error as Error).message}): ${event.data.slice(0, 120)}`,
              ),
              cause: error,
            }),
          );
          return;
        }
        if (!isJsonRpcMessage(message)) {
          operation.fail(
            new GatewayMalformedResponseError({
              code: GatewayErrorCode.MalformedSse,
              target,
              message: scrub(
                `The gateway sent an SSE event that is not a JSON-RPC 2.0 message: ${event.data.slice(0, 120)}`,
              ),
            }),
          );
          return;
        }
        if (isResponseMessage(message)) {
          if (message.id !== expectedId) {
            operation.fail(
              new GatewayMalformedResponseError({
                code: GatewayErrorCode.WrongResponseId,
                target,
                message: `The gateway answered request id ${JSON.stringify(expectedId)} with a response for id ${JSON.stringify(message.id)} on its SSE stream; the reply is discarded.`,
              }),
            );
            return;
          }
          sawResponse = true;
        }
      };
      const parser = createParser({ onEvent: check });
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (error) {
            finished();
            if (!operation.settled && !sawResponse && !sawEventId)
              operation.fail(
                operation.fault ??
                  connectionError(error, target, where, 'body'),
              );
            controller.error(operation.fault ?? error);
            return;
          }
          if (chunk.done) {
            finished();
            if (!operation.settled && !sawResponse && !sawEventId) {
              operation.fail(connectionError(undefined, target, where, 'body'));
            }
            controller.close();
            return;
          }
          total += chunk.value.byteLength;
          if (total > maxResponseBytes) {
            finished();
            operation.fail(tooLarge(target));
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
  }
}

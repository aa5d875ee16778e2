import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from '@modelcontextprotocol/client';
import * as errors from './errors.js';
import { z } from 'zod';

/** The scrubber of a client without a token: nothing to remove. */
export const NO_SCRUB = (text: string) => text;

export type ErrorMapping = {
  scrub: (text: string) => string;
  timeoutMs: number;
  /** Aborted by `close()`: then every failure is `CLIENT_CLOSED`, and server request handlers end. */
  closing: AbortSignal;
};

/** Where a failure happened: the target, the endpoint URL, and the fault already taken, if any. */
export type FailureSite = {
  target: string | undefined;
  where?: string | undefined;
  fault?: errors.GatewayError | undefined;
};

const jsonRpcErrorBody = z.object({
  error: z.object({
    code: z.number(),
    message: z.string(),
    data: z.unknown().optional(),
  }),
});

/** The JSON-RPC error inside an HTTP error body, if the body is one. */
function parseJsonRpcError(
  text: string,
): errors.JsonRpcErrorObject | undefined {
  try {
    return jsonRpcErrorBody.safeParse(JSON.parse(text)).data?.error;
  } catch {
    return undefined; // not JSON: no JSON-RPC error to report
  }
}

/** `value` with every occurrence of the token removed (a JSON round trip, only when needed). */
function scrubValue<T>(value: T, scrub: (text: string) => string): T {
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  const clean = scrub(text);
  return clean === text ? value : (JSON.parse(clean) as T);
}

/** Map anything thrown below to a typed, token-free {@link errors.GatewayError}. */
export function toGatewayError(
  mapping: ErrorMapping,
  error: unknown,
  { target, where, fault }: FailureSite,
): errors.GatewayError {
  if (
    mapping.closing.aborted &&
    fault?.code !== errors.GatewayErrorCode.Timeout &&
    fault?.code !== errors.GatewayErrorCode.Aborted
  ) {
    return new errors.GatewayClosedError({
      target,
      message: 'The gateway client was closed while the request was in flight.',
      cause: scrubCause(mapping.scrub, fault ?? error),
    });
  }
  if (fault) return fault;
  if (errors.GatewayError.isInstance(error)) return error;
  const cause = scrubCause(mapping.scrub, error);
  const who = target ? `Target '${target}'` : 'The gateway';
  if (error instanceof ProtocolError) {
    return new errors.GatewayJsonRpcError({
      target,
      jsonRpcCode: error.code,
      data: scrubValue(error.data, mapping.scrub),
      message: mapping.scrub(
        `${who} answered with JSON-RPC error ${error.code}: ${error.message}`,
      ),
      cause,
    });
  }
  if (error instanceof SdkHttpError) {
    const text = typeof error.data.text === 'string' ? error.data.text : '';
    const jsonRpcError = scrubValue(parseJsonRpcError(text), mapping.scrub);
    const detail = jsonRpcError
      ? `JSON-RPC ${jsonRpcError.code} ${jsonRpcError.message}`
      : text.trim().slice(0, 300) || error.message;
    return new errors.GatewayHttpError({
      target,
      status: error.status,
      jsonRpcError,
      message: mapping.scrub(
        `The gateway answered HTTP ${error.status}${where ? ` at ${where}` : ''}: ${detail}`,
      ),
      cause,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return new errors.GatewayTimeoutError({
      target,
      timeoutMs: mapping.timeoutMs,
      message: mapping.scrub(`The request timed out: ${message}`),
      cause,
    });
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed)
    return new errors.GatewayConnectionError({
      code: errors.GatewayErrorCode.ConnectionReset,
      target,
      message: 'The connection to the gateway closed before the reply arrived.',
      cause,
    });
  if (brokeProtocol(error))
    return new errors.GatewayProtocolError({
      target,
      message: mapping.scrub(
        `${who} sent a reply the MCP client cannot use: ${message.slice(0, 300)}`,
      ),
      cause,
    });
  return new errors.GatewayError({
    code: errors.GatewayErrorCode.Unknown,
    target,
    message: mapping.scrub(
      `Unexpected failure talking to the gateway: ${message}`,
    ),
    cause,
  });
}

/** SDK codes of a reply that breaks MCP: a content type neither JSON nor SSE, an invalid result, no common revision, endless pages. */
const PROTOCOL_CODES: ReadonlySet<unknown> = new Set([
  SdkErrorCode.ClientHttpUnexpectedContent,
  SdkErrorCode.InvalidResult,
  SdkErrorCode.EraNegotiationFailed,
  SdkErrorCode.ListPaginationExceeded,
]);

/** Whether the SDK refused a reply as not MCP: JSON that does not parse, a message that is not JSON-RPC, or one of {@link PROTOCOL_CODES}. */
function brokeProtocol(error: unknown): boolean {
  if (error instanceof SdkError) return PROTOCOL_CODES.has(error.code);
  return (
    error instanceof SyntaxError ||
    (error instanceof Error && error.name === 'ZodError')
  );
}

/** Whether the gateway rejected the session a request carried: 404, or 400/500 naming the session. */
export function rejectsSession(error: unknown): boolean {
  if (!(error instanceof SdkHttpError)) return false;
  if (error.status === 404) return true;
  if (error.status !== 400 && error.status !== 500) return false;
  const text = typeof error.data.text === 'string' ? error.data.text : '';
  return /session/i.test(parseJsonRpcError(text)?.message ?? text);
}

/** The original error, or a token-free copy of it when its text mentions the token. */
function scrubCause(scrub: (text: string) => string, error: unknown): unknown {
  if (scrub === NO_SCRUB || !(error instanceof Error)) return error;
  let text = `${error.message}\n${error.stack ?? ''}`;
  try {
    text += JSON.stringify(error);
  } catch {
    // circular: the message and stack were checked
  }
  if (scrub(text) === text) return error;
  const copy = new Error(scrub(error.message));
  copy.name = error.name;
  copy.stack = scrub(error.stack ?? '');
  return copy;
}

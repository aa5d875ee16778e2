import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from '@modelcontextprotocol/client';
import * as errors from './errors.js';
import {
  parseJsonRpcError,
  scrubValue,
  type CallContext,
} from './http-layer.js';

/** The scrubber of a client without a token: nothing to remove. */
export const NO_SCRUB = (text: string) => text;

/** What mapping an error needs to know about the client. */
export type ErrorMapping = {
  /** Removes the bearer token from a text. */
  scrub: (text: string) => string;
  /** The client's per-request timeout (for SDK timeouts). */
  timeoutMs: number;
  /** Whether the client was closed (then every failure is `CLIENT_CLOSED`). */
  isClosed: () => boolean;
};

/** Map anything thrown below to a typed, token-free {@link errors.GatewayError}. */
export function toGatewayError(
  mapping: ErrorMapping,
  error: unknown,
  context: CallContext | undefined,
  target: string | undefined,
): errors.GatewayError {
  if (
    mapping.isClosed() &&
    context?.fault?.code !== errors.GatewayErrorCode.Timeout &&
    context?.fault?.code !== errors.GatewayErrorCode.Aborted
  ) {
    return new errors.GatewayClosedError({
      target,
      message: 'The gateway client was closed while the request was in flight.',
      cause: scrubCause(mapping.scrub, context?.fault ?? error),
    });
  }
  if (context?.fault) return context.fault;
  if (errors.GatewayError.isInstance(error)) return error;
  const cause = scrubCause(mapping.scrub, error);
  if (error instanceof ProtocolError) {
    return new errors.GatewayJsonRpcError({
      target,
      jsonRpcCode: error.code,
      data: scrubValue(error.data, mapping.scrub),
      message: mapping.scrub(
        `${target ? `Target '${target}'` : 'The gateway'} answered with JSON-RPC error ${error.code}: ${error.message}`,
      ),
      cause,
    });
  }
  if (error instanceof SdkHttpError) {
    const text = typeof error.data.text === 'string' ? error.data.text : '';
    return new errors.GatewayHttpError({
      target,
      status: error.status,
      jsonRpcError: scrubValue(parseJsonRpcError(text), mapping.scrub),
      message: mapping.scrub(
        `The gateway answered HTTP ${error.status}: ${text.slice(0, 300) || error.message}`,
      ),
      cause,
    });
  }
  if (error instanceof SdkError) {
    const typed = fromSdkError(mapping, error, target, cause);
    if (typed !== undefined) return typed;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new errors.GatewayError({
    code: errors.GatewayErrorCode.Unknown,
    target,
    message: mapping.scrub(
      `Unexpected failure talking to the gateway: ${message}`,
    ),
    cause,
  });
}

/** The typed error of an SDK error whose code says what went wrong, if any. */
function fromSdkError(
  mapping: ErrorMapping,
  error: SdkError,
  target: string | undefined,
  cause: unknown,
): errors.GatewayError | undefined {
  switch (error.code) {
    case SdkErrorCode.RequestTimeout:
      return new errors.GatewayTimeoutError({
        target,
        timeoutMs: mapping.timeoutMs,
        message: mapping.scrub(`The request timed out: ${error.message}`),
        cause,
      });
    case SdkErrorCode.ConnectionClosed:
      return new errors.GatewayConnectionError({
        code: errors.GatewayErrorCode.ConnectionReset,
        target,
        message:
          'The connection to the gateway closed before the reply arrived.',
        cause,
      });
    case SdkErrorCode.InvalidResult:
      return new errors.GatewayMalformedResponseError({
        code: errors.GatewayErrorCode.InvalidResult,
        target,
        message: mapping.scrub(
          `The reply is not a valid result: ${error.message}`,
        ),
        cause,
      });
    case SdkErrorCode.ClientHttpUnexpectedContent:
      return new errors.GatewayMalformedResponseError({
        code: errors.GatewayErrorCode.UnexpectedContentType,
        target,
        message: mapping.scrub(error.message),
        cause,
      });
    case SdkErrorCode.ListPaginationExceeded:
      return new errors.GatewayCursorLoopError({
        target,
        pages: 0,
        message: mapping.scrub(error.message),
        cause,
      });
    case SdkErrorCode.EraNegotiationFailed:
      return new errors.GatewayNegotiationError({
        target,
        message: mapping.scrub(
          `No protocol revision could be agreed: ${error.message}`,
        ),
        cause,
      });
    default:
      return undefined;
  }
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

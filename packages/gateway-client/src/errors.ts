import { createErrorFamily, errorClass } from '@heretek/internal';

/**
 * Every stable error code of `@heretek/gateway-client`. Codes never change
 * meaning between versions; match on them, not on messages.
 *
 * - `INVALID_CONFIG`: an option is wrong (fix the value).
 * - `INVALID_TARGET_NAME`: a target name agentgateway would reject.
 * - `TIMEOUT`: no complete reply within the per-request timeout.
 * - `ABORTED`: the caller's `AbortSignal` fired.
 * - `CONNECTION_REFUSED`: nothing listens at the gateway address.
 * - `CONNECTION_RESET`: the connection dropped before the reply was complete.
 * - `HTTP_STATUS`: the gateway answered with a non-2xx status.
 * - `JSON_RPC_ERROR`: the reply was a JSON-RPC error (unknown tool, bad params ...).
 * - `MALFORMED_JSON`: a JSON reply body that does not parse as a JSON-RPC message.
 * - `MALFORMED_SSE`: an SSE event whose data does not parse as a JSON-RPC message.
 * - `WRONG_RESPONSE_ID`: a response that answers another request id.
 * - `UNEXPECTED_CONTENT_TYPE`: a reply neither JSON nor SSE.
 * - `INVALID_RESULT`: a reply that parses but is not a valid result for the method.
 * - `RESPONSE_TOO_LARGE`: the reply exceeded `maxResponseBytes`.
 * - `SESSION_LOST`: the gateway rejected the session again after a fresh initialize within one request.
 * - `CURSOR_LOOP`: `tools/list` pagination repeated a cursor or never ended.
 * - `NEGOTIATION_FAILED`: no protocol revision could be agreed with the endpoint.
 * - `CLIENT_CLOSED`: the client was closed before or during the request.
 * - `UNKNOWN`: anything else; `cause` carries the original error.
 */
export const GatewayErrorCode = {
  InvalidConfig: 'INVALID_CONFIG',
  InvalidTargetName: 'INVALID_TARGET_NAME',
  Timeout: 'TIMEOUT',
  Aborted: 'ABORTED',
  ConnectionRefused: 'CONNECTION_REFUSED',
  ConnectionReset: 'CONNECTION_RESET',
  HttpStatus: 'HTTP_STATUS',
  JsonRpcError: 'JSON_RPC_ERROR',
  MalformedJson: 'MALFORMED_JSON',
  MalformedSse: 'MALFORMED_SSE',
  WrongResponseId: 'WRONG_RESPONSE_ID',
  UnexpectedContentType: 'UNEXPECTED_CONTENT_TYPE',
  InvalidResult: 'INVALID_RESULT',
  ResponseTooLarge: 'RESPONSE_TOO_LARGE',
  SessionLost: 'SESSION_LOST',
  CursorLoop: 'CURSOR_LOOP',
  NegotiationFailed: 'NEGOTIATION_FAILED',
  ClientClosed: 'CLIENT_CLOSED',
  Unknown: 'UNKNOWN',
} as const;

/** Options shared by every gateway error constructor. */
type GatewayErrorOptions = {
  /** What went wrong and what to do about it. Never contains the bearer token. */
  message: string;
  /** The target (backend) the request was for, when there was one. */
  target?: string | undefined;
  /** The underlying error, already scrubbed of the bearer token. */
  cause?: unknown;
};

const GatewayErrorFamily =
  createErrorFamily<typeof GatewayErrorCode>('gateway-client');

/** One of the {@link GatewayErrorCode} values. */
export type GatewayErrorCode = InstanceType<typeof GatewayErrorFamily>['code'];

/**
 * Base class of every error this package throws, declared with the
 * workspace's error-family helper. Carries a stable `code`, whether
 * retrying the same request later may succeed (`isRetryable`), the target
 * and the underlying `cause`. Use {@link GatewayError.isInstance} rather
 * than `instanceof` across package copies.
 */
export class GatewayError extends GatewayErrorFamily {
  /** The target the request was for, if any. */
  readonly target: string | undefined;
  /** The underlying error (scrubbed of the bearer token). */
  declare readonly cause: unknown;

  constructor(
    options: GatewayErrorOptions & {
      code: GatewayErrorCode;
      isRetryable?: boolean;
    },
  ) {
    super(options);
    this.target = options.target;
  }
}

/** A wrong option; fix the configuration. */
export class GatewayConfigError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.InvalidConfig, GatewayErrorCode.InvalidTargetName],
  details: (
    options: GatewayErrorOptions & {
      /** The option at fault, e.g. `url` (a command-line layer may name its environment variable instead). */
      setting: string;
      code?: 'INVALID_CONFIG' | 'INVALID_TARGET_NAME';
    },
  ) => ({
    ...options,
    code: options.code ?? GatewayErrorCode.InvalidConfig,
    isRetryable: false,
  }),
  keep: ['setting'],
}) {}

/** No complete reply within the per-request timeout. */
export class GatewayTimeoutError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.Timeout],
  details: (
    options: GatewayErrorOptions & {
      /** The timeout that elapsed, in milliseconds. */
      timeoutMs: number;
    },
  ) => ({ ...options, code: GatewayErrorCode.Timeout, isRetryable: true }),
  keep: ['timeoutMs'],
}) {}

/** The caller cancelled the request through its `AbortSignal`. */
export class GatewayAbortedError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.Aborted],
  details: (options: GatewayErrorOptions) => ({
    ...options,
    code: GatewayErrorCode.Aborted,
    isRetryable: false,
  }),
}) {}

/** The TCP connection was refused or dropped. */
export class GatewayConnectionError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.ConnectionRefused, GatewayErrorCode.ConnectionReset],
  details: (
    options: GatewayErrorOptions & {
      code: 'CONNECTION_REFUSED' | 'CONNECTION_RESET';
    },
  ) => ({ ...options, isRetryable: true }),
}) {}

/** A JSON-RPC error object as sent by the server or gateway. */
export type JsonRpcErrorObject = {
  code: number;
  message: string;
  data?: unknown;
};

/** The gateway answered with a non-2xx HTTP status. */
export class GatewayHttpError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.HttpStatus],
  details: (
    options: GatewayErrorOptions & {
      /** The HTTP status code. */
      status: number;
      /** The JSON-RPC error in the body, when the body carried one. */
      jsonRpcError?: JsonRpcErrorObject | undefined;
    },
  ) => ({
    ...options,
    code: GatewayErrorCode.HttpStatus,
    isRetryable:
      options.status >= 500 || options.status === 429 || options.status === 408,
  }),
  keep: ['status', 'jsonRpcError'],
}) {}

/** The reply was a JSON-RPC error (for example an unknown tool, -32602). */
export class GatewayJsonRpcError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.JsonRpcError],
  details: (
    options: GatewayErrorOptions & {
      /** The JSON-RPC error code. */
      jsonRpcCode: number;
      /** The JSON-RPC error `data`, if any. */
      data?: unknown;
    },
  ) => ({
    ...options,
    code: GatewayErrorCode.JsonRpcError,
    isRetryable: false,
  }),
  keep: ['jsonRpcCode', 'data'],
}) {}

/** The reply could not be understood (bad JSON, bad SSE, wrong id, wrong content type, invalid result). */
export class GatewayMalformedResponseError extends errorClass(GatewayError, {
  codes: [
    GatewayErrorCode.MalformedJson,
    GatewayErrorCode.MalformedSse,
    GatewayErrorCode.WrongResponseId,
    GatewayErrorCode.UnexpectedContentType,
    GatewayErrorCode.InvalidResult,
  ],
  details: (
    options: GatewayErrorOptions & {
      code:
        | 'MALFORMED_JSON'
        | 'MALFORMED_SSE'
        | 'WRONG_RESPONSE_ID'
        | 'UNEXPECTED_CONTENT_TYPE'
        | 'INVALID_RESULT';
    },
  ) => ({ ...options, isRetryable: false }),
}) {}

/** The reply exceeded the configured size cap. */
export class GatewayResponseTooLargeError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.ResponseTooLarge],
  details: (
    options: GatewayErrorOptions & {
      /** The cap that was exceeded, in bytes. */
      limitBytes: number;
    },
  ) => ({
    ...options,
    code: GatewayErrorCode.ResponseTooLarge,
    isRetryable: false,
  }),
  keep: ['limitBytes'],
}) {}

/** The gateway rejected the session again after a fresh initialize within one request. */
export class GatewaySessionLostError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.SessionLost],
  details: (options: GatewayErrorOptions) => ({
    ...options,
    code: GatewayErrorCode.SessionLost,
    isRetryable: true,
  }),
}) {}

/** `tools/list` pagination repeated a cursor or exceeded the page cap. */
export class GatewayCursorLoopError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.CursorLoop],
  details: (
    options: GatewayErrorOptions & {
      /** Pages fetched before giving up. */
      pages: number;
    },
  ) => ({ ...options, code: GatewayErrorCode.CursorLoop, isRetryable: false }),
  keep: ['pages'],
}) {}

/** No protocol revision could be agreed with the endpoint. */
export class GatewayNegotiationError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.NegotiationFailed],
  details: (options: GatewayErrorOptions) => ({
    ...options,
    code: GatewayErrorCode.NegotiationFailed,
    isRetryable: false,
  }),
}) {}

/** The client was closed. */
export class GatewayClosedError extends errorClass(GatewayError, {
  codes: [GatewayErrorCode.ClientClosed],
  details: (options: GatewayErrorOptions) => ({
    ...options,
    code: GatewayErrorCode.ClientClosed,
    isRetryable: false,
  }),
}) {}

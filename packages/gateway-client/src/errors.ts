import { createErrorFamily, errorClass } from '@heretek/internal';

/**
 * Every stable error code of `@heretek/gateway-client`, one per thing a
 * caller can do about it (the package README's table says what). Codes never
 * change meaning between versions; match on them (and on `isRetryable`), not
 * on messages.
 */
export const GatewayErrorCode = {
  InvalidConfig: 'INVALID_CONFIG',
  Timeout: 'TIMEOUT',
  Aborted: 'ABORTED',
  ClientClosed: 'CLIENT_CLOSED',
  ConnectionRefused: 'CONNECTION_REFUSED',
  ConnectionReset: 'CONNECTION_RESET',
  HttpStatus: 'HTTP_STATUS',
  JsonRpcError: 'JSON_RPC_ERROR',
  ProtocolError: 'PROTOCOL_ERROR',
  ResponseTooLarge: 'RESPONSE_TOO_LARGE',
  Unknown: 'UNKNOWN',
} as const;

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

export type GatewayErrorCode = InstanceType<typeof GatewayErrorFamily>['code'];

/**
 * Base class of every error this package throws: a stable `code`,
 * `isRetryable`, the target and the `cause`. Use
 * {@link GatewayError.isInstance} rather than `instanceof` across package copies.
 */
export class GatewayError extends GatewayErrorFamily {
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

/** A class of one code whose errors carry the common options and `Extra`, those in `keep` as properties. */
const classOf =
  <Extra extends object = object>() =>
  <const Code extends GatewayErrorCode, const Keep extends keyof Extra = never>(
    code: Code,
    keep: readonly Keep[] = [],
    isRetryable = false,
  ) =>
    errorClass(GatewayError, {
      codes: [code],
      details: (options: GatewayErrorOptions & Extra) => ({
        ...options,
        code,
        isRetryable,
      }),
      keep,
    });

/** A wrong option; fix the configuration. */
export class GatewayConfigError extends classOf<{
  /** The option at fault, e.g. `url` (a command-line layer may name its environment variable instead). */
  setting: string;
}>()(GatewayErrorCode.InvalidConfig, ['setting']) {}

/** No complete reply within the per-request timeout. */
export class GatewayTimeoutError extends classOf<{
  /** The timeout that elapsed, in milliseconds. */
  timeoutMs: number;
}>()(GatewayErrorCode.Timeout, ['timeoutMs'], true) {}

/** The caller cancelled the request through its `AbortSignal`. */
export class GatewayAbortedError extends classOf()(GatewayErrorCode.Aborted) {}

/** The TCP connection was refused, or the connection or session dropped before the reply was complete. */
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
export class GatewayJsonRpcError extends classOf<{
  jsonRpcCode: number;
  /** The JSON-RPC error `data`, if any. */
  data?: unknown;
}>()(GatewayErrorCode.JsonRpcError, ['jsonRpcCode', 'data']) {}

/** The gateway or backend broke MCP (see {@link GatewayErrorCode}). */
export class GatewayProtocolError extends classOf()(
  GatewayErrorCode.ProtocolError,
) {}

/** The reply exceeded the configured size cap. */
export class GatewayResponseTooLargeError extends classOf<{
  /** The cap that was exceeded, in bytes. */
  limitBytes: number;
}>()(GatewayErrorCode.ResponseTooLarge, ['limitBytes']) {}

/** The client was closed. */
export class GatewayClosedError extends classOf()(
  GatewayErrorCode.ClientClosed,
) {}

const BROKER_ERROR_MARKER = Symbol.for('heretek.broker.BrokerError');

/**
 * Stable codes of {@link BrokerError}:
 * - `UNKNOWN_TOOL`: the name is not in the catalog (and cannot be passed through).
 * - `ROLE_FORBIDDEN`: a read-only role asked for a mutating (or unknown) tool.
 * - `INVALID_ARGUMENTS`: the arguments fail the tool's JSON Schema; nothing was sent.
 * - `NO_GATEWAY`: the broker runs offline; the call was checked but not sent.
 * - `CIRCUIT_OPEN`: the backend failed repeatedly and is paused.
 * - `BACKEND_FAILED`: the gateway or backend failed (timeout, HTTP, protocol).
 * - `CANCELLED`: the caller cancelled the call; the gateway was told.
 */
export type BrokerErrorCode =
  | 'UNKNOWN_TOOL'
  | 'ROLE_FORBIDDEN'
  | 'INVALID_ARGUMENTS'
  | 'NO_GATEWAY'
  | 'CIRCUIT_OPEN'
  | 'BACKEND_FAILED'
  | 'CANCELLED';

/** A refused or failed broker operation. The message is written for the calling agent. */
export class BrokerError extends Error {
  readonly [BROKER_ERROR_MARKER] = true;
  readonly code: BrokerErrorCode;
  /** The tool the operation was about, when there is one. */
  readonly toolName: string | undefined;
  /** True when the same call may succeed later unchanged. */
  readonly isRetryable: boolean;

  constructor(options: {
    code: BrokerErrorCode;
    message: string;
    toolName?: string;
    isRetryable?: boolean;
    cause?: unknown;
  }) {
    super(options.message, { cause: options.cause });
    this.name = 'BrokerError';
    this.code = options.code;
    this.toolName = options.toolName;
    this.isRetryable = options.isRetryable ?? false;
  }

  /** True for a BrokerError from any copy of this package. */
  static isInstance(error: unknown): error is BrokerError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[BROKER_ERROR_MARKER] === true
    );
  }
}

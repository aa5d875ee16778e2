const MARKER = Symbol.for('@heretek/catalog.error');

/**
 * Stable error codes of `@heretek/catalog`.
 *
 * - `INVALID_BACKENDS_FILE`: a backends file is missing, not JSON, or has a bad entry.
 * - `INVALID_TARGET`: a target name is empty or contains characters other than letters, digits, `-` and `.` (notably `_`).
 * - `INVALID_TOOL`: a tool given to the catalog lacks a name or has a malformed field.
 * - `DUPLICATE_TOOL`: the same qualified name appears twice in one replacement or construction.
 * - `INVALID_ARGUMENT`: an option has the wrong type or range.
 */
export type CatalogErrorCode =
  | 'INVALID_BACKENDS_FILE'
  | 'INVALID_TARGET'
  | 'INVALID_TOOL'
  | 'DUPLICATE_TOOL'
  | 'INVALID_ARGUMENT';

/** Base error of `@heretek/catalog`: every error it throws is one of these. */
export class CatalogError extends Error {
  private readonly [MARKER] = true;
  /** Stable machine-readable code. */
  readonly code: CatalogErrorCode;
  /** Always `false`: catalog errors are caused by input and do not go away on retry. */
  readonly isRetryable = false;

  /** Creates an error with a stable code and a message that says what to fix. */
  constructor(options: {
    code: CatalogErrorCode;
    message: string;
    cause?: unknown;
  }) {
    super(
      options.message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'CatalogError';
    this.code = options.code;
  }

  /** `true` for any `CatalogError`, even one from another copy of this package. */
  static isInstance(error: unknown): error is CatalogError {
    return (
      typeof error === 'object' &&
      error !== null &&
      MARKER in error &&
      (error as Record<symbol, unknown>)[MARKER] === true
    );
  }
}

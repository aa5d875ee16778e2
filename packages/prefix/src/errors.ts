/**
 * Errors of `@heretek/prefix`. Every error is a {@link PrefixError} with a
 * stable {@link PrefixErrorCode}, so callers can branch on `error.code`
 * instead of parsing messages.
 */

const PREFIX_ERROR_MARKER = Symbol.for('heretek.prefix.PrefixError');

/**
 * Stable codes of every error this package throws.
 *
 * - `UNKNOWN_ROLE`: a role name that is not one of the six roles.
 * - `UNKNOWN_PROFILE`: a profile name that is not one of the five profiles.
 * - `ROLE_FILE_MISSING`: a prompt source under `roles/` does not exist.
 * - `ROLE_FILE_EMPTY`: a prompt source is empty or holds only whitespace.
 * - `ROLE_FILE_UNREADABLE`: a prompt source exists but cannot be read as a file.
 * - `INVALID_ARGUMENT`: an option has the wrong type or value.
 * - `TOO_MANY_CACHE_BREAKPOINTS`: more cache breakpoints than a provider request allows.
 */
export type PrefixErrorCode =
  | 'UNKNOWN_ROLE'
  | 'UNKNOWN_PROFILE'
  | 'ROLE_FILE_MISSING'
  | 'ROLE_FILE_EMPTY'
  | 'ROLE_FILE_UNREADABLE'
  | 'INVALID_ARGUMENT'
  | 'TOO_MANY_CACHE_BREAKPOINTS';

/** Base class of every error thrown by `@heretek/prefix`. */
export class PrefixError extends Error {
  readonly [PREFIX_ERROR_MARKER] = true;
  /** Stable machine-readable code. */
  readonly code: PrefixErrorCode;
  /** True when retrying the same call unchanged could succeed. Always false here: fix the input. */
  readonly isRetryable: boolean = false;

  constructor({
    code,
    message,
    cause,
  }: {
    code: PrefixErrorCode;
    message: string;
    cause?: unknown;
  }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'PrefixError';
    this.code = code;
  }

  /** True for a PrefixError (or subclass) from any copy of this package. */
  static isInstance(error: unknown): error is PrefixError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[PREFIX_ERROR_MARKER] === true
    );
  }
}

/** Thrown when a profile name is not one of the five profiles. */
export class UnknownProfileError extends PrefixError {
  /** The rejected name. */
  readonly profile: string;

  constructor({
    profile,
    expected,
  }: {
    profile: string;
    expected: readonly string[];
  }) {
    super({
      code: 'UNKNOWN_PROFILE',
      message: `Unknown profile ${JSON.stringify(profile)}: expected one of ${expected.join(', ')}.`,
    });
    this.name = 'UnknownProfileError';
    this.profile = profile;
  }
}

/** Which problem a {@link RoleFileError} reports. */
export type RoleFileErrorCode =
  'ROLE_FILE_MISSING' | 'ROLE_FILE_EMPTY' | 'ROLE_FILE_UNREADABLE';

/**
 * Thrown when a prompt source file is missing, empty or unreadable. `file`
 * names it relative to the workspace root (e.g. `roles/director.md`);
 * `path` is where it was looked for.
 */
export class RoleFileError extends PrefixError {
  declare readonly code: RoleFileErrorCode;
  /** The file relative to the workspace root, POSIX separators. */
  readonly file: string;
  /** The resolved path that was read. */
  readonly path: string;

  constructor({
    code,
    file,
    path,
    cause,
  }: {
    code: RoleFileErrorCode;
    file: string;
    path: string;
    cause?: unknown;
  }) {
    const what =
      code === 'ROLE_FILE_MISSING'
        ? `is missing: create it`
        : code === 'ROLE_FILE_EMPTY'
          ? `is empty: write the prompt text into it`
          : `cannot be read as a file: make it a readable regular file`;
    super({
      code,
      message: `Prompt source ${file} ${what} (looked at ${path}).`,
      cause,
    });
    this.name = 'RoleFileError';
    this.file = file;
    this.path = path;
  }
}

/** Thrown when an option has the wrong type or value; the message names the option. */
export class InvalidArgumentError extends PrefixError {
  /** The option that was wrong. */
  readonly argument: string;

  constructor({ argument, message }: { argument: string; message: string }) {
    super({ code: 'INVALID_ARGUMENT', message });
    this.name = 'InvalidArgumentError';
    this.argument = argument;
  }
}

/** Thrown when a request would carry more cache breakpoints than the provider allows. */
export class TooManyCacheBreakpointsError extends PrefixError {
  /** Breakpoints requested, including those reserved for the caller. */
  readonly requested: number;
  /** The provider's limit per request. */
  readonly limit: number;

  constructor({
    requested,
    limit,
    reserved,
  }: {
    requested: number;
    limit: number;
    reserved: number;
  }) {
    super({
      code: 'TOO_MANY_CACHE_BREAKPOINTS',
      message: `${requested - reserved} cache breakpoints plus ${reserved} reserved for the caller exceed the provider limit of ${limit} per request: choose fewer breakpoints or reserve fewer.`,
    });
    this.name = 'TooManyCacheBreakpointsError';
    this.requested = requested;
    this.limit = limit;
  }
}

/**
 * Errors of `@heretek/prefix`. Every error is a {@link PrefixError} with a
 * stable {@link PrefixErrorCode}, so callers can branch on `error.code`
 * instead of parsing messages.
 */
import { createErrorFamily } from '@heretek/internal';

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
 * - `OPTIONAL_DEPENDENCY_MISSING`: a token estimate or a diff was asked for,
 *   and the optional peer dependency that computes it (`js-tiktoken` or
 *   `diff`) is not installed.
 */
export const PrefixErrorCode = {
  UnknownRole: 'UNKNOWN_ROLE',
  UnknownProfile: 'UNKNOWN_PROFILE',
  RoleFileMissing: 'ROLE_FILE_MISSING',
  RoleFileEmpty: 'ROLE_FILE_EMPTY',
  RoleFileUnreadable: 'ROLE_FILE_UNREADABLE',
  InvalidArgument: 'INVALID_ARGUMENT',
  TooManyCacheBreakpoints: 'TOO_MANY_CACHE_BREAKPOINTS',
  OptionalDependencyMissing: 'OPTIONAL_DEPENDENCY_MISSING',
} as const;

/**
 * Base class of every error thrown by `@heretek/prefix`. None is retryable
 * (`isRetryable: false`): fix the input. `PrefixError.isInstance(error)`
 * holds across copies of the package.
 */
export class PrefixError extends createErrorFamily<typeof PrefixErrorCode>(
  'prefix',
) {}

/** One of the {@link PrefixErrorCode} values. */
export type PrefixErrorCode = PrefixError['code'];

/** Thrown when a profile name is not one of the five profiles. Code `UNKNOWN_PROFILE`. */
export class UnknownProfileError extends PrefixError {
  static override readonly codes = [PrefixErrorCode.UnknownProfile];
  declare readonly code: typeof PrefixErrorCode.UnknownProfile;
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
      code: PrefixErrorCode.UnknownProfile,
      message: `Unknown profile ${JSON.stringify(profile)}: expected one of ${expected.join(', ')}.`,
    });
    this.profile = profile;
  }
}

/** Which problem a {@link RoleFileError} reports. */
export type RoleFileErrorCode =
  'ROLE_FILE_MISSING' | 'ROLE_FILE_EMPTY' | 'ROLE_FILE_UNREADABLE';

const ROLE_FILE_CODES: readonly string[] = [
  'ROLE_FILE_MISSING',
  'ROLE_FILE_EMPTY',
  'ROLE_FILE_UNREADABLE',
];

/**
 * Thrown when a prompt source file is missing, empty or unreadable. `file`
 * names it relative to the workspace root (e.g. `roles/director.md`);
 * `path` is where it was looked for.
 */
export class RoleFileError extends PrefixError {
  static override readonly codes = ROLE_FILE_CODES;
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
      code === PrefixErrorCode.RoleFileMissing
        ? `is missing: create it`
        : code === PrefixErrorCode.RoleFileEmpty
          ? `is empty: write the prompt text into it`
          : `cannot be read as a file: make it a readable regular file`;
    super({
      code,
      message: `Prompt source ${file} ${what} (looked at ${path}).`,
      cause,
    });
    this.file = file;
    this.path = path;
  }
}

/** Thrown when an option has the wrong type or value; the message names the option. */
export class InvalidArgumentError extends PrefixError {
  static override readonly codes = [PrefixErrorCode.InvalidArgument];
  declare readonly code: typeof PrefixErrorCode.InvalidArgument;
  /** The option that was wrong. */
  readonly argument: string;

  constructor({ argument, message }: { argument: string; message: string }) {
    super({ code: PrefixErrorCode.InvalidArgument, message });
    this.argument = argument;
  }
}

/** Thrown when a request would carry more cache breakpoints than the provider allows. */
export class TooManyCacheBreakpointsError extends PrefixError {
  static override readonly codes = [PrefixErrorCode.TooManyCacheBreakpoints];
  declare readonly code: typeof PrefixErrorCode.TooManyCacheBreakpoints;
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
      code: PrefixErrorCode.TooManyCacheBreakpoints,
      message: `${requested - reserved} cache breakpoints plus ${reserved} reserved for the caller exceed the provider limit of ${limit} per request: choose fewer breakpoints or reserve fewer.`,
    });
    this.requested = requested;
    this.limit = limit;
  }
}

/**
 * Errors of `@heretek/prefix`. Every error is a {@link PrefixError} with a
 * stable {@link PrefixErrorCode}, so callers can branch on `error.code`
 * instead of parsing messages.
 */
import { createErrorFamily, errorClass } from '@heretek/internal';

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
export class UnknownProfileError extends errorClass(PrefixError, {
  code: PrefixErrorCode.UnknownProfile,
  message: ({
    profile,
    expected,
  }: {
    /** The rejected name. */
    profile: string;
    expected: readonly string[];
  }) =>
    `Unknown profile ${JSON.stringify(profile)}: expected one of ${expected.join(', ')}.`,
  keep: ['profile'],
}) {}

/** Which problem a {@link RoleFileError} reports. */
export type RoleFileErrorCode =
  'ROLE_FILE_MISSING' | 'ROLE_FILE_EMPTY' | 'ROLE_FILE_UNREADABLE';

const ROLE_FILE_PROBLEMS = {
  ROLE_FILE_MISSING: 'is missing: create it',
  ROLE_FILE_EMPTY: 'is empty: write the prompt text into it',
  ROLE_FILE_UNREADABLE:
    'cannot be read as a file: make it a readable regular file',
} as const satisfies Record<RoleFileErrorCode, string>;

/**
 * Thrown when a prompt source file is missing, empty or unreadable. `file`
 * names it relative to the workspace root (e.g. `roles/director.md`);
 * `path` is where it was looked for.
 */
export class RoleFileError extends errorClass(PrefixError, {
  codes: [
    PrefixErrorCode.RoleFileMissing,
    PrefixErrorCode.RoleFileEmpty,
    PrefixErrorCode.RoleFileUnreadable,
  ],
  details: ({
    code,
    file,
    path,
    cause,
  }: {
    code: RoleFileErrorCode;
    /** The file relative to the workspace root, POSIX separators. */
    file: string;
    /** The resolved path that was read. */
    path: string;
    cause?: unknown;
  }) => ({
    code,
    message: `Prompt source ${file} ${ROLE_FILE_PROBLEMS[code]} (looked at ${path}).`,
    cause,
  }),
  keep: ['file', 'path'],
}) {}

/** Thrown when an option has the wrong type or value; the message names the option. */
export class InvalidArgumentError extends errorClass(PrefixError, {
  code: PrefixErrorCode.InvalidArgument,
  message: ({
    message,
  }: {
    /** The option that was wrong. */
    argument: string;
    message: string;
  }) => message,
  keep: ['argument'],
}) {}

/** Thrown when a request would carry more cache breakpoints than the provider allows. */
export class TooManyCacheBreakpointsError extends errorClass(PrefixError, {
  code: PrefixErrorCode.TooManyCacheBreakpoints,
  message: ({
    requested,
    limit,
    reserved,
  }: {
    /** Breakpoints requested, including those reserved for the caller. */
    requested: number;
    /** The provider's limit per request. */
    limit: number;
    reserved: number;
  }) =>
    `${requested - reserved} cache breakpoints plus ${reserved} reserved for the caller exceed the provider limit of ${limit} per request: choose fewer breakpoints or reserve fewer.`,
  keep: ['requested', 'limit'],
}) {}

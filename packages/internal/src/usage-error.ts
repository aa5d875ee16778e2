/** A CLI was called wrongly (a missing or unknown command, a bad value); its message says what. */
export class UsageError extends Error {}

/**
 * Whether `error` is about how a CLI was called: a {@link UsageError}, or an
 * `ERR_PARSE_ARGS_*` error of `node:util`'s `parseArgs` (an unknown option, a
 * missing value). A CLI answers these with its usage text and exit code 2.
 */
export function isUsageError(error: unknown): boolean {
  return (
    error instanceof UsageError ||
    (typeof error === 'object' &&
      error !== null &&
      'code' in error &&
      typeof error.code === 'string' &&
      error.code.startsWith('ERR_PARSE_ARGS'))
  );
}

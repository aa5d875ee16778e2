/**
 * For tests: the code of the error of `family` (a class made with
 * `createErrorFamily`) that `run` throws; `undefined` when it returns, and
 * `not a <family>: …` for anything else it throws.
 */
export function thrownCode(
  family: {
    readonly name: string;
    isInstance(error: unknown): error is { readonly code: string };
  },
  run: () => unknown,
): string | undefined {
  try {
    run();
  } catch (error) {
    return family.isInstance(error)
      ? error.code
      : `not a ${family.name}: ${String(error)}`;
  }
  return undefined;
}

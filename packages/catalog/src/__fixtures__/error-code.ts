// Test fixture: what a catalog call threw, read as its error code.
import { CatalogError } from '../errors.js';

/**
 * The code of the {@link CatalogError} that `run` throws; `undefined` when
 * it returns, and `not a CatalogError: …` for anything else it throws.
 */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return CatalogError.isInstance(error)
      ? error.code
      : `not a CatalogError: ${String(error)}`;
  }
  return undefined;
}

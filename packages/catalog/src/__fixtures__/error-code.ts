// Test fixture: what a catalog call threw, read as its error code.
import { thrownCode } from '@heretek/internal';
import { CatalogError } from '../errors.js';

/**
 * The code of the {@link CatalogError} that `run` throws; `undefined` when
 * it returns, and `not a CatalogError: …` for anything else it throws.
 */
export const codeOf = (run: () => unknown): string | undefined =>
  thrownCode(CatalogError, run);

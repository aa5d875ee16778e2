import { createErrorFamily } from '@heretek/internal';

/**
 * Stable error codes of `@heretek/catalog`.
 *
 * - `INVALID_BACKENDS_FILE`: a backends file is missing, not JSON, or has a bad entry.
 * - `INVALID_TARGET`: a target name breaks the agentgateway rule (1-253 characters of lowercase letters, digits, `-` and `.`; notably no `_`).
 * - `INVALID_TOOL`: a tool given to the catalog lacks a name or has a malformed field.
 * - `DUPLICATE_TOOL`: the same qualified name appears twice in one replacement or construction.
 * - `INVALID_ARGUMENT`: an option has the wrong type or range.
 * - `INVALID_USAGE`: a usage record (learned from use) is malformed.
 * - `INVALID_SAVED_CATALOG`: a saved catalog is corrupt (truncated, digest mismatch) or inconsistent with its entries.
 * - `SAVED_CATALOG_VERSION`: a saved catalog was written by another layout or catalog version.
 * - `EMBEDDINGS_FAILED`: an embeddings endpoint did not answer, timed out, or answered something that is not one vector per input (the only retryable code).
 */
export const CatalogErrorCode = {
  InvalidBackendsFile: 'INVALID_BACKENDS_FILE',
  InvalidTarget: 'INVALID_TARGET',
  InvalidTool: 'INVALID_TOOL',
  DuplicateTool: 'DUPLICATE_TOOL',
  InvalidArgument: 'INVALID_ARGUMENT',
  InvalidUsage: 'INVALID_USAGE',
  InvalidSavedCatalog: 'INVALID_SAVED_CATALOG',
  SavedCatalogVersion: 'SAVED_CATALOG_VERSION',
  EmbeddingsFailed: 'EMBEDDINGS_FAILED',
} as const;

/**
 * Base error of `@heretek/catalog`: every error it throws is one of these (`isRetryable` only
 * for `EMBEDDINGS_FAILED`); `CatalogError.isInstance` holds across copies of the package.
 */
export class CatalogError extends createErrorFamily<typeof CatalogErrorCode>(
  'catalog',
) {}

/** One of the {@link CatalogErrorCode} values. */
export type CatalogErrorCode = CatalogError['code'];

/** The `INVALID_ARGUMENT` error of a caller's bad option. */
export function invalidArgument(message: string): CatalogError {
  return new CatalogError({ code: CatalogErrorCode.InvalidArgument, message });
}

/** The `INVALID_USAGE` error of a malformed use or usage record. */
export function invalidUsage(message: string): CatalogError {
  return new CatalogError({ code: CatalogErrorCode.InvalidUsage, message });
}

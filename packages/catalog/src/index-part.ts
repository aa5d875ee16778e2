import { sha256Hex } from '@heretek/internal';
import { CatalogError, CatalogErrorCode } from './errors.js';
import { FIELD_NAMES, type FieldName } from './prepare.js';
import type { ToolEntry } from './types.js';
import { VERSION } from './version.js';

/** The `format` tag of a {@link BackendIndexPart}. */
export const INDEX_PART_FORMAT = 'heretek-catalog/backend-index';
/**
 * Version of the {@link BackendIndexPart} layout and of the analysis behind its terms
 * (tokenizer, stop words, stemmer, fields). Raised whenever any of them changes, so a part
 * written by another analysis is refused, never mixed in.
 */
export const INDEX_PART_VERSION = 1;

/** One tool of a {@link BackendIndexPart}: its entry and its analyzed terms per field. */
export type BackendIndexTool = {
  /** The catalog entry, as it was given to the catalog. */
  entry: ToolEntry;
  /** The tool's search terms per indexed field, as the catalog's analysis produced them. */
  fields: Record<FieldName, string[]>;
};

/**
 * What rebuilding one backend's part of the index needs, in a JSON-serialisable form: the
 * entries and their analyzed terms (the costly part of indexing). Written by
 * {@link ToolCatalog.exportBackend}, read back by {@link ToolCatalog.importBackends}, which
 * checks every field and the digest and refuses anything corrupt, foreign or inconsistent.
 */
export type BackendIndexPart = {
  /** Always {@link INDEX_PART_FORMAT}. */
  format: typeof INDEX_PART_FORMAT;
  /** {@link INDEX_PART_VERSION} of the writer. */
  version: number;
  /** `VERSION` of the `@heretek/catalog` that wrote it. */
  catalogVersion: string;
  /** The gateway target whose tools these are. */
  target: string;
  /** The target's tools, in catalog order. */
  tools: BackendIndexTool[];
  /** Lowercase hex SHA-256 of `JSON.stringify([target, tools])`. */
  digest: string;
};

/** Digest of a part's content. */
export function indexPartDigest(
  target: string,
  tools: readonly BackendIndexTool[],
): string {
  return sha256Hex(JSON.stringify([target, tools]));
}

/** A term as the analysis writes it: letters, marks and digits only. */
const TERM = /^[\p{L}\p{M}\p{N}]+$/u;

function refuse(where: string, problem: string): never {
  throw new CatalogError({
    code: CatalogErrorCode.InvalidIndexPart,
    message: `${where}: ${problem}; rebuild it from the backend's listing.`,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkFields(
  value: unknown,
  where: string,
): Record<FieldName, string[]> {
  if (!isRecord(value)) refuse(where, '"fields" must be an object');
  const keys = Object.keys(value);
  if (
    keys.length !== FIELD_NAMES.length ||
    !FIELD_NAMES.every((field) => keys.includes(field))
  )
    refuse(where, `"fields" must have exactly ${FIELD_NAMES.join(', ')}`);
  for (const field of FIELD_NAMES) {
    const terms = value[field];
    if (!Array.isArray(terms))
      refuse(where, `"fields.${field}" must be an array of terms`);
    // Identifiers keep their punctuation; the catalog checks them against the entry.
    const pattern = field === 'identifier' ? /^./su : TERM;
    for (const term of terms as unknown[])
      if (typeof term !== 'string' || !pattern.test(term))
        refuse(
          where,
          `"fields.${field}" holds ${JSON.stringify(term)}, which is not an analyzed term`,
        );
  }
  return value as Record<FieldName, string[]>;
}

/**
 * Checks that `value` is a {@link BackendIndexPart} this catalog can use: format, version,
 * shape of every tool and term, and the digest over the content. Entries themselves are
 * checked by the catalog when the part is applied.
 *
 * @throws CatalogError `INDEX_PART_VERSION` when another format, layout or catalog version
 * wrote it; `INVALID_INDEX_PART` when it is malformed or its digest does not match.
 */
export function checkIndexPart(
  value: unknown,
  where: string,
): BackendIndexPart {
  if (!isRecord(value)) refuse(where, 'an index part must be an object');
  if (value.format !== INDEX_PART_FORMAT)
    throw new CatalogError({
      code: CatalogErrorCode.IndexPartVersion,
      message: `${where}: format ${JSON.stringify(value.format)} is not "${INDEX_PART_FORMAT}"; rebuild it from the backend's listing.`,
    });
  if (value.version !== INDEX_PART_VERSION || value.catalogVersion !== VERSION)
    throw new CatalogError({
      code: CatalogErrorCode.IndexPartVersion,
      message: `${where}: written by @heretek/catalog ${JSON.stringify(value.catalogVersion)} (layout ${JSON.stringify(value.version)}), this is ${VERSION} (layout ${INDEX_PART_VERSION}); rebuild it from the backend's listing.`,
    });
  if (typeof value.target !== 'string' || value.target === '')
    refuse(where, '"target" must be a non-empty string');
  if (!Array.isArray(value.tools)) refuse(where, '"tools" must be an array');
  const tools = (value.tools as unknown[]).map((tool, position) => {
    const at = `${where} tools[${position}]`;
    if (!isRecord(tool) || !isRecord(tool.entry))
      refuse(at, 'each tool must be { entry, fields }');
    checkFields(tool.fields, at);
    return tool as BackendIndexTool;
  });
  if (
    typeof value.digest !== 'string' ||
    value.digest !== indexPartDigest(value.target, tools)
  )
    refuse(where, 'its digest does not match its content (corrupt)');
  return value as BackendIndexPart;
}

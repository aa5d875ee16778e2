import { TERMS } from './terms.js';
import { analyzeText, normalizeName } from './tokenizer.js';
import type { ToolEntry } from './types.js';

/**
 * Indexed fields of a tool: name words, the exact names as single tokens (bare and
 * qualified, lower-cased), target words, description, parameter names, and parameter
 * descriptions with enum values.
 */
export const FIELD_NAMES = [
  'name',
  'identifier',
  'target',
  'description',
  'parameters',
  'parameterText',
] as const;
/** Name of one indexed field. */
export type FieldName = (typeof FIELD_NAMES)[number];

/** Number of indexed fields. */
export const FIELD_COUNT = FIELD_NAMES.length;

/**
 * A tool with its search terms prepared once (reused across index rebuilds and catalogs).
 * `terms` holds, first, the end of each field's ids in `terms` (one slot per field, in
 * {@link FIELD_NAMES} order), then the term ids ({@link TERMS}) of each field, one field
 * after another.
 */
export type PreparedTool = {
  /** The catalog entry. */
  entry: ToolEntry;
  /** Field ends, then term ids per field. */
  terms: Int32Array;
};

/** Term ids of every tool are carved out of shared blocks (one typed array per tool would cost more than its ids). */
const BLOCK = 1 << 16;
let block = new Int32Array(BLOCK);
let blockUsed = 0;

/** A zeroed view of `length` ints for one tool's terms. */
function termSlots(length: number): Int32Array {
  if (length > BLOCK >> 4) return new Int32Array(length);
  if (blockUsed + length > BLOCK) {
    block = new Int32Array(BLOCK);
    blockUsed = 0;
  }
  const view = block.subarray(blockUsed, blockUsed + length);
  blockUsed += length;
  return view;
}

/** Packs per-field term ids into a {@link PreparedTool}'s `terms`. */
export function packTerms(fields: readonly ArrayLike<number>[]): Int32Array {
  let total = FIELD_COUNT;
  for (const ids of fields) total += ids.length;
  const terms = termSlots(total);
  let out = FIELD_COUNT;
  fields.forEach((ids, field) => {
    for (let index = 0; index < ids.length; index += 1)
      terms[out++] = ids[index] as number;
    terms[field] = out;
  });
  return terms;
}

/** Start and end in `terms` of field number `field`. */
export function fieldRange(terms: Int32Array, field: number): [number, number] {
  return [
    field === 0 ? FIELD_COUNT : (terms[field - 1] as number),
    terms[field] as number,
  ];
}

/** The terms of one field of a prepared tool, as strings. */
export function fieldTerms(tool: PreparedTool, field: FieldName): string[] {
  const [start, end] = fieldRange(tool.terms, FIELD_NAMES.indexOf(field));
  const terms: string[] = [];
  for (let index = start; index < end; index += 1)
    terms.push(TERMS.term(tool.terms[index] as number));
  return terms;
}

/** Normalized exact names of a tool (its identifier terms: bare and qualified). */
export function exactNamesOf(tool: PreparedTool): string[] {
  return fieldTerms(tool, 'identifier');
}

const MAX_SCHEMA_DEPTH = 4;

function collectSchemaText(
  schema: unknown,
  depth: number,
  names: string[],
  texts: string[],
): void {
  if (
    depth > MAX_SCHEMA_DEPTH ||
    typeof schema !== 'object' ||
    schema === null ||
    Array.isArray(schema)
  )
    return;
  const record = schema as Record<string, unknown>;
  const properties = record.properties;
  if (
    typeof properties === 'object' &&
    properties !== null &&
    !Array.isArray(properties)
  ) {
    for (const [key, value] of Object.entries(
      properties as Record<string, unknown>,
    )) {
      names.push(key);
      if (typeof value !== 'object' || value === null) continue;
      const property = value as Record<string, unknown>;
      if (typeof property.description === 'string')
        texts.push(property.description);
      if (Array.isArray(property.enum)) {
        for (const option of property.enum) {
          if (typeof option === 'string' || typeof option === 'number')
            texts.push(String(option));
        }
      }
      collectSchemaText(property, depth + 1, names, texts);
      collectSchemaText(property.items, depth + 1, names, texts);
    }
  }
}

const byEntry = new WeakMap<ToolEntry, PreparedTool>();

/** JSON text of the schema of entries restored from a saved part (parsed when first read). */
const schemaTexts = new WeakMap<ToolEntry, string>();

/** The JSON text of an entry's input schema, or `undefined` when it cannot be written. */
export function schemaText(entry: ToolEntry): string | undefined {
  const text = schemaTexts.get(entry);
  if (text !== undefined) return text;
  try {
    return JSON.stringify(entry.inputSchema);
  } catch {
    return undefined;
  }
}

/** Remembers the schema text of an entry whose `inputSchema` is parsed on demand. */
export function rememberSchemaText(entry: ToolEntry, text: string): void {
  schemaTexts.set(entry, text);
}

/** Whether two entries have the same indexed content (target, tool, description, schema). */
function sameContent(left: ToolEntry, right: ToolEntry): boolean {
  if (
    left.target !== right.target ||
    left.tool !== right.tool ||
    left.description !== right.description
  )
    return false;
  const schema = schemaText(left);
  return schema !== undefined && schema === schemaText(right);
}

/** Analyzed target names, for checking imported parts. */
const targetTerms = new Map<string, Int32Array>();

function internAll(terms: readonly string[]): Int32Array {
  return Int32Array.from(terms, (term) => TERMS.intern(term));
}

function sameIds(
  terms: Int32Array,
  field: number,
  expected: ArrayLike<number>,
): boolean {
  const [start, end] = fieldRange(terms, field);
  if (end - start !== expected.length) return false;
  for (let index = 0; index < expected.length; index += 1)
    if (terms[start + index] !== expected[index]) return false;
  return true;
}

function identifierTerms(entry: ToolEntry): string[] {
  return [...new Set([normalizeName(entry.tool), normalizeName(entry.name)])];
}

const NAME = FIELD_NAMES.indexOf('name');
const IDENTIFIER = FIELD_NAMES.indexOf('identifier');
const TARGET = FIELD_NAMES.indexOf('target');

/**
 * Adopts search terms analyzed earlier (a saved part) for `entry`, after checking the
 * fields that are cheap to recompute (identifier, target, and the name when asked) against
 * the entry. Returns the prepared tool, or what is inconsistent.
 */
export function adoptPreparedTool(options: {
  entry: ToolEntry;
  /** Packed terms, as {@link packTerms} writes them. */
  terms: Int32Array;
  /** Whether to analyze the tool's name again and compare (the target's terms always are, once per target). */
  checkName: boolean;
}): PreparedTool | string {
  const { entry, terms } = options;
  if (!sameIds(terms, IDENTIFIER, internAll(identifierTerms(entry))))
    return `"fields.identifier" does not match tool "${entry.name}"`;
  if (
    options.checkName &&
    !sameIds(terms, NAME, internAll(analyzeText(entry.tool)))
  )
    return `"fields.name" does not match tool "${entry.name}"`;
  let target = targetTerms.get(entry.target);
  if (target === undefined) {
    target = internAll(analyzeText(entry.target));
    targetTerms.set(entry.target, target);
    if (targetTerms.size > 10_000) targetTerms.clear();
  }
  if (!sameIds(terms, TARGET, target))
    return `"fields.target" does not match target "${entry.target}"`;
  const prepared: PreparedTool = { entry, terms };
  byEntry.set(entry, prepared);
  return prepared;
}

/**
 * Prepares a tool's search terms. The result is cached per entry object, and `previous` (the
 * tool of the same name in the catalog so far) lends its terms when its content is equal, so
 * a re-listing only analyzes tools that changed.
 */
export function prepareTool(
  entry: ToolEntry,
  previous?: PreparedTool,
): PreparedTool {
  const cached = byEntry.get(entry);
  if (cached) return cached;
  let prepared: PreparedTool;
  if (previous && sameContent(previous.entry, entry)) {
    prepared = { entry, terms: previous.terms };
  } else {
    const parameterNames: string[] = [];
    const parameterTexts: string[] = [];
    collectSchemaText(entry.inputSchema, 0, parameterNames, parameterTexts);
    prepared = {
      entry,
      terms: packTerms(
        [
          analyzeText(entry.tool),
          identifierTerms(entry),
          analyzeText(entry.target),
          analyzeText(entry.description),
          analyzeText(parameterNames.join(' ')),
          analyzeText(parameterTexts.join(' ')),
        ].map(internAll),
      ),
    };
  }
  byEntry.set(entry, prepared);
  return prepared;
}

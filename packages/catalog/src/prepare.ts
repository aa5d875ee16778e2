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
export type FieldName = (typeof FIELD_NAMES)[number];

export const FIELD_COUNT = FIELD_NAMES.length;

/** A tool with its search terms prepared once (reused across index rebuilds and catalogs). */
export type PreparedTool = {
  entry: ToolEntry;
  /** The end of each field's ids in `terms` (one slot a field), then the term ids of each field in turn. */
  terms: Int32Array;
};

/** A segment's tools: an array of prepared tools, a built segment's packed ones, or a saved catalog's, made when first asked for. */
export type ToolList = {
  readonly length: number;
  at(local: number): PreparedTool | undefined;
  profileOf?(local: number): string;
  nameOf?(local: number): string;
  entryOf?(local: number): ToolEntry;
};

/**
 * A built segment's tools: their entries, and every tool's packed terms in one array, so a
 * tool costs a slot and its numbers rather than two objects and a typed array (about 250
 * bytes a tool at registry scale). A tool asked for is made then, its terms a view.
 */
export class PackedTools implements ToolList {
  readonly length: number;
  readonly #entries: readonly ToolEntry[];
  readonly #terms: Int32Array;
  /** Tool `local`'s terms are `#terms[#starts[local]]` to `#terms[#starts[local + 1]]`. */
  readonly #starts: Int32Array;

  constructor(tools: ToolList) {
    const list = toolArray(tools);
    this.length = list.length;
    this.#entries = list.map((tool) => tool.entry);
    const starts = new Int32Array(list.length + 1);
    list.forEach(
      (tool, local) =>
        (starts[local + 1] = (starts[local] as number) + tool.terms.length),
    );
    const terms = new Int32Array(starts[list.length] as number);
    list.forEach((tool, local) => terms.set(tool.terms, starts[local]));
    [this.#starts, this.#terms] = [starts, terms];
  }

  at(local: number): PreparedTool | undefined {
    const entry = this.#entries[local];
    if (entry === undefined) return undefined;
    const [start, end] = [this.#starts[local], this.#starts[local + 1]];
    return { entry, terms: this.#terms.subarray(start, end) };
  }

  entryOf(local: number): ToolEntry {
    return this.#entries[local] as ToolEntry;
  }
}

/** The tools of a list as an array (making every one of a saved catalog's). */
export function toolArray(list: ToolList): PreparedTool[] {
  if (Array.isArray(list)) return list as PreparedTool[];
  return Array.from({ length: list.length }, (_, local) => list.at(local)!);
}

/**
 * A table of texts of a restored catalog (its terms and tools' texts, its schemas), kept as
 * UTF-8 bytes outside the JavaScript heap and decoded when a text is first read.
 */
export class SavedTexts {
  readonly buffer: Buffer;
  readonly ends: Uint32Array;
  /** Texts `index` is bytes `ends[index]` to `ends[index + 1]` of `buffer`. */
  constructor(buffer: Buffer, ends: Uint32Array) {
    this.buffer = buffer;
    this.ends = ends;
  }
  bytes(index: number): Uint8Array {
    return this.buffer.subarray(
      this.ends[index] as number,
      this.ends[index + 1] as number,
    );
  }
  /** Text `index`, decoded as `latin1` when it is known to be ASCII (faster). */
  text(index: number, encoding: 'utf8' | 'latin1' = 'utf8'): string {
    return this.buffer.toString(
      encoding,
      this.ends[index] as number,
      this.ends[index + 1] as number,
    );
  }
}

/** Term ids of every tool are carved out of shared blocks (one typed array per tool would cost more than its ids). */
const BLOCK = 1 << 16;
let block = new Int32Array(BLOCK);
let blockUsed = 0;

/** A zeroed view of `length` ints for one tool's terms. */
export function allocateTerms(length: number): Int32Array {
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
  const terms = allocateTerms(total);
  let out = FIELD_COUNT;
  fields.forEach((ids, field) => {
    for (let index = 0; index < ids.length; index += 1)
      terms[out++] = ids[index] as number;
    terms[field] = out;
  });
  return terms;
}

/** Start in `terms` of field number `field` (its end is `terms[field]`). */
export function fieldStart(terms: Int32Array, field: number): number {
  return field === 0 ? FIELD_COUNT : (terms[field - 1] as number);
}

/** The terms of one field of a prepared tool, as strings. */
export function fieldTerms(tool: PreparedTool, field: FieldName): string[] {
  const index = FIELD_NAMES.indexOf(field);
  const start = fieldStart(tool.terms, index);
  const end = tool.terms[index] as number;
  const terms: string[] = [];
  for (let index = start; index < end; index += 1)
    terms.push(TERMS.term(tool.terms[index] as number));
  return terms;
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

/** A restored entry keeps its prepared tool in a non-enumerable property of this key (set up by {@link addPreparedSlot}). */
const PREPARED = Symbol('heretek.catalog.prepared');
const PREPARED_SLOT: PropertyDescriptor = {
  value: undefined,
  writable: true,
  enumerable: false,
  configurable: true,
};
type WithSlot = { [PREPARED]?: PreparedTool };

/** Gives a new entry (not yet shared) the slot of its prepared tool. */
export function addPreparedSlot(entry: ToolEntry): void {
  Object.defineProperty(entry, PREPARED, PREPARED_SLOT);
}

/** The prepared tool of a restored entry. */
export function preparedOf(entry: ToolEntry): PreparedTool | undefined {
  return (entry as WithSlot)[PREPARED];
}

/**
 * The prepared tool of a restored entry whose terms are kept in a target's numbering (a saved
 * catalog's, checked when restored) and put in the term dictionary's numbering when first
 * read: most restored tools' terms are never read.
 */
export class RestoredTool implements PreparedTool {
  readonly entry: ToolEntry;
  /** Where the JSON text of the entry's input schema is, and its index there. */
  readonly saved: SavedTexts;
  readonly savedIndex: number;
  /** Field ends, then the number of each term in the target's numbering. */
  readonly #packed: Uint16Array | Uint32Array;
  readonly #start: number;
  readonly #end: number;
  /** Term id of each number of the target's numbering. */
  readonly #ids: Int32Array;
  #terms: Int32Array | undefined;

  constructor(options: {
    entry: ToolEntry;
    saved: SavedTexts;
    savedIndex: number;
    packed: Uint16Array | Uint32Array;
    start: number;
    end: number;
    ids: Int32Array;
  }) {
    this.entry = options.entry;
    this.saved = options.saved;
    this.savedIndex = options.savedIndex;
    this.#packed = options.packed;
    this.#start = options.start;
    this.#end = options.end;
    this.#ids = options.ids;
    (this.entry as WithSlot)[PREPARED] = this;
  }

  get terms(): Int32Array {
    if (this.#terms !== undefined) return this.#terms;
    const start = this.#start;
    const terms = allocateTerms(this.#end - start);
    const packed = this.#packed;
    const ids = this.#ids;
    for (let index = 0; index < terms.length; index += 1) {
      const value = packed[start + index] as number;
      terms[index] = index < FIELD_COUNT ? value : (ids[value] as number);
    }
    this.#terms = terms;
    return terms;
  }
}

/** The JSON text of a prepared tool's input schema, or `undefined` when it cannot be written. */
export function schemaText(tool: PreparedTool): string | undefined {
  return tool instanceof RestoredTool
    ? tool.saved.text(tool.savedIndex)
    : jsonOf(tool.entry.inputSchema);
}

function jsonOf(schema: unknown): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}

/** Whether a prepared tool and an entry have the same indexed content (target, tool, description, schema). */
function sameContent(left: PreparedTool, right: ToolEntry): boolean {
  if (
    left.entry.target !== right.target ||
    left.entry.tool !== right.tool ||
    left.entry.description !== right.description
  )
    return false;
  const schema = schemaText(left);
  return schema !== undefined && schema === jsonOf(right.inputSchema);
}

function internAll(terms: readonly string[]): Int32Array {
  return Int32Array.from(terms, (term) => TERMS.intern(term));
}

/** Whether field `field` of packed `terms` holds the terms of `text`. */
function sameTerms(terms: Int32Array, field: number, text: string): boolean {
  const expected = internAll(analyzeText(text));
  const start = fieldStart(terms, field);
  if ((terms[field] as number) - start !== expected.length) return false;
  return expected.every((id, index) => terms[start + index] === id);
}

const NAME = FIELD_NAMES.indexOf('name');
const IDENTIFIER = FIELD_NAMES.indexOf('identifier');
const TARGET = FIELD_NAMES.indexOf('target');

/** What is inconsistent between a saved catalog's packed terms and `entry` in the fields cheap to recompute, if anything. */
export function savedTermsProblem(
  entry: ToolEntry,
  terms: Int32Array,
): string | undefined {
  // The identifier terms are the bare and the qualified name, normalized (one when equal).
  const start = fieldStart(terms, IDENTIFIER);
  const count = (terms[IDENTIFIER] as number) - start;
  const bare = normalizeName(entry.tool);
  const qualified = normalizeName(entry.name);
  if (
    count !== (bare === qualified ? 1 : 2) ||
    TERMS.term(terms[start] as number) !== bare ||
    (count === 2 && TERMS.term(terms[start + 1] as number) !== qualified)
  )
    return `its saved identifier terms do not match tool "${entry.name}"`;
  if (!sameTerms(terms, NAME, entry.tool))
    return `its saved name terms do not match tool "${entry.name}"`;
  if (!sameTerms(terms, TARGET, entry.target))
    return `its saved target terms do not match target "${entry.target}"`;
  return undefined;
}

/**
 * Prepares a tool's search terms: a restored entry's are its saved ones, and `previous` (the
 * tool of the same name in the catalog so far) lends its terms when its content is equal, so
 * a re-listing only analyzes tools that changed.
 */
export function prepareTool(
  entry: ToolEntry,
  previous?: PreparedTool,
): PreparedTool {
  return (
    preparedOf(entry) ?? {
      entry,
      terms:
        previous && sameContent(previous, entry)
          ? previous.terms
          : analyzeTool(entry),
    }
  );
}

/** The packed terms of a tool's fields. */
function analyzeTool(entry: ToolEntry): Int32Array {
  const parameterNames: string[] = [];
  const parameterTexts: string[] = [];
  collectSchemaText(entry.inputSchema, 0, parameterNames, parameterTexts);
  return packTerms(
    [
      analyzeText(entry.tool),
      [...new Set([normalizeName(entry.tool), normalizeName(entry.name)])],
      analyzeText(entry.target),
      analyzeText(entry.description),
      analyzeText(parameterNames.join(' ')),
      analyzeText(parameterTexts.join(' ')),
    ].map(internAll),
  );
}

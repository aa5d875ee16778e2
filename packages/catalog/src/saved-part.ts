import { multiplexedName, sha256Hex } from '@heretek/internal';
import { CatalogError, CatalogErrorCode } from './errors.js';
import {
  addPreparedSlot,
  allocateTerms,
  preparedOf,
  SavedTexts,
  FIELD_COUNT,
  fieldStart,
  type PreparedTool,
  schemaText,
} from './prepare.js';
import type { SegmentTerms } from './segments.js';
import { TERMS } from './terms.js';
import type { TaskSupport, ToolEntry } from './types.js';
import { VERSION } from './version.js';

/**
 * Version of the saved backend layout and of the analysis behind its terms (tokenizer, stop
 * words, stemmer, fields). Raised whenever any of them changes, so a part written by another
 * analysis is refused, never mixed in.
 */
export const SAVED_BACKEND_VERSION = 2;

/** What the header of a saved backend part says (read without checking the rest). */
export type SavedBackendInfo = {
  /** The gateway target whose tools the part holds. */
  target: string;
  /** The key the caller gave when saving (e.g. a hash of the backend's listing). */
  key: string;
  /** `VERSION` of the `@heretek/catalog` that wrote it. */
  catalogVersion: string;
  /** Number of tools. */
  tools: number;
  /** The distinct `backend` values of its tools. */
  backends: string[];
  /** The distinct `profile` values of its tools. */
  profiles: string[];
};

/*
 * Layout (little-endian):
 *   0   8 bytes  MAGIC
 *   8   u32      SAVED_BACKEND_VERSION
 *   12  u32      total length in bytes
 *   16  64 bytes lowercase hex SHA-256 of bytes [80, total)
 *   80  u32      header length in bytes
 *   84           header: UTF-8 JSON (Header), padded with spaces to a multiple of 4
 *                u32 x (strings + 1)     0, then the end of each string in the string table (bytes)
 *                u32 x tools x RECORD    per tool: backend, profile, flags
 *                u32 x tools x fields    per tool: the number of tokens of each field
 *                u16 or u32 x tokens     term of each token (index into the part's term table),
 *                                        16 bits when the part has at most 65,536 terms
 *                UTF-8                   the string table (each string decoded on its own, so a
 *                                        wide character makes only its own string wide): the
 *                                        part's terms, then per tool its bare name, description
 *                                        and annotations JSON, then each tool's schema JSON
 */
const MAGIC = [0x89, 0x48, 0x54, 0x4b, 0x49, 0x44, 0x58, 0x0a]; // \x89HTKIDX\n
const HEADER_AT = 84;
const RECORD = 3;
/** Parts with at most this many terms write each token's term in 16 bits. */
const NARROW_TERMS = 1 << 16;
const STRINGS_PER_TOOL = 3;
const MUTATING = 1;
const DISCOVERED = 2;
/** Flag of a tool whose entry has annotations (see {@link toolFlags}). */
export const ANNOTATED = 4;
const TASK_SHIFT = 3;
const TASK_SUPPORT: readonly (TaskSupport | undefined)[] = [
  undefined,
  'forbidden',
  'optional',
  'required',
];

/** The flags of a saved tool: mutating, discovered, annotated, task support. */
export function toolFlags(entry: ToolEntry): number {
  return (
    (entry.mutating ? MUTATING : 0) |
    (entry.source === 'seed' ? 0 : DISCOVERED) |
    (entry.annotations === undefined ? 0 : ANNOTATED) |
    (Math.max(0, TASK_SUPPORT.indexOf(entry.taskSupport)) << TASK_SHIFT)
  );
}

/** Whether the flags of a saved tool are in range. */
export function validFlags(flags: number): boolean {
  return flags >>> TASK_SHIFT < TASK_SUPPORT.length;
}

/** The JSON header of a part. */
type Header = SavedBackendInfo & {
  /** Entries of the part's term table. */
  terms: number;
  /** Tokens over every tool and field. */
  tokens: number;
  /** Bytes of the string table. */
  tableBytes: number;
};

export const littleEndian =
  new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();

/** What a refused part's message tells to do. */
const PART_ADVICE = "rebuild it from the backend's listing";

/** Throws a refusal of a saved form: `where: problem; advice.` */
type Refusal = (where: string, problem: string, advice?: string) => never;

function refusal(code: CatalogErrorCode): Refusal {
  return (where, problem, advice = PART_ADVICE) => {
    throw new CatalogError({
      code,
      message: `${where}: ${problem}; ${advice}.`,
    });
  };
}

/** Throws the `INVALID_INDEX_PART` error of a corrupt saved form. */
export const refuse: Refusal = refusal(CatalogErrorCode.InvalidIndexPart);

/** Throws the `INDEX_PART_VERSION` error of a saved form another version wrote. */
export const foreign: Refusal = refusal(CatalogErrorCode.IndexPartVersion);

/** Refuses a saved form whose length is not `total`. */
export function checkLength(
  bytes: Uint8Array,
  total: number,
  fail: (problem: string) => never,
): void {
  if (total !== bytes.length)
    fail(
      total > bytes.length
        ? `truncated: ${bytes.length} of ${total} bytes`
        : `${bytes.length - total} bytes after its end`,
    );
}

/** UTF-8 JSON of `value`, padded with spaces to a multiple of `multiple` bytes. */
export function paddedJson(value: unknown, multiple: number): Uint8Array {
  const bytes = encoder.encode(JSON.stringify(value));
  const padded = Math.ceil(bytes.length / multiple) * multiple;
  if (padded === bytes.length) return bytes;
  const grown = new Uint8Array(padded).fill(0x20);
  grown.set(bytes);
  return grown;
}

/** UTF-8 text of a byte range (a byte-order mark is kept, as written). */
export function utf8(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(
    bytes.buffer,
    bytes.byteOffset + start,
    end - start,
  ).toString('utf8');
}

/** Unsigned integers of 16 or 32 bits. */
type Unsigned = Uint16Array | Uint32Array;

/**
 * `count` unsigned values of `width` bytes (2 or 4) from `at`, as a view when the bytes allow
 * it, else copied.
 */
function unsigned(
  bytes: Uint8Array,
  at: number,
  count: number,
  width: 2 | 4,
): Unsigned {
  const offset = bytes.byteOffset + at;
  if (littleEndian) {
    const aligned =
      offset % width === 0
        ? { buffer: bytes.buffer, offset }
        : {
            // A copy (a Buffer's own `slice` would give a view of the same memory).
            buffer: Uint8Array.prototype.slice.call(
              bytes,
              at,
              at + count * width,
            ).buffer,
            offset: 0,
          };
    return width === 2
      ? new Uint16Array(aligned.buffer, aligned.offset, count)
      : new Uint32Array(aligned.buffer, aligned.offset, count);
  }
  const view = new DataView(bytes.buffer, offset, count * width);
  const values = width === 2 ? new Uint16Array(count) : new Uint32Array(count);
  for (let index = 0; index < count; index += 1)
    values[index] =
      width === 2
        ? view.getUint16(index * 2, true)
        : view.getUint32(index * 4, true);
  return values;
}

/** `count` u32 values from `at`, as a view when the bytes allow it, else copied. */
function u32s(bytes: Uint8Array, at: number, count: number): Uint32Array {
  return unsigned(bytes, at, count, 4) as Uint32Array;
}

/** Writes `values` little-endian at `at`. */
function putUnsigned(bytes: Uint8Array, at: number, values: Unsigned): void {
  if (littleEndian) {
    bytes.set(
      new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
      at,
    );
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + at);
  const width = values.BYTES_PER_ELEMENT;
  values.forEach((value, index) => {
    if (width === 2) view.setUint16(index * 2, value, true);
    else view.setUint32(index * 4, value, true);
  });
}

/**
 * The saved form of one target's tools: their entries and prepared terms, with the target's
 * segment's distinct term ids as its term table (in the segment's order).
 */
export function encodeSavedBackend(options: {
  target: string;
  key: string;
  tools: readonly PreparedTool[];
  termIds: Int32Array;
}): Uint8Array {
  const { target, key, tools, termIds } = options;
  const local = new Map<number, number>();
  const strings: string[] = [];
  termIds.forEach((id, index) => {
    local.set(id, index);
    strings.push(TERMS.term(id));
  });
  const backends = new Map<string, number>();
  const profiles = new Map<string, number>();
  const indexOf = (map: Map<string, number>, value: string): number => {
    let index = map.get(value);
    if (index === undefined) {
      index = map.size;
      map.set(value, index);
    }
    return index;
  };
  const records = new Uint32Array(tools.length * RECORD);
  const fieldCounts = new Uint32Array(tools.length * FIELD_COUNT);
  const schemas: string[] = [];
  let tokens = 0;
  tools.forEach((tool, position) => {
    const { entry } = tool;
    const schema = schemaText(tool) ?? '{"type":"object"}';
    const annotations =
      entry.annotations === undefined ? '' : JSON.stringify(entry.annotations);
    strings.push(entry.tool, entry.description, annotations);
    schemas.push(schema);
    const record = position * RECORD;
    records[record] = indexOf(backends, entry.backend);
    records[record + 1] = indexOf(profiles, entry.profile);
    records[record + 2] = toolFlags(entry);
    for (let field = 0; field < FIELD_COUNT; field += 1) {
      const count =
        (tool.terms[field] as number) - fieldStart(tool.terms, field);
      fieldCounts[position * FIELD_COUNT + field] = count;
      tokens += count;
    }
  });
  const tokenTerms =
    termIds.length <= NARROW_TERMS
      ? new Uint16Array(tokens)
      : new Uint32Array(tokens);
  let out = 0;
  for (const tool of tools) {
    const { terms } = tool;
    for (let index = FIELD_COUNT; index < terms.length; index += 1)
      tokenTerms[out++] = local.get(terms[index] as number) as number;
  }
  strings.push(...schemas);
  const ends = new Uint32Array(strings.length + 1);
  let tableBytes = 0;
  strings.forEach((text, index) => {
    tableBytes += Buffer.byteLength(text, 'utf8');
    ends[index + 1] = tableBytes;
  });
  const header: Header = {
    catalogVersion: VERSION,
    target,
    key,
    tools: tools.length,
    backends: [...backends.keys()],
    profiles: [...profiles.keys()],
    terms: termIds.length,
    tokens,
    tableBytes,
  };
  const headerBytes = paddedJson(header, 4);
  let at = HEADER_AT + headerBytes.length;
  const total =
    at +
    (ends.length + records.length + fieldCounts.length) * 4 +
    tokenTerms.byteLength +
    tableBytes;
  const buffer = Buffer.alloc(total);
  const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, total);
  bytes.set(MAGIC, 0);
  putUnsigned(bytes, 8, Uint32Array.of(SAVED_BACKEND_VERSION, total));
  putUnsigned(bytes, 80, Uint32Array.of(headerBytes.length));
  bytes.set(headerBytes, HEADER_AT);
  for (const values of [ends, records, fieldCounts, tokenTerms]) {
    putUnsigned(bytes, at, values);
    at += values.byteLength;
  }
  for (const text of strings) at += buffer.write(text, at, 'utf8');
  bytes.set(encoder.encode(sha256Hex(bytes.subarray(80))), 16);
  return bytes;
}

function isStringArray(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.every((item) => typeof item === 'string' && item !== '')
  );
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Checks magic, version, length and header; returns the header and where the sections start. */
function readHeader(
  value: unknown,
  where: string,
): { header: Header; bytes: Uint8Array; at: number } {
  if (!(value instanceof Uint8Array))
    refuse(where, 'a saved backend part must be a Uint8Array');
  // Numbers are read in place when the part starts at a multiple of 4, else copied out
  // section by section (the strings are read where they are).
  const bytes = value;
  if (
    bytes.length < MAGIC.length ||
    MAGIC.some((byte, index) => bytes[index] !== byte)
  )
    refuse(where, 'not a saved backend part (its first bytes are wrong)');
  if (bytes.length < HEADER_AT)
    refuse(where, `truncated: ${bytes.length} bytes`);
  const [version, total] = u32s(bytes, 8, 2) as unknown as [number, number];
  if (version !== SAVED_BACKEND_VERSION)
    foreign(
      where,
      `written in layout ${version}, this @heretek/catalog reads layout ${SAVED_BACKEND_VERSION}`,
    );
  checkLength(bytes, total, (problem) => refuse(where, problem));
  const headerLength = u32s(bytes, 80, 1)[0] as number;
  if (headerLength % 4 !== 0 || HEADER_AT + headerLength > total)
    refuse(where, 'its header length is out of range (corrupt)');
  let json: unknown;
  try {
    json = JSON.parse(utf8(bytes, HEADER_AT, HEADER_AT + headerLength));
  } catch {
    refuse(where, 'its header is not JSON (corrupt)');
  }
  const header = json as Partial<Header> | null;
  if (typeof header !== 'object' || header === null)
    refuse(where, 'its header is not an object (corrupt)');
  if (header.catalogVersion !== VERSION)
    foreign(
      where,
      `written by @heretek/catalog ${JSON.stringify(header.catalogVersion)}, this is ${VERSION}`,
    );
  if (
    typeof header.target !== 'string' ||
    header.target === '' ||
    typeof header.key !== 'string' ||
    !isCount(header.tools) ||
    !isCount(header.terms) ||
    !isCount(header.tokens) ||
    !isCount(header.tableBytes) ||
    !isStringArray(header.backends) ||
    !isStringArray(header.profiles)
  )
    refuse(where, 'its header lacks a field or has a malformed one (corrupt)');
  return { header: header as Header, bytes, at: HEADER_AT + headerLength };
}

/**
 * Reads the header of a saved backend part (target, key, tool count, backends, profiles)
 * without checking its digest or decoding its tools: what a caller needs to decide whether
 * the part is still current.
 *
 * @throws CatalogError `INDEX_PART_VERSION` when another layout or catalog version wrote it;
 * `INVALID_INDEX_PART` when it is not a saved part, is truncated or its header is corrupt.
 */
export function describeSavedBackend(bytes: Uint8Array): SavedBackendInfo {
  return infoOf(readHeader(bytes, 'describeSavedBackend').header);
}

/** What a saved part's header tells of it. */
function infoOf(header: SavedBackendInfo): SavedBackendInfo {
  return {
    target: header.target,
    key: header.key,
    catalogVersion: header.catalogVersion,
    tools: header.tools,
    backends: header.backends,
    profiles: header.profiles,
  };
}

/**
 * A decoded part: its header, entries, each tool's packed terms, its terms in its segment's
 * numbering, and the tools' schema texts.
 */
type DecodedBackend = {
  info: SavedBackendInfo;
  entries: ToolEntry[];
  terms: Int32Array[];
  segmentTerms: SegmentTerms;
  saved: SavedTexts;
};

/** Parses a restored entry's schema text and keeps the result as its `inputSchema`. */
function parseSchema(entry: ToolEntry, text: string): Record<string, unknown> {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    schema = undefined;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new CatalogError({
      code: CatalogErrorCode.InvalidIndexPart,
      message: `tool "${entry.name}": its saved input schema is not a JSON object; rebuild its backend's part from the listing.`,
    });
  Reflect.defineProperty(entry, 'inputSchema', {
    value: schema,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  return schema as Record<string, unknown>;
}

/** The `inputSchema` of a restored entry: its prepared tool's schema text, parsed when first read. */
const LAZY_SCHEMA: PropertyDescriptor = {
  get(this: ToolEntry) {
    const tool = preparedOf(this);
    return parseSchema(
      this,
      tool === undefined ? '' : (schemaText(tool) ?? ''),
    );
  },
  enumerable: true,
  configurable: true,
};

/** What a saved tool's entry is made of besides its annotations. */
type SavedEntryTexts = {
  target: string;
  tool: string;
  backend: string;
  profile: string;
  description: string;
  /** As {@link toolFlags} gives them. */
  flags: number;
};

/**
 * The entry of a restored tool, its properties in the order of a listed entry's. The schema
 * is parsed when first read (most restored tools are never inspected); the accessor is added
 * as a new property, so every restored entry shares one shape (redefining an existing
 * property would give each entry a dictionary of its own). Equal annotations are one frozen
 * object per `annotationsByText`.
 */
export function restoredEntry(
  options: SavedEntryTexts & {
    /** The annotations' JSON text (read only when the flags say there are some). */
    annotations: () => string;
    annotationsByText: Map<string, ToolEntry['annotations']>;
    /** Throws the error of a refused part. */
    fail: (problem: string) => never;
  },
): ToolEntry {
  const { target, tool, flags, annotationsByText } = options;
  let annotations: ToolEntry['annotations'];
  if ((flags & ANNOTATED) !== 0) {
    const text = options.annotations();
    annotations = annotationsByText.get(text);
    if (annotations === undefined) {
      annotations = parseAnnotations(text);
      if (annotations === undefined)
        options.fail(
          `tool "${multiplexedName(target, tool)}" has malformed annotations`,
        );
      annotationsByText.set(text, annotations);
    }
  }
  return savedEntry({ ...options, annotations });
}

/** Saved annotations' JSON text as one frozen object, or `undefined` when it is not a JSON object. */
export function parseAnnotations(
  text: string,
): ToolEntry['annotations'] | undefined {
  let annotations: unknown;
  try {
    annotations = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  return Object.freeze(annotations) as ToolEntry['annotations'];
}

/**
 * The entry of a saved tool whose texts and annotations are read already (see
 * {@link restoredEntry}).
 */
export function savedEntry(
  options: SavedEntryTexts & {
    annotations: ToolEntry['annotations'] | undefined;
  },
): ToolEntry {
  const { target, tool, flags } = options;
  const entry = {
    name: multiplexedName(target, tool),
    target,
    tool,
    backend: options.backend,
    description: options.description,
  } as ToolEntry;
  Object.defineProperty(entry, 'inputSchema', LAZY_SCHEMA);
  addPreparedSlot(entry);
  entry.mutating = (flags & MUTATING) !== 0;
  entry.profile = options.profile;
  entry.source = (flags & DISCOVERED) !== 0 ? 'discovered' : 'seed';
  if (options.annotations !== undefined)
    entry.annotations = options.annotations;
  const taskSupport = TASK_SUPPORT[flags >>> TASK_SHIFT];
  if (taskSupport !== undefined) entry.taskSupport = taskSupport;
  return entry;
}

/** Per term id: the stamp of the term table that last mapped a term onto it (duplicates show). */
let seenStamp = new Int32Array(1024);
let stamp = 0;

/**
 * Maps strings `start` to `end` of a term table (their ends in `ends`, their bytes from
 * `table`) onto the term dictionary, into `into`; refuses empty terms.
 */
export function mapTerms(options: {
  bytes: Uint8Array;
  table: number;
  ends: Uint32Array;
  start: number;
  end: number;
  into: Int32Array;
  fail: (problem: string) => never;
}): void {
  const { bytes, table, ends, into, fail } = options;
  for (let index = options.start; index < options.end; index += 1) {
    const start = ends[index] as number;
    const end = ends[index + 1] as number;
    if (start === end) fail(`term ${index} is empty (corrupt)`);
    into[index] = TERMS.internBytes(bytes, table + start, table + end);
  }
}

/** Refuses a term table that maps two terms onto one id. */
export function checkDistinct(
  ids: Int32Array,
  fail: (problem: string) => never,
): void {
  if (seenStamp.length < TERMS.size || stamp === 0x7fffffff) {
    seenStamp = new Int32Array(Math.max(TERMS.size, 2 * seenStamp.length));
    stamp = 0;
  }
  stamp += 1;
  for (let index = 0; index < ids.length; index += 1) {
    const id = ids[index] as number;
    if (seenStamp[id] === stamp)
      fail(`term ${index} appears twice in its term table (corrupt)`);
    seenStamp[id] = stamp;
  }
}

/** A part whose header was read: the header, its bytes, and where its numbers start. */
type ReadPart = ReturnType<typeof readHeader>;

/** The numbers of a part after its header, and where its string table starts. */
type PartNumbers = {
  /** 0, then the end of each string of the string table. */
  ends: Uint32Array;
  records: Uint32Array;
  fieldCounts: Uint32Array;
  tokenTerms: Unsigned;
  /** Where the string table starts in the part's bytes. */
  table: number;
};

/** Reads the numbers of a part, checking them against its length and its string table's size. */
function partNumbers(read: ReadPart, where: string): PartNumbers {
  const { header, bytes, at: start } = read;
  const { tools, terms, tokens, tableBytes } = header;
  const stringCount = terms + tools * STRINGS_PER_TOOL + tools;
  const width = terms <= NARROW_TERMS ? 2 : 4;
  const numbers =
    (stringCount + 1 + tools * (RECORD + FIELD_COUNT)) * 4 + tokens * width;
  if (start + numbers + tableBytes !== bytes.length)
    refuse(where, 'its counts do not match its length (corrupt)');
  let at = start;
  const ends = u32s(bytes, at, stringCount + 1);
  at += ends.byteLength;
  const records = u32s(bytes, at, tools * RECORD);
  at += records.byteLength;
  const fieldCounts = u32s(bytes, at, tools * FIELD_COUNT);
  at += fieldCounts.byteLength;
  const tokenTerms = unsigned(bytes, at, tokens, width);
  at += tokenTerms.byteLength;
  if (ends[0] !== 0 || ends[stringCount] !== tableBytes)
    refuse(where, 'its string table does not match its header (corrupt)');
  for (let index = 1; index < ends.length; index += 1)
    if ((ends[index] as number) < (ends[index - 1] as number))
      refuse(where, 'its string table is out of order (corrupt)');
  return { ends, records, fieldCounts, tokenTerms, table: at };
}

/** The tools' schema texts (the last string of each tool), copied out of the part to be decoded when first read. */
function savedSchemas(
  table: Buffer,
  ends: Uint32Array,
  tools: number,
): SavedTexts {
  const firstSchema = ends.length - 1 - tools;
  const schemaStart = ends[firstSchema] as number;
  const schemaEnds = ends.slice(firstSchema);
  for (let index = 0; index < schemaEnds.length; index += 1)
    schemaEnds[index] = (schemaEnds[index] as number) - schemaStart;
  return new SavedTexts(Buffer.from(table.subarray(schemaStart)), schemaEnds);
}

/** What the tools of a part are decoded from: its header, numbers, string table and term ids. */
type PartTools = {
  header: Header;
  numbers: PartNumbers;
  table: Buffer;
  /** The term id of each term of the part's term table. */
  ids: Int32Array;
  where: string;
  fail: (problem: string) => never;
};

/**
 * Each tool's entry and packed terms (its field ends, then the term ids of its tokens),
 * checking every index and that every term of the table is some token's term.
 */
function decodeTools(part: PartTools): {
  entries: ToolEntry[];
  packed: Int32Array[];
} {
  const { header, table, ids, where, fail } = part;
  const { ends, records, fieldCounts, tokenTerms } = part.numbers;
  const { target, tools, terms, tokens } = header;
  const annotationsByText = new Map<string, ToolEntry['annotations']>();
  const string = (index: number): string =>
    table.toString('utf8', ends[index], ends[index + 1]);
  const entries: ToolEntry[] = [];
  const packed: Int32Array[] = [];
  // Every term of the table is some token's term.
  const unused = new Uint8Array(terms).fill(1);
  let unusedCount = terms;
  let token = 0;
  for (let position = 0; position < tools; position += 1) {
    const record = position * RECORD;
    const backend = header.backends[records[record] as number];
    const profile = header.profiles[records[record + 1] as number];
    const flags = records[record + 2] as number;
    if (backend === undefined || profile === undefined || !validFlags(flags))
      refuse(where, `tool ${position} has an index out of range (corrupt)`);
    const base = terms + position * STRINGS_PER_TOOL;
    const entry = restoredEntry({
      target,
      tool: string(base),
      backend,
      profile,
      description: string(base + 1),
      flags,
      annotations: () => string(base + 2),
      annotationsByText,
      fail,
    });
    let count = 0;
    for (let field = 0; field < FIELD_COUNT; field += 1)
      count += fieldCounts[position * FIELD_COUNT + field] as number;
    if (token + count > tokens)
      refuse(where, `tool "${entry.name}" has more terms than the part`);
    const toolTerms = allocateTerms(FIELD_COUNT + count);
    let out = FIELD_COUNT;
    for (let field = 0; field < FIELD_COUNT; field += 1) {
      const end = out + (fieldCounts[position * FIELD_COUNT + field] as number);
      for (; out < end; out += 1) {
        const local = tokenTerms[token] as number;
        token += 1;
        if (local >= terms)
          refuse(where, `tool "${entry.name}" names a term out of range`);
        if (unused[local] === 1) {
          unused[local] = 0;
          unusedCount -= 1;
        }
        toolTerms[out] = ids[local] as number;
      }
      toolTerms[field] = out;
    }
    entries.push(entry);
    packed.push(toolTerms);
  }
  if (token !== tokens)
    refuse(where, 'its tools use fewer terms than its header says (corrupt)');
  if (unusedCount > 0)
    refuse(where, `${unusedCount} of its terms are used by no tool (corrupt)`);
  return { entries, packed };
}

/**
 * Checks a saved backend part completely (magic, layout and catalog version, length, SHA-256
 * digest, every count and index) and decodes it. Entries parse their input schema when it is
 * first read.
 *
 * @throws CatalogError `INDEX_PART_VERSION` for another layout or catalog version;
 * `INVALID_INDEX_PART` when it is truncated, corrupt or inconsistent.
 */
export function decodeSavedBackend(
  value: unknown,
  where: string,
): DecodedBackend {
  const read = readHeader(value, where);
  const { header, bytes } = read;
  const digest = utf8(bytes, 16, 80);
  if (digest !== sha256Hex(bytes.subarray(80)))
    refuse(where, 'its digest does not match its content (corrupt)');
  const numbers = partNumbers(read, where);
  const { ends, fieldCounts, tokenTerms } = numbers;
  const fail = (problem: string): never => refuse(where, problem);
  const ids = new Int32Array(header.terms);
  mapTerms({
    bytes,
    table: numbers.table,
    ends,
    start: 0,
    end: header.terms,
    into: ids,
    fail,
  });
  checkDistinct(ids, fail);
  const table = Buffer.from(
    bytes.buffer,
    bytes.byteOffset + numbers.table,
    header.tableBytes,
  );
  const saved = savedSchemas(table, ends, header.tools);
  const { entries, packed } = decodeTools({
    header,
    numbers,
    table,
    ids,
    where,
    fail,
  });
  return {
    info: infoOf(header),
    entries,
    terms: packed,
    segmentTerms: { termIds: ids, tokens: tokenTerms, fieldCounts },
    saved,
  };
}

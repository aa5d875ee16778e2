import { multiplexedName, sha256Hex } from '@heretek/internal';
import { CatalogError, CatalogErrorCode } from './errors.js';
import {
  allocateTerms,
  preparedOf,
  SavedTexts,
  FIELD_COUNT,
  fieldStart,
  type PreparedTool,
  schemaText,
} from './prepare.js';
import { TERMS } from './terms.js';
import type { TaskSupport, ToolEntry } from './types.js';
import { VERSION } from './version.js';

/**
 * Version of the saved backend layout and of the analysis behind its terms (tokenizer, stop
 * words, stemmer, fields). Raised whenever any of them changes, so a part written by another
 * analysis is refused, never mixed in.
 */
export const SAVED_BACKEND_VERSION = 1;

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
 *                u32 x tools x RECORD    per tool: backend, profile, flags, terms per field
 *                u32 x tokens            term of each token (index into the part's term table)
 *                UTF-8                   the string table (each string decoded on its own, so a
 *                                        wide character makes only its own string wide): the
 *                                        part's terms, then per tool its bare name, description
 *                                        and annotations JSON, then each tool's schema JSON
 */
const MAGIC = [0x89, 0x48, 0x54, 0x4b, 0x49, 0x44, 0x58, 0x0a]; // \x89HTKIDX\n
const HEADER_AT = 84;
const RECORD = 3 + FIELD_COUNT;
const STRINGS_PER_TOOL = 3;
const MUTATING = 1;
const DISCOVERED = 2;
const ANNOTATED = 4;
const TASK_SHIFT = 3;
const TASK_SUPPORT: readonly (TaskSupport | undefined)[] = [
  undefined,
  'forbidden',
  'optional',
  'required',
];

/** The JSON header of a part. */
type Header = SavedBackendInfo & {
  /** Entries of the part's term table. */
  terms: number;
  /** Tokens over every tool and field. */
  tokens: number;
  /** Bytes of the string table. */
  tableBytes: number;
};

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();

function refuse(where: string, problem: string): never {
  throw new CatalogError({
    code: CatalogErrorCode.InvalidIndexPart,
    message: `${where}: ${problem}; rebuild it from the backend's listing.`,
  });
}

function foreign(where: string, problem: string): never {
  throw new CatalogError({
    code: CatalogErrorCode.IndexPartVersion,
    message: `${where}: ${problem}; rebuild it from the backend's listing.`,
  });
}

/** UTF-8 text of a byte range (a byte-order mark is kept, as written). */
function utf8(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(
    bytes.buffer,
    bytes.byteOffset + start,
    end - start,
  ).toString('utf8');
}

/** `count` u32 values from `at`, as a view when the bytes allow it, else copied. */
function u32s(bytes: Uint8Array, at: number, count: number): Uint32Array {
  const offset = bytes.byteOffset + at;
  if (littleEndian && offset % 4 === 0)
    return new Uint32Array(bytes.buffer, offset, count);
  const view = new DataView(bytes.buffer, offset, count * 4);
  const values = new Uint32Array(count);
  for (let index = 0; index < count; index += 1)
    values[index] = view.getUint32(index * 4, true);
  return values;
}

/** Writes `values` as little-endian u32 at `at`. */
function putU32s(bytes: Uint8Array, at: number, values: Uint32Array): void {
  if (littleEndian) {
    bytes.set(
      new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
      at,
    );
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + at);
  values.forEach((value, index) => view.setUint32(index * 4, value, true));
}

/**
 * The saved form of one target's tools: their entries and prepared terms, with the target's
 * distinct term ids (ascending) as its term table.
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
    records[record + 2] =
      (entry.mutating ? MUTATING : 0) |
      (entry.source === 'seed' ? 0 : DISCOVERED) |
      (entry.annotations === undefined ? 0 : ANNOTATED) |
      (Math.max(0, TASK_SUPPORT.indexOf(entry.taskSupport)) << TASK_SHIFT);
    for (let field = 0; field < FIELD_COUNT; field += 1) {
      const count =
        (tool.terms[field] as number) - fieldStart(tool.terms, field);
      records[record + 3 + field] = count;
      tokens += count;
    }
  });
  const tokenTerms = new Uint32Array(tokens);
  let out = 0;
  for (const tool of tools) {
    const { terms } = tool;
    for (let index = FIELD_COUNT; index < terms.length; index += 1)
      tokenTerms[out++] = local.get(terms[index] as number) as number;
  }
  strings.push(...schemas);
  const ends = new Uint32Array(strings.length + 1);
  const encoded = strings.map((text) => encoder.encode(text));
  let tableBytes = 0;
  encoded.forEach((text, index) => {
    tableBytes += text.length;
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
  let headerBytes = encoder.encode(JSON.stringify(header));
  const padded = Math.ceil(headerBytes.length / 4) * 4;
  if (padded !== headerBytes.length) {
    const grown = new Uint8Array(padded).fill(0x20);
    grown.set(headerBytes);
    headerBytes = grown;
  }
  let at = HEADER_AT + headerBytes.length;
  const total =
    at + (ends.length + records.length + tokenTerms.length) * 4 + tableBytes;
  const bytes = new Uint8Array(total);
  bytes.set(MAGIC, 0);
  putU32s(bytes, 8, Uint32Array.of(SAVED_BACKEND_VERSION, total));
  putU32s(bytes, 80, Uint32Array.of(headerBytes.length));
  bytes.set(headerBytes, HEADER_AT);
  for (const values of [ends, records, tokenTerms]) {
    putU32s(bytes, at, values);
    at += values.length * 4;
  }
  for (const text of encoded) {
    bytes.set(text, at);
    at += text.length;
  }
  bytes.set(encoder.encode(sha256Hex(bytes.subarray(80))), 16);
  return bytes;
}

function isStringArray(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.every((item) => typeof item === 'string' && item !== '')
  );
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Checks magic, version, length and header; returns the header and where the sections start. */
function readHeader(
  value: unknown,
  where: string,
): { header: Header; bytes: Uint8Array; at: number } {
  if (!(value instanceof Uint8Array))
    refuse(where, 'a saved backend part must be a Uint8Array');
  // Sections of u32 are read in place when the part starts at a multiple of 4.
  const bytes = value.byteOffset % 4 === 0 ? value : value.slice();
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
  if (total !== bytes.length)
    refuse(
      where,
      total > bytes.length
        ? `truncated: ${bytes.length} of ${total} bytes`
        : `${bytes.length - total} bytes after its end`,
    );
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
  const { header } = readHeader(bytes, 'describeSavedBackend');
  return {
    target: header.target,
    key: header.key,
    catalogVersion: header.catalogVersion,
    tools: header.tools,
    backends: header.backends,
    profiles: header.profiles,
  };
}

/** A decoded part: its header, entries, each tool's packed terms, and the tools' schema texts. */
type DecodedBackend = {
  info: SavedBackendInfo;
  entries: ToolEntry[];
  terms: Int32Array[];
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
  const { header, bytes, at: start } = readHeader(value, where);
  const digest = utf8(bytes, 16, 80);
  if (digest !== sha256Hex(bytes.subarray(80)))
    refuse(where, 'its digest does not match its content (corrupt)');
  const { target, tools, terms, tokens, tableBytes } = header;
  const stringCount = terms + tools * STRINGS_PER_TOOL + tools;
  const numbers = (stringCount + 1 + tools * RECORD + tokens) * 4;
  if (start + numbers + tableBytes !== bytes.length)
    refuse(where, 'its counts do not match its length (corrupt)');
  let at = start;
  const ends = u32s(bytes, at, stringCount + 1);
  at += ends.length * 4;
  const records = u32s(bytes, at, tools * RECORD);
  at += records.length * 4;
  const tokenTerms = u32s(bytes, at, tokens);
  at += tokens * 4;
  if (ends[0] !== 0 || ends[stringCount] !== tableBytes)
    refuse(where, 'its string table does not match its header (corrupt)');
  for (let index = 1; index < ends.length; index += 1)
    if ((ends[index] as number) < (ends[index - 1] as number))
      refuse(where, 'its string table is out of order (corrupt)');
  const table = Buffer.from(bytes.buffer, bytes.byteOffset + at, tableBytes);
  // The schemas' bytes are copied out of the part, to be decoded when first read.
  const firstSchema = stringCount - tools;
  const schemaStart = ends[firstSchema] as number;
  const schemaEnds = ends.slice(firstSchema);
  for (let index = 0; index < schemaEnds.length; index += 1)
    schemaEnds[index] = (schemaEnds[index] as number) - schemaStart;
  const saved = new SavedTexts(
    Buffer.from(table.subarray(schemaStart)),
    schemaEnds,
  );
  const annotationsByText = new Map<string, ToolEntry['annotations']>();
  const string = (index: number): string =>
    table.toString('utf8', ends[index], ends[index + 1]);
  const ids = new Int32Array(terms);
  for (let index = 0; index < terms; index += 1) {
    const term = string(index);
    if (term === '') refuse(where, `term ${index} is empty (corrupt)`);
    ids[index] = TERMS.intern(term);
  }
  const entries: ToolEntry[] = [];
  const packed: Int32Array[] = [];
  let token = 0;
  for (let position = 0; position < tools; position += 1) {
    const record = position * RECORD;
    const backend = header.backends[records[record] as number];
    const profile = header.profiles[records[record + 1] as number];
    const flags = records[record + 2] as number;
    const taskSupport = TASK_SUPPORT[flags >>> TASK_SHIFT];
    if (
      backend === undefined ||
      profile === undefined ||
      flags >>> TASK_SHIFT >= TASK_SUPPORT.length
    )
      refuse(where, `tool ${position} has an index out of range (corrupt)`);
    const base = terms + position * STRINGS_PER_TOOL;
    const tool = string(base);
    const entry: ToolEntry = {
      name: multiplexedName(target, tool),
      target,
      tool,
      backend,
      description: string(base + 1),
      inputSchema: {},
      mutating: (flags & MUTATING) !== 0,
      profile,
      source: (flags & DISCOVERED) !== 0 ? 'discovered' : 'seed',
    };
    // Parsed when first read: most restored tools are never inspected.
    Object.defineProperty(entry, 'inputSchema', LAZY_SCHEMA);
    if ((flags & ANNOTATED) !== 0) {
      // Equal annotations are one frozen object per part.
      const text = string(base + 2);
      let annotations: unknown = annotationsByText.get(text);
      if (annotations === undefined) {
        try {
          annotations = JSON.parse(text);
        } catch {
          annotations = undefined;
        }
        if (typeof annotations !== 'object' || annotations === null)
          refuse(where, `tool "${entry.name}" has malformed annotations`);
        annotationsByText.set(
          text,
          Object.freeze(annotations) as ToolEntry['annotations'],
        );
      }
      entry.annotations = annotations as ToolEntry['annotations'];
    }
    if (taskSupport !== undefined) entry.taskSupport = taskSupport;
    let count = 0;
    for (let field = 0; field < FIELD_COUNT; field += 1)
      count += records[record + 3 + field] as number;
    if (token + count > tokens)
      refuse(where, `tool "${entry.name}" has more terms than the part`);
    const toolTerms = allocateTerms(FIELD_COUNT + count);
    let out = FIELD_COUNT;
    for (let field = 0; field < FIELD_COUNT; field += 1) {
      const end = out + (records[record + 3 + field] as number);
      for (; out < end; out += 1) {
        const local = tokenTerms[token] as number;
        token += 1;
        if (local >= terms)
          refuse(where, `tool "${entry.name}" names a term out of range`);
        toolTerms[out] = ids[local] as number;
      }
      toolTerms[field] = out;
    }
    entries.push(entry);
    packed.push(toolTerms);
  }
  if (token !== tokens)
    refuse(where, 'its tools use fewer terms than its header says (corrupt)');
  return {
    info: {
      target,
      key: header.key,
      catalogVersion: header.catalogVersion,
      tools,
      backends: header.backends,
      profiles: header.profiles,
    },
    entries,
    terms: packed,
    saved,
  };
}

import { createHash } from 'node:crypto';
import { assertTargetName } from './backends.js';
import { CatalogError, CatalogErrorCode } from './errors.js';
import {
  adoptPreparedTool,
  FIELD_COUNT,
  type PreparedTool,
  RestoredTool,
  SavedTexts,
  schemaText,
} from './prepare.js';
import {
  checkLength,
  foreign,
  isCount,
  littleEndian,
  paddedJson,
  refuse,
  type SavedBackendInfo,
  mapTerms,
  restoredEntry,
  toolFlags,
  utf8,
  validFlags,
} from './saved-part.js';
import type { Segment, SegmentArrays } from './segments.js';
import { TERMS } from './terms.js';
import type { ToolEntry } from './types.js';
import { VERSION } from './version.js';

/**
 * Version of the saved catalog layout and of the analysis behind its terms. Raised whenever
 * either changes, so a catalog written by another analysis is refused, never mixed in.
 */
export const SAVED_CATALOG_VERSION = 1;

/** One target of a saved catalog, as its header says: its key, tool count, backends and profiles. */
export type SavedCatalogTarget = Omit<SavedBackendInfo, 'catalogVersion'>;

/** What the header of a saved catalog says (read without checking the rest). */
export type SavedCatalogInfo = {
  /** `SAVED_CATALOG_VERSION` of the layout. */
  version: number;
  /** `VERSION` of the `@heretek/catalog` that wrote it. */
  catalogVersion: string;
  /** Number of tools over every target. */
  tools: number;
  /** The targets, in catalog order. */
  targets: SavedCatalogTarget[];
};

/** Numbers of things in a saved catalog, from which every section's place follows. */
type Counts = {
  /** Targets (segments). */
  segments: number;
  tools: number;
  /** Entries of the catalog's term table. */
  terms: number;
  /** Distinct terms of each segment, summed over the segments. */
  localTerms: number;
  postings: number;
  nameTerms: number;
  bareNames: number;
  /** Numbers of the tools' packed terms (field ends and term numbers), summed. */
  toolTerms: number;
  textBytes: number;
  schemaBytes: number;
};

/**
 * Bytes per item of the sections whose width varies: a posting's local tool (2 when every
 * target has at most 65,536 tools), its bag frequency (2 when every one is a whole number
 * below 65,536, as with the default weights; else 4 or 8 as the index holds them, 32- or
 * 64-bit floats), and a tool's packed terms (field ends and the target's local term numbers:
 * 2 when they fit).
 */
type Widths = { documents: 2 | 4; bags: 2 | 4 | 8; toolTerms: 2 | 4 };

/** The JSON header of a saved catalog. */
type Header = {
  catalogVersion: string;
  /** The bag weights (in field order) the postings were computed with. */
  bag: number[];
  /** Bytes of each posting's tool, bag frequency and of each number of the tools' terms. */
  widths: Widths;
  counts: Counts;
  targets: SavedCatalogTarget[];
};

/*
 * Layout (little-endian; every section starts at a multiple of 8, so a saved catalog that
 * starts at a multiple of 8 is read in place):
 *   0   8 bytes  MAGIC
 *   8   u32      SAVED_CATALOG_VERSION
 *   12  u32      total length in bytes
 *   16  32 bytes SHA-256 of bytes [48, total)
 *   48  u32      header length in bytes (a multiple of 8)
 *   52  u32      0
 *   56           header: UTF-8 JSON (Header), padded with spaces
 *                then the sections of SECTIONS, in order (see there)
 */
const MAGIC = [0x89, 0x48, 0x54, 0x4b, 0x43, 0x41, 0x54, 0x0a]; // \x89HTKCAT\n
const DIGEST_AT = 16;
const DIGESTED_FROM = 48;
const HEADER_AT = 56;
/** Numbers of a tool's record: its backend and profile (indices into its target's lists), flags, whether its texts are ASCII. */
const RECORD = 4;
/** Texts of each tool in the text table, after the terms: bare name, description, annotations JSON. */
const TEXTS_PER_TOOL = 3;

/** The sections: name, bytes per item, and the number of items from the counts. */
const SECTIONS = [
  // Per segment, the running totals of its tools, distinct terms, postings, name terms and bare names.
  ['segmentTools', 4, (c: Counts) => c.segments + 1],
  ['segmentTerms', 4, (c: Counts) => c.segments + 1],
  ['segmentPostings', 4, (c: Counts) => c.segments + 1],
  ['segmentNames', 4, (c: Counts) => c.segments + 1],
  ['segmentBare', 4, (c: Counts) => c.segments + 1],
  // Per segment, the sum of each field's length (f64 x fields).
  ['fieldLengths', 8, (c: Counts) => c.segments * FIELD_COUNT],
  // Per segment: its distinct terms (catalog term numbers), and their postings' ends (one more).
  ['termIds', 4, (c: Counts) => c.localTerms],
  ['offsets', 4, (c: Counts) => c.localTerms + c.segments],
  // Per posting: local tool (i32), bag frequency (f32 or f64), whether in the name (u8).
  ['documents', 0, (c: Counts) => c.postings],
  ['bags', 0, (c: Counts) => c.postings],
  ['inName', 1, (c: Counts) => c.postings],
  // Per segment: each tool's name terms' ends (one more than its tools), the name terms, the bare names.
  ['nameOffsets', 4, (c: Counts) => c.tools + c.segments],
  ['nameTerms', 4, (c: Counts) => c.nameTerms],
  ['bareNames', 4, (c: Counts) => c.bareNames],
  // Per tool: weighted bag length (f64), record, packed terms (catalog term numbers).
  ['bagLengths', 8, (c: Counts) => c.tools],
  ['records', 4, (c: Counts) => c.tools * RECORD],
  ['toolTerms', 0, (c: Counts) => c.toolTerms],
  // Text table (the terms, then each tool's texts) and schema table: ends, then UTF-8 bytes.
  ['textEnds', 4, (c: Counts) => c.terms + c.tools * TEXTS_PER_TOOL + 1],
  ['schemaEnds', 4, (c: Counts) => c.tools + 1],
  ['texts', 1, (c: Counts) => c.textBytes],
  ['schemas', 1, (c: Counts) => c.schemaBytes],
] as const;

type SectionName = (typeof SECTIONS)[number][0];

/** Where each section starts, and the end of the last, after a header of `headerBytes`. */
function sectionPlaces(
  counts: Counts,
  widths: Widths,
  headerBytes: number,
): Record<SectionName | 'end', number> {
  const places = {} as Record<SectionName | 'end', number>;
  let at = HEADER_AT + headerBytes;
  for (const [name, width, count] of SECTIONS) {
    places[name] = at;
    const bytes =
      count(counts) * (width === 0 ? widths[name as keyof Widths] : width);
    at += Math.ceil(bytes / 8) * 8;
  }
  places.end = at;
  return places;
}

/** What a refused saved catalog's message tells to do. */
const ADVICE =
  "save the catalog again, or build it from the backends' listings";

function refuseCatalog(where: string, problem: string): never {
  return refuse(where, problem, ADVICE);
}

function foreignCatalog(where: string, problem: string): never {
  return foreign(where, problem, `${ADVICE} with this version`);
}

/** The segments to save, in catalog order, with the caller's key of each. */
type SavedSegment = { segment: Segment; key: string };

/**
 * The saved form of a whole catalog: every given segment with its key, one term table, the
 * segments' postings and statistics as they are, and each tool's entry and terms.
 */
export function encodeSavedCatalog(options: {
  segments: readonly SavedSegment[];
  bag: readonly number[];
}): Uint8Array {
  const { segments } = options;
  // The catalog's term numbers, in order of first appearance.
  const numberOf = new Int32Array(TERMS.size).fill(-1);
  const terms: number[] = [];
  const counts: Counts = {
    segments: segments.length,
    tools: 0,
    terms: 0,
    localTerms: 0,
    postings: 0,
    nameTerms: 0,
    bareNames: 0,
    toolTerms: 0,
    textBytes: 0,
    schemaBytes: 0,
  };
  const widths: Widths = { documents: 2, bags: 2, toolTerms: 2 };
  const targets: SavedCatalogTarget[] = [];
  for (const { segment, key } of segments) {
    for (const id of segment.termIds)
      if (numberOf[id] === -1) {
        numberOf[id] = terms.length;
        terms.push(id);
      }
    counts.tools += segment.tools.length;
    counts.localTerms += segment.termIds.length;
    counts.postings += segment.documents.length;
    counts.nameTerms += segment.nameTerms.length;
    counts.bareNames += segment.bareNames.length;
    for (const tool of segment.tools) {
      counts.toolTerms += tool.terms.length;
      if (tool.terms.length > 0xffff) widths.toolTerms = 4;
    }
    if (segment.termIds.length > 0x10000) widths.toolTerms = 4;
    if (segment.tools.length > 0x10000) widths.documents = 4;
    if (segment.bags instanceof Float64Array) widths.bags = 8;
    else if (widths.bags === 2)
      for (const bag of segment.bags)
        if (!Number.isInteger(bag) || bag < 0 || bag > 0xffff) {
          widths.bags = 4;
          break;
        }
    const backends = new Set<string>();
    const profiles = new Set<string>();
    for (const { entry } of segment.tools) {
      backends.add(entry.backend);
      profiles.add(entry.profile);
    }
    targets.push({
      target: segment.target,
      key,
      tools: segment.tools.length,
      backends: [...backends],
      profiles: [...profiles],
    });
  }
  counts.terms = terms.length;
  const texts: string[] = terms.map((id) => TERMS.term(id));
  const schemas: string[] = [];
  const ascii = new Uint8Array(counts.tools);
  let tool = 0;
  for (const { segment } of segments)
    for (const prepared of segment.tools) {
      const { entry } = prepared;
      const annotations =
        entry.annotations === undefined
          ? ''
          : JSON.stringify(entry.annotations);
      texts.push(entry.tool, entry.description, annotations);
      schemas.push(schemaText(prepared) ?? '{"type":"object"}');
      ascii[tool] =
        Buffer.byteLength(entry.tool) === entry.tool.length &&
        Buffer.byteLength(entry.description) === entry.description.length &&
        Buffer.byteLength(annotations) === annotations.length
          ? 1
          : 0;
      tool += 1;
    }
  const textEnds = endsOf(texts);
  const schemaEnds = endsOf(schemas);
  counts.textBytes = textEnds[texts.length] as number;
  counts.schemaBytes = schemaEnds[schemas.length] as number;
  const header: Header = {
    catalogVersion: VERSION,
    bag: [...options.bag],
    widths,
    counts,
    targets,
  };
  const headerBytes = paddedJson(header, 8);
  const places = sectionPlaces(counts, widths, headerBytes.length);
  if (places.end > 0xffffffff)
    throw new CatalogError({
      code: CatalogErrorCode.InvalidArgument,
      message: `saveCatalog: the saved catalog would take ${places.end} bytes, more than 4 GiB; save fewer targets.`,
    });
  const buffer = Buffer.alloc(places.end);
  const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, places.end);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  bytes.set(MAGIC, 0);
  view.setUint32(8, SAVED_CATALOG_VERSION, true);
  view.setUint32(12, places.end, true);
  view.setUint32(48, headerBytes.length, true);
  bytes.set(headerBytes, HEADER_AT);
  const writer = sectionWriter(view, places);
  const segmentTotals = [
    'segmentTools',
    'segmentTerms',
    'segmentPostings',
    'segmentNames',
    'segmentBare',
  ] as const;
  const totals = new Float64Array(5);
  // Per term id, its local number in the segment being written.
  const localOf = new Int32Array(TERMS.size);
  segmentTotals.forEach((name) => writer.u32(name, 0));
  for (const { segment } of segments) {
    const lengths = [
      segment.tools.length,
      segment.termIds.length,
      segment.documents.length,
      segment.nameTerms.length,
      segment.bareNames.length,
    ];
    segmentTotals.forEach((name, index) => {
      totals[index] = (totals[index] as number) + (lengths[index] as number);
      writer.u32(name, totals[index] as number);
    });
    for (const length of segment.fieldLengths)
      writer.f64('fieldLengths', length);
    segment.termIds.forEach((id, local) => {
      localOf[id] = local;
      writer.u32('termIds', numberOf[id] as number);
    });
    for (const offset of segment.offsets) writer.u32('offsets', offset);
    for (let slot = 0; slot < segment.documents.length; slot += 1) {
      writer.unsigned(
        'documents',
        segment.documents[slot] as number,
        widths.documents,
      );
      const bag = segment.bags[slot] as number;
      if (widths.bags === 8) writer.f64('bags', bag);
      else if (widths.bags === 4) writer.f32('bags', bag);
      else writer.unsigned('bags', bag, 2);
      writer.u8('inName', segment.inName[slot] as number);
    }
    for (const offset of segment.nameOffsets) writer.u32('nameOffsets', offset);
    for (const id of segment.nameTerms)
      writer.u32('nameTerms', numberOf[id] as number);
    for (const id of segment.bareNames)
      writer.u32('bareNames', numberOf[id] as number);
    const target = targets[writer.segment] as SavedCatalogTarget;
    writer.segment += 1;
    segment.tools.forEach((prepared, local) => {
      const { entry } = prepared;
      writer.f64('bagLengths', segment.bagLengths[local] as number);
      writer.u32('records', target.backends.indexOf(entry.backend));
      writer.u32('records', target.profiles.indexOf(entry.profile));
      writer.u32('records', toolFlags(entry));
      writer.u32('records', ascii[writer.tool] as number);
      writer.tool += 1;
      const packed = prepared.terms;
      for (let index = 0; index < packed.length; index += 1)
        writer.unsigned(
          'toolTerms',
          index < FIELD_COUNT
            ? (packed[index] as number)
            : (localOf[packed[index] as number] as number),
          widths.toolTerms,
        );
    });
  }
  for (const end of textEnds) writer.u32('textEnds', end);
  for (const end of schemaEnds) writer.u32('schemaEnds', end);
  let at = places.texts;
  for (const text of texts) at += buffer.write(text, at, 'utf8');
  at = places.schemas;
  for (const text of schemas) at += buffer.write(text, at, 'utf8');
  bytes.set(
    createHash('sha256').update(bytes.subarray(DIGESTED_FROM)).digest(),
    DIGEST_AT,
  );
  return bytes;
}

/** The end of each string in the UTF-8 concatenation of `strings`, after a 0. */
function endsOf(strings: readonly string[]): Uint32Array {
  const ends = new Uint32Array(strings.length + 1);
  let total = 0;
  strings.forEach((text, index) => {
    total += Buffer.byteLength(text, 'utf8');
    ends[index + 1] = total;
  });
  return ends;
}

/** Appends little-endian numbers to each section in turn. */
function sectionWriter(
  view: DataView,
  places: Record<SectionName | 'end', number>,
) {
  const next = { ...places };
  return {
    segment: 0,
    tool: 0,
    u8(name: SectionName, value: number): void {
      view.setUint8(next[name], value);
      next[name] += 1;
    },
    u32(name: SectionName, value: number): void {
      view.setUint32(next[name], value, true);
      next[name] += 4;
    },
    unsigned(name: SectionName, value: number, width: 2 | 4): void {
      if (width === 2) view.setUint16(next[name], value, true);
      else view.setUint32(next[name], value, true);
      next[name] += width;
    },
    f32(name: SectionName, value: number): void {
      view.setFloat32(next[name], value, true);
      next[name] += 4;
    },
    f64(name: SectionName, value: number): void {
      view.setFloat64(next[name], value, true);
      next[name] += 8;
    },
  };
}

function isNames(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'string' && item !== '')
  );
}

function validWidths(value: unknown): value is Widths {
  const widths = value as Partial<Widths> | null;
  return (
    typeof widths === 'object' &&
    widths !== null &&
    (widths.documents === 2 || widths.documents === 4) &&
    (widths.bags === 2 || widths.bags === 4 || widths.bags === 8) &&
    (widths.toolTerms === 2 || widths.toolTerms === 4)
  );
}

/** A saved catalog whose magic, versions, length and header were checked. */
type ReadCatalog = {
  bytes: Uint8Array;
  header: Header;
  places: Record<SectionName | 'end', number>;
};

/** Checks magic, versions, length and header (not the digest). */
export function readSavedCatalog(value: unknown, where: string): ReadCatalog {
  if (!(value instanceof Uint8Array))
    refuseCatalog(where, 'a saved catalog must be a Uint8Array');
  const bytes = value;
  if (
    bytes.length < MAGIC.length ||
    MAGIC.some((byte, index) => bytes[index] !== byte)
  )
    refuseCatalog(where, 'not a saved catalog (its first bytes are wrong)');
  if (bytes.length < HEADER_AT)
    refuseCatalog(where, `truncated: ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const version = view.getUint32(8, true);
  if (version !== SAVED_CATALOG_VERSION)
    foreignCatalog(
      where,
      `written in layout ${version}, this @heretek/catalog reads layout ${SAVED_CATALOG_VERSION}`,
    );
  const total = view.getUint32(12, true);
  checkLength(bytes, total, (problem) => refuseCatalog(where, problem));
  const headerLength = view.getUint32(48, true);
  if (headerLength % 8 !== 0 || HEADER_AT + headerLength > total)
    refuseCatalog(where, 'its header length is out of range (corrupt)');
  let json: unknown;
  try {
    json = JSON.parse(utf8(bytes, HEADER_AT, HEADER_AT + headerLength));
  } catch {
    refuseCatalog(where, 'its header is not JSON (corrupt)');
  }
  const header = json as Partial<Header> | null;
  if (typeof header !== 'object' || header === null)
    refuseCatalog(where, 'its header is not an object (corrupt)');
  if (header.catalogVersion !== VERSION)
    foreignCatalog(
      where,
      `written by @heretek/catalog ${JSON.stringify(header.catalogVersion)}, this is ${VERSION}`,
    );
  const counts = header.counts as Partial<Counts> | undefined;
  if (
    !Array.isArray(header.bag) ||
    header.bag.length !== FIELD_COUNT ||
    !header.bag.every((weight) => typeof weight === 'number') ||
    !validWidths(header.widths) ||
    typeof counts !== 'object' ||
    counts === null ||
    !SECTION_COUNTS.every((name) => isCount(counts[name])) ||
    !Array.isArray(header.targets) ||
    header.targets.length !== counts.segments
  )
    refuseCatalog(
      where,
      'its header lacks a field or has a malformed one (corrupt)',
    );
  const seen = new Set<string>();
  let tools = 0;
  for (const target of header.targets as unknown[]) {
    const item = target as Partial<SavedCatalogTarget> | null;
    if (
      typeof item !== 'object' ||
      item === null ||
      typeof item.target !== 'string' ||
      typeof item.key !== 'string' ||
      !isCount(item.tools) ||
      item.tools === 0 ||
      !isNames(item.backends) ||
      !isNames(item.profiles)
    )
      refuseCatalog(where, 'its header has a malformed target (corrupt)');
    if (seen.has(item.target))
      refuseCatalog(where, `target "${item.target}" appears twice (corrupt)`);
    seen.add(item.target);
    tools += item.tools;
  }
  if (tools !== counts.tools)
    refuseCatalog(where, 'its targets do not add up to its tools (corrupt)');
  const places = sectionPlaces(counts as Counts, header.widths, headerLength);
  if (places.end !== total)
    refuseCatalog(where, 'its counts do not match its length (corrupt)');
  return { bytes, header: header as Header, places };
}

const SECTION_COUNTS = [
  'segments',
  'tools',
  'terms',
  'localTerms',
  'postings',
  'nameTerms',
  'bareNames',
  'toolTerms',
  'textBytes',
  'schemaBytes',
] as const;

/**
 * Reads the header of a saved catalog (its version, and each target with its key, tool count,
 * backends and profiles) without checking its digest or decoding its tools: what a caller
 * needs to decide which targets are still current before restoring it.
 *
 * @throws CatalogError `INDEX_PART_VERSION` when another layout or catalog version wrote it;
 * `INVALID_INDEX_PART` when it is not a saved catalog, is truncated or its header is corrupt.
 */
export function describeSavedCatalog(bytes: Uint8Array): SavedCatalogInfo {
  const { header } = readSavedCatalog(bytes, 'describeSavedCatalog');
  return {
    version: SAVED_CATALOG_VERSION,
    catalogVersion: header.catalogVersion,
    tools: header.counts.tools,
    targets: header.targets.map((target) => ({
      target: target.target,
      key: target.key,
      tools: target.tools,
      backends: [...target.backends],
      profiles: [...target.profiles],
    })),
  };
}

/** Whether the stored digest of a read catalog is the SHA-256 of `digest` (computed over bytes [48, total)). */
export function digestMatches(read: ReadCatalog, digest: Uint8Array): boolean {
  const stored = read.bytes.subarray(DIGEST_AT, DIGEST_AT + 32);
  if (digest.length !== 32) return false;
  for (let index = 0; index < 32; index += 1)
    if (stored[index] !== digest[index]) return false;
  return true;
}

/** The bytes the digest covers. */
export function digestedBytes(read: ReadCatalog): Uint8Array {
  return read.bytes.subarray(DIGESTED_FROM);
}

/** Checks the digest of a read catalog synchronously. */
export function checkDigest(read: ReadCatalog, where: string): void {
  const digest = createHash('sha256').update(digestedBytes(read)).digest();
  if (!digestMatches(read, digest))
    refuseCatalog(where, 'its digest does not match its content (corrupt)');
}

/** Refuses a read catalog whose digest is not `digest`. */
export function requireDigest(
  read: ReadCatalog,
  digest: Uint8Array,
  where: string,
): void {
  if (!digestMatches(read, digest))
    refuseCatalog(where, 'its digest does not match its content (corrupt)');
}

/** One restored target: its key and its segment's tools and arrays. */
export type RestoredTarget = {
  target: string;
  key: string;
  tools: PreparedTool[];
  arrays: SegmentArrays;
};

/** What a restore yields: the kept targets in catalog order, the dropped ones, and the kept ones' document frequencies. */
export type RestoredCatalog = {
  kept: RestoredTarget[];
  dropped: string[];
  /** Document frequency of each term id over the kept targets. */
  frequencies: Int32Array;
  /** The bag weights the postings were computed with. */
  bag: readonly number[];
};

/** Typed views of a saved catalog's sections (copies when the bytes are not aligned or not little-endian). */
class Sections {
  readonly #read: ReadCatalog;
  readonly #aligned: Uint8Array;
  constructor(read: ReadCatalog) {
    this.#read = read;
    const { bytes } = read;
    // Read in place when the bytes start at a multiple of 8, else from one aligned copy.
    this.#aligned =
      littleEndian && bytes.byteOffset % 8 === 0
        ? bytes
        : Uint8Array.prototype.slice.call(bytes); // a copy, even of a Buffer
  }
  get bytes(): Uint8Array {
    return this.#aligned;
  }
  #view<T>(
    name: SectionName,
    count: number,
    make: new (buffer: ArrayBuffer, offset: number, length: number) => T,
    width: number,
    get: (view: DataView, at: number) => number,
  ): T {
    const at = this.#read.places[name];
    const bytes = this.#aligned;
    if (littleEndian)
      return new make(
        bytes.buffer as ArrayBuffer,
        bytes.byteOffset + at,
        count,
      );
    const copy = new make(new ArrayBuffer(count * width), 0, count);
    const view = new DataView(bytes.buffer, bytes.byteOffset + at);
    for (let index = 0; index < count; index += 1)
      (copy as unknown as number[])[index] = get(view, index * width);
    return copy;
  }
  u16(name: SectionName, count: number): Uint16Array {
    return this.#view(name, count, Uint16Array, 2, (view, at) =>
      view.getUint16(at, true),
    );
  }
  u32(name: SectionName, count: number): Uint32Array {
    return this.#view(name, count, Uint32Array, 4, (view, at) =>
      view.getUint32(at, true),
    );
  }
  i32(name: SectionName, count: number): Int32Array {
    return this.#view(name, count, Int32Array, 4, (view, at) =>
      view.getInt32(at, true),
    );
  }
  f32(name: SectionName, count: number): Float32Array {
    return this.#view(name, count, Float32Array, 4, (view, at) =>
      view.getFloat32(at, true),
    );
  }
  f64(name: SectionName, count: number): Float64Array {
    return this.#view(name, count, Float64Array, 8, (view, at) =>
      view.getFloat64(at, true),
    );
  }
  u8(name: SectionName, count: number): Uint8Array {
    const at = this.#read.places[name];
    return this.#aligned.subarray(at, at + count);
  }
}

/** Throws when the running totals `values` do not start at 0, rise, and end at `total`. */
function checkTotals(
  values: Uint32Array | Int32Array,
  total: number,
  fail: (problem: string) => never,
  what: string,
): void {
  if (values[0] !== 0 || values[values.length - 1] !== total)
    fail(`its ${what} do not match its header (corrupt)`);
  for (let index = 1; index < values.length; index += 1)
    if ((values[index] as number) < (values[index - 1] as number))
      fail(`its ${what} are out of order (corrupt)`);
}

/**
 * Restores the targets of a read catalog (digest checked by the caller) that `keep` accepts,
 * in catalog order, checking every count and index. A generator: it yields between pieces
 * of work (a slice of tools at most), so a caller may spread it over many turns.
 */
export function* restoreSavedCatalog(options: {
  read: ReadCatalog;
  keep: (target: string, key: string, info: SavedCatalogTarget) => boolean;
  where: string;
}): Generator<undefined, RestoredCatalog> {
  const { read, keep, where } = options;
  const fail: (problem: string) => never = (problem) =>
    refuseCatalog(where, problem);
  const { header } = read;
  const counts = header.counts;
  const sections = new Sections(read);
  const bytes = sections.bytes;
  const segmentTools = sections.u32('segmentTools', counts.segments + 1);
  const segmentTerms = sections.u32('segmentTerms', counts.segments + 1);
  const segmentPostings = sections.u32('segmentPostings', counts.segments + 1);
  const segmentNames = sections.u32('segmentNames', counts.segments + 1);
  const segmentBare = sections.u32('segmentBare', counts.segments + 1);
  checkTotals(segmentTools, counts.tools, fail, 'tool totals');
  checkTotals(segmentTerms, counts.localTerms, fail, 'term totals');
  checkTotals(segmentPostings, counts.postings, fail, 'posting totals');
  checkTotals(segmentNames, counts.nameTerms, fail, 'name term totals');
  checkTotals(segmentBare, counts.bareNames, fail, 'bare name totals');
  const textEnds = sections.u32(
    'textEnds',
    counts.terms + counts.tools * TEXTS_PER_TOOL + 1,
  );
  checkTotals(textEnds, counts.textBytes, fail, 'text ends');
  const schemaEnds = sections.u32('schemaEnds', counts.tools + 1);
  checkTotals(schemaEnds, counts.schemaBytes, fail, 'schema ends');
  const textsAt = read.places.texts;
  // The catalog's term table onto the process's term dictionary, once.
  const ids = mapTerms(bytes, textsAt, textEnds, counts.terms, fail);
  yield;
  const fieldLengths = sections.f64(
    'fieldLengths',
    counts.segments * FIELD_COUNT,
  );
  const termIds = sections.u32('termIds', counts.localTerms);
  const offsets = sections.i32('offsets', counts.localTerms + counts.segments);
  const { widths } = header;
  const documents =
    widths.documents === 2
      ? sections.u16('documents', counts.postings)
      : sections.i32('documents', counts.postings);
  const bags =
    widths.bags === 2
      ? sections.u16('bags', counts.postings)
      : widths.bags === 4
        ? sections.f32('bags', counts.postings)
        : sections.f64('bags', counts.postings);
  const inName = sections.u8('inName', counts.postings);
  const nameOffsets = sections.i32(
    'nameOffsets',
    counts.tools + counts.segments,
  );
  const nameTerms = sections.u32('nameTerms', counts.nameTerms);
  const bareNames = sections.u32('bareNames', counts.bareNames);
  const bagLengths = sections.f64('bagLengths', counts.tools);
  const records = sections.u32('records', counts.tools * RECORD);
  const toolTerms =
    widths.toolTerms === 2
      ? sections.u16('toolTerms', counts.toolTerms)
      : sections.u32('toolTerms', counts.toolTerms);
  const schemas = new SavedTexts(
    Buffer.from(
      bytes.buffer,
      bytes.byteOffset + read.places.schemas,
      counts.schemaBytes,
    ),
    schemaEnds,
  );
  const textBuffer = Buffer.from(
    bytes.buffer,
    bytes.byteOffset + textsAt,
    counts.textBytes,
  );
  // ASCII texts (most) are cut out of one string of the whole table.
  let asciiTexts: string | undefined;
  const text = (index: number, ascii: boolean): string => {
    const start = textEnds[index] as number;
    const end = textEnds[index + 1] as number;
    if (!ascii) return textBuffer.toString('utf8', start, end);
    asciiTexts ??= textBuffer.toString('latin1');
    return asciiTexts.slice(start, end);
  };
  const frequencies = new Int32Array(TERMS.size);
  // Per term id, the last segment that had it (a term twice in a segment shows).
  const stamps = new Int32Array(TERMS.size);
  let stamp = 0;
  const kept: RestoredTarget[] = [];
  const dropped: string[] = [];
  const annotationsByText = new Map<string, ToolEntry['annotations']>();
  // Each kept segment's terms in the process's numbering, in one array for all of them.
  const mapped = new Int32Array(counts.localTerms);
  const mappedNames = new Int32Array(counts.nameTerms);
  const mappedBare = new Int32Array(counts.bareNames);
  let toolTermsAt = 0;
  const toMapped = (
    from: Uint32Array,
    into: Int32Array,
    start: number,
    end: number,
  ): Int32Array => {
    for (let index = start; index < end; index += 1) {
      const number = from[index] as number;
      if (number >= counts.terms)
        fail(`a term number is out of range (corrupt)`);
      into[index] = ids[number] as number;
    }
    return into.subarray(start, end);
  };
  for (let segment = 0; segment < counts.segments; segment += 1) {
    const info = header.targets[segment] as SavedCatalogTarget;
    const firstTool = segmentTools[segment] as number;
    const toolCount = (segmentTools[segment + 1] as number) - firstTool;
    if (toolCount !== info.tools)
      fail(
        `target "${info.target}" has another number of tools than its header says`,
      );
    // The packed terms of every tool are walked (kept or not) to find where the next begin.
    const toolStarts = new Int32Array(toolCount + 1);
    for (let local = 0; local < toolCount; local += 1) {
      toolStarts[local] = toolTermsAt;
      const length = toolTerms[toolTermsAt + FIELD_COUNT - 1] as number;
      if (!(length >= FIELD_COUNT) || toolTermsAt + length > counts.toolTerms)
        fail(`tool ${firstTool + local} has terms out of range (corrupt)`);
      toolTermsAt += length;
    }
    toolStarts[toolCount] = toolTermsAt;
    if (!keep(info.target, info.key, info)) {
      dropped.push(info.target);
      continue;
    }
    try {
      assertTargetName(info.target);
    } catch (error) {
      fail((error as Error).message);
    }
    const termStart = segmentTerms[segment] as number;
    const termEnd = segmentTerms[segment + 1] as number;
    const postingStart = segmentPostings[segment] as number;
    const postingCount =
      (segmentPostings[segment + 1] as number) - postingStart;
    const segmentOffsets = offsets.subarray(
      termStart + segment,
      termEnd + segment + 1,
    );
    checkTotals(
      segmentOffsets,
      postingCount,
      fail,
      `target "${info.target}"'s postings`,
    );
    const segmentIds = toMapped(termIds, mapped, termStart, termEnd);
    stamp += 1;
    for (let index = 0; index < segmentIds.length; index += 1) {
      const id = segmentIds[index] as number;
      if (stamps[id] === stamp)
        fail(`target "${info.target}" has a term twice (corrupt)`);
      stamps[id] = stamp;
    }
    const segmentDocuments = documents.subarray(
      postingStart,
      postingStart + postingCount,
    );
    for (let index = 0; index < segmentIds.length; index += 1) {
      const start = segmentOffsets[index] as number;
      const end = segmentOffsets[index + 1] as number;
      const id = segmentIds[index] as number;
      frequencies[id] = (frequencies[id] as number) + (end - start);
      let previous = -1;
      for (let slot = start; slot < end; slot += 1) {
        const document = segmentDocuments[slot] as number;
        if (document <= previous || document >= toolCount)
          fail(`target "${info.target}" has a posting out of range (corrupt)`);
        previous = document;
      }
    }
    const names = nameOffsets.subarray(
      firstTool + segment,
      firstTool + segment + toolCount + 1,
    );
    const nameStart = segmentNames[segment] as number;
    const nameEnd = segmentNames[segment + 1] as number;
    checkTotals(
      names,
      nameEnd - nameStart,
      fail,
      `target "${info.target}"'s name terms`,
    );
    const arrays: SegmentArrays = {
      fieldLengths: fieldLengths.subarray(
        segment * FIELD_COUNT,
        (segment + 1) * FIELD_COUNT,
      ),
      bagLengths: bagLengths.subarray(firstTool, firstTool + toolCount),
      termIds: segmentIds,
      offsets: segmentOffsets,
      documents: segmentDocuments,
      bags: bags.subarray(postingStart, postingStart + postingCount),
      inName: inName.subarray(postingStart, postingStart + postingCount),
      nameOffsets: names,
      nameTerms: toMapped(nameTerms, mappedNames, nameStart, nameEnd),
      bareNames: toMapped(
        bareNames,
        mappedBare,
        segmentBare[segment] as number,
        segmentBare[segment + 1] as number,
      ),
    };
    const tools: PreparedTool[] = [];
    const seen = new Set<string>();
    for (let local = 0; local < toolCount; local += 1) {
      const position = firstTool + local;
      const record = position * RECORD;
      const backend = info.backends[records[record] as number];
      const profile = info.profiles[records[record + 1] as number];
      const flags = records[record + 2] as number;
      const ascii = records[record + 3] === 1;
      if (backend === undefined || profile === undefined || !validFlags(flags))
        fail(`tool ${position} has an index out of range (corrupt)`);
      const base = counts.terms + position * TEXTS_PER_TOOL;
      const tool = text(base, ascii);
      if (tool === '' || seen.has(tool))
        fail(
          `target "${info.target}" has an empty or repeated tool name (corrupt)`,
        );
      seen.add(tool);
      const entry = restoredEntry({
        target: info.target,
        tool,
        backend,
        profile,
        description: text(base + 1, ascii),
        flags,
        annotations: () => text(base + 2, ascii),
        annotationsByText,
        fail,
      });
      const start = toolStarts[local] as number;
      const end = toolStarts[local + 1] as number;
      for (let index = start; index < start + FIELD_COUNT; index += 1) {
        const fieldEnd = toolTerms[index] as number;
        if (
          fieldEnd <
          (index === start ? FIELD_COUNT : (toolTerms[index - 1] as number))
        )
          fail(`tool "${entry.name}" has its fields out of order (corrupt)`);
      }
      for (let index = start + FIELD_COUNT; index < end; index += 1)
        if ((toolTerms[index] as number) >= segmentIds.length)
          fail(`tool "${entry.name}" names a term out of range (corrupt)`);
      const restored = new RestoredTool({
        entry,
        saved: schemas,
        savedIndex: position,
        packed: toolTerms,
        start,
        end,
        ids: segmentIds,
      });
      if (local === 0) {
        // The first tool's name, identifier and target terms are analyzed again and compared
        // (another analysis of the same version shows there).
        const prepared = adoptPreparedTool({
          entry,
          terms: restored.terms,
          checkName: true,
          saved: schemas,
          savedIndex: position,
        });
        if (typeof prepared === 'string') fail(prepared);
        tools.push(prepared);
      } else tools.push(restored);
    }
    kept.push({ target: info.target, key: info.key, tools, arrays });
    yield;
  }
  return { kept, dropped, frequencies, bag: header.bag };
}

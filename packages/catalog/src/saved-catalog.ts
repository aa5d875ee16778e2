import { createHash } from 'node:crypto';
import { assertTargetName } from './backends.js';
import { CatalogError, CatalogErrorCode } from './errors.js';
import {
  adoptPreparedTool,
  FIELD_COUNT,
  type PreparedTool,
  RestoredTool,
  savedTerms,
  termsLength,
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
  checkDistinct,
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

/** Least bytes of tool texts decoded at once (Node keeps a string decoded from over 1 MB outside the heap). */
const TEXT_SLICE = 1 << 21;

/** Terms of the term table mapped onto the dictionary between two yields of a restore. */
const TERM_SLICE = 8192;

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

/** Where each section of a saved catalog starts, and where the last ends. */
type Places = Record<SectionName | 'end', number>;

/** Where each section starts, and the end of the last, after a header of `headerBytes`. */
function sectionPlaces(
  counts: Counts,
  widths: Widths,
  headerBytes: number,
): Places {
  const places = {} as Places;
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
 * What a saved catalog of some segments holds besides its sections: its term table (catalog
 * term ids in order of first appearance, and each id's number in it), counts, widths and targets.
 */
type CatalogPlan = {
  /** Per term id, its number in the term table (-1 when no segment has it). */
  numberOf: Int32Array;
  terms: number[];
  counts: Counts;
  widths: Widths;
  targets: SavedCatalogTarget[];
};

/** Adds a segment's items to `counts`, and widens `widths` where its numbers need it. */
function countSegment(segment: Segment, counts: Counts, widths: Widths): void {
  counts.tools += segment.tools.length;
  counts.localTerms += segment.termIds.length;
  counts.postings += segment.documents.length;
  counts.nameTerms += segment.nameTerms.length;
  counts.bareNames += segment.bareNames.length;
  for (const tool of segment.tools) {
    const length = termsLength(tool);
    counts.toolTerms += length;
    if (length > 0xffff) widths.toolTerms = 4;
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
}

/** A segment as the header lists it: target, key, tool count, distinct backends and profiles. */
function savedTarget(segment: Segment, key: string): SavedCatalogTarget {
  const backends = new Set<string>();
  const profiles = new Set<string>();
  for (const { entry } of segment.tools) {
    backends.add(entry.backend);
    profiles.add(entry.profile);
  }
  return {
    target: segment.target,
    key,
    tools: segment.tools.length,
    backends: [...backends],
    profiles: [...profiles],
  };
}

/** Texts written, and bytes hashed, between two steps of {@link encodeSavedCatalog}. */
const TEXTS_STEP = 4096;
const DIGEST_STEP = 1 << 22;

/** The term table, counts (all but the texts' bytes), widths and targets of `segments`. */
function* planCatalog(
  segments: readonly SavedSegment[],
): Generator<undefined, CatalogPlan> {
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
    countSegment(segment, counts, widths);
    targets.push(savedTarget(segment, key));
    yield;
  }
  counts.terms = terms.length;
  return { numberOf, terms, counts, widths, targets };
}

/**
 * The text table (the terms, then each tool's bare name, description and annotations JSON),
 * the schema table, and whether each tool's texts are ASCII.
 */
function* catalogTexts(
  segments: readonly SavedSegment[],
  plan: CatalogPlan,
): Generator<
  undefined,
  { texts: string[]; schemas: string[]; ascii: Uint8Array }
> {
  const texts: string[] = plan.terms.map((id) => TERMS.term(id));
  const schemas: string[] = [];
  const ascii = new Uint8Array(plan.counts.tools);
  let tool = 0;
  for (const { segment } of segments) {
    yield;
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
  }
  return { texts, schemas, ascii };
}

/** The bytes of a saved catalog with `header`: its start (magic, layout, length, header) written, its sections zero. */
function startCatalog(header: Header): {
  buffer: Buffer;
  bytes: Uint8Array;
  places: Places;
} {
  const headerBytes = paddedJson(header, 8);
  const places = sectionPlaces(
    header.counts,
    header.widths,
    headerBytes.length,
  );
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
  return { buffer, bytes, places };
}

/** Views of the sections of a saved catalog being written, in the machine's order. */
type WrittenSections = {
  /** The running totals of each segment's tools, terms, postings, name terms and bare names. */
  segmentTotals: Uint32Array[];
  fieldLengths: Float64Array;
  termIds: Uint32Array;
  offsets: Uint32Array;
  documents: Uint16Array | Uint32Array;
  bags: Float64Array | Float32Array | Uint16Array | Uint32Array;
  inName: Uint8Array;
  nameOffsets: Uint32Array;
  nameTerms: Uint32Array;
  bareNames: Uint32Array;
  bagLengths: Float64Array;
  records: Uint32Array;
  toolTerms: Uint16Array | Uint32Array;
  textEnds: Uint32Array;
  schemaEnds: Uint32Array;
};

/** Views of each section of `bytes` (numbers are put in little-endian order afterwards when the machine's is not). */
function writtenSections(
  bytes: Uint8Array,
  places: Places,
  plan: CatalogPlan,
): WrittenSections {
  const { counts, widths } = plan;
  const memory = bytes.buffer;
  const at = (name: SectionName): number => bytes.byteOffset + places[name];
  const u32 = (name: SectionName, count: number): Uint32Array =>
    new Uint32Array(memory, at(name), count);
  const numbers = (name: SectionName, count: number, width: 2 | 4) =>
    width === 2 ? new Uint16Array(memory, at(name), count) : u32(name, count);
  const perSegment = counts.segments + 1;
  return {
    segmentTotals: [
      u32('segmentTools', perSegment),
      u32('segmentTerms', perSegment),
      u32('segmentPostings', perSegment),
      u32('segmentNames', perSegment),
      u32('segmentBare', perSegment),
    ],
    fieldLengths: new Float64Array(
      memory,
      at('fieldLengths'),
      counts.segments * FIELD_COUNT,
    ),
    termIds: u32('termIds', counts.localTerms),
    offsets: u32('offsets', counts.localTerms + counts.segments),
    documents: numbers('documents', counts.postings, widths.documents),
    bags:
      widths.bags === 8
        ? new Float64Array(memory, at('bags'), counts.postings)
        : widths.bags === 4
          ? new Float32Array(memory, at('bags'), counts.postings)
          : numbers('bags', counts.postings, 2),
    inName: bytes.subarray(places.inName, places.inName + counts.postings),
    nameOffsets: u32('nameOffsets', counts.tools + counts.segments),
    nameTerms: u32('nameTerms', counts.nameTerms),
    bareNames: u32('bareNames', counts.bareNames),
    bagLengths: new Float64Array(memory, at('bagLengths'), counts.tools),
    records: u32('records', counts.tools * RECORD),
    toolTerms: numbers('toolTerms', counts.toolTerms, widths.toolTerms),
    textEnds: u32('textEnds', counts.terms + counts.tools * TEXTS_PER_TOOL + 1),
    schemaEnds: u32('schemaEnds', counts.tools + 1),
  };
}

/** What the segments are written with: the sections, the plan, each tool's ASCII flag, and where the next items go. */
type SegmentWriter = {
  sections: WrittenSections;
  plan: CatalogPlan;
  ascii: Uint8Array;
  /** Per term id, its local number in the segment being written. */
  localOf: Int32Array;
  /** Items written so far to the sections shared by every segment. */
  written: {
    terms: number;
    postings: number;
    names: number;
    bare: number;
    tools: number;
    toolTerms: number;
  };
};

/** Writes segment `index` (its totals, statistics, terms, postings and tools) where the last one ended. */
function writeSegment(
  writer: SegmentWriter,
  segment: Segment,
  index: number,
): void {
  const { sections, written } = writer;
  const { numberOf } = writer.plan;
  const lengths = [
    segment.tools.length,
    segment.termIds.length,
    segment.documents.length,
    segment.nameTerms.length,
    segment.bareNames.length,
  ];
  sections.segmentTotals.forEach((totals, kind) => {
    totals[index + 1] = (totals[index] as number) + (lengths[kind] as number);
  });
  sections.fieldLengths.set(segment.fieldLengths, index * FIELD_COUNT);
  const ids = segment.termIds;
  for (let local = 0; local < ids.length; local += 1) {
    const id = ids[local] as number;
    writer.localOf[id] = local;
    sections.termIds[written.terms + local] = numberOf[id] as number;
  }
  sections.offsets.set(segment.offsets, written.terms + index);
  written.terms += ids.length;
  sections.documents.set(segment.documents, written.postings);
  sections.bags.set(segment.bags, written.postings);
  sections.inName.set(segment.inName, written.postings);
  written.postings += segment.documents.length;
  sections.nameOffsets.set(segment.nameOffsets, written.tools + index);
  for (const id of segment.nameTerms)
    sections.nameTerms[written.names++] = numberOf[id] as number;
  for (const id of segment.bareNames)
    sections.bareNames[written.bare++] = numberOf[id] as number;
  sections.bagLengths.set(segment.bagLengths, written.tools);
  writeTools(writer, segment, writer.plan.targets[index] as SavedCatalogTarget);
}

/** Writes each tool's record and packed terms (in the segment's local numbering). */
function writeTools(
  writer: SegmentWriter,
  segment: Segment,
  target: SavedCatalogTarget,
): void {
  const { written, localOf, ascii } = writer;
  const { records, toolTerms } = writer.sections;
  const ids = segment.termIds;
  segment.tools.forEach((prepared) => {
    const { entry } = prepared;
    const record = written.tools * RECORD;
    records[record] = target.backends.indexOf(entry.backend);
    records[record + 1] = target.profiles.indexOf(entry.profile);
    records[record + 2] = toolFlags(entry);
    records[record + 3] = ascii[written.tools] as number;
    written.tools += 1;
    const saved = savedTerms(prepared, ids);
    if (saved !== undefined) {
      toolTerms.set(saved, written.toolTerms);
      written.toolTerms += saved.length;
      return;
    }
    const packed = prepared.terms;
    for (let index = 0; index < packed.length; index += 1)
      toolTerms[written.toolTerms++] =
        index < FIELD_COUNT
          ? (packed[index] as number)
          : (localOf[packed[index] as number] as number);
  });
}

/**
 * The saved form of a whole catalog: every given segment with its key, one term table, the
 * segments' postings and statistics as they are, and each tool's entry and terms. A
 * generator of steps (a segment, a few thousand texts, a few megabytes of digest each), so
 * that a caller can yield to other work between them; the segments, once given, do not
 * change (a catalog replaces a segment, it never edits one), so the bytes are those of the
 * catalog when the encoding began.
 */
export function* encodeSavedCatalog(options: {
  segments: readonly SavedSegment[];
  bag: readonly number[];
}): Generator<undefined, Uint8Array> {
  const { segments } = options;
  const plan = yield* planCatalog(segments);
  const { counts } = plan;
  const { texts, schemas, ascii } = yield* catalogTexts(segments, plan);
  const textEnds = yield* endsOf(texts);
  const schemaEnds = yield* endsOf(schemas);
  counts.textBytes = textEnds[texts.length] as number;
  counts.schemaBytes = schemaEnds[schemas.length] as number;
  const { buffer, bytes, places } = startCatalog({
    catalogVersion: VERSION,
    bag: [...options.bag],
    widths: plan.widths,
    counts,
    targets: plan.targets,
  });
  const sections = writtenSections(bytes, places, plan);
  const writer: SegmentWriter = {
    sections,
    plan,
    ascii,
    localOf: new Int32Array(TERMS.size),
    written: {
      terms: 0,
      postings: 0,
      names: 0,
      bare: 0,
      tools: 0,
      toolTerms: 0,
    },
  };
  for (const [index, { segment }] of segments.entries()) {
    writeSegment(writer, segment, index);
    yield;
  }
  sections.textEnds.set(textEnds);
  sections.schemaEnds.set(schemaEnds);
  yield* writeTexts(buffer, places.texts, texts);
  yield* writeTexts(buffer, places.schemas, schemas);
  if (!littleEndian) toLittleEndian(bytes, places, counts, plan.widths);
  const digested = bytes.subarray(DIGESTED_FROM);
  const hash = createHash('sha256');
  for (let start = 0; start < digested.length; start += DIGEST_STEP) {
    hash.update(digested.subarray(start, start + DIGEST_STEP));
    yield;
  }
  bytes.set(hash.digest(), DIGEST_AT);
  return bytes;
}

/** Writes `strings` one after another as UTF-8 from `at`. */
function* writeTexts(
  buffer: Buffer,
  at: number,
  strings: readonly string[],
): Generator<undefined, void> {
  for (let index = 0; index < strings.length; index += 1) {
    at += buffer.write(strings[index] as string, at, 'utf8');
    if (index % TEXTS_STEP === TEXTS_STEP - 1) yield;
  }
}

/** Puts the numbers of every section, written in big-endian order, in little-endian order. */
function toLittleEndian(
  bytes: Uint8Array,
  places: Places,
  counts: Counts,
  widths: Widths,
): void {
  for (const [name, width, count] of SECTIONS) {
    const size = width === 0 ? widths[name as keyof Widths] : width;
    if (size === 1) continue;
    const start = places[name];
    const end = start + count(counts) * size;
    for (let item = start; item < end; item += size)
      bytes.subarray(item, item + size).reverse();
  }
}

/** The end of each string in the UTF-8 concatenation of `strings`, after a 0. */
function* endsOf(
  strings: readonly string[],
): Generator<undefined, Uint32Array> {
  const ends = new Uint32Array(strings.length + 1);
  let total = 0;
  for (let index = 0; index < strings.length; index += 1) {
    total += Buffer.byteLength(strings[index] as string, 'utf8');
    ends[index + 1] = total;
    if (index % TEXTS_STEP === TEXTS_STEP - 1) yield;
  }
  return ends;
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
  places: Places;
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
function digestMatches(read: ReadCatalog, digest: Uint8Array): boolean {
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

/** Typed views of every section of a saved catalog being restored (see SECTIONS). */
type ReadSections = {
  segmentTools: Uint32Array;
  segmentTerms: Uint32Array;
  segmentPostings: Uint32Array;
  segmentNames: Uint32Array;
  segmentBare: Uint32Array;
  textEnds: Uint32Array;
  schemaEnds: Uint32Array;
  fieldLengths: Float64Array;
  termIds: Uint32Array;
  offsets: Int32Array;
  documents: Uint16Array | Int32Array;
  bags: Uint16Array | Float32Array | Float64Array;
  inName: Uint8Array;
  nameOffsets: Int32Array;
  nameTerms: Uint32Array;
  bareNames: Uint32Array;
  bagLengths: Float64Array;
  records: Uint32Array;
  toolTerms: Uint16Array | Uint32Array;
};

/** The views of every section, at the widths the header gives. */
function readSections(sections: Sections, header: Header): ReadSections {
  const { counts, widths } = header;
  const perSegment = counts.segments + 1;
  return {
    segmentTools: sections.u32('segmentTools', perSegment),
    segmentTerms: sections.u32('segmentTerms', perSegment),
    segmentPostings: sections.u32('segmentPostings', perSegment),
    segmentNames: sections.u32('segmentNames', perSegment),
    segmentBare: sections.u32('segmentBare', perSegment),
    textEnds: sections.u32(
      'textEnds',
      counts.terms + counts.tools * TEXTS_PER_TOOL + 1,
    ),
    schemaEnds: sections.u32('schemaEnds', counts.tools + 1),
    fieldLengths: sections.f64('fieldLengths', counts.segments * FIELD_COUNT),
    termIds: sections.u32('termIds', counts.localTerms),
    offsets: sections.i32('offsets', counts.localTerms + counts.segments),
    documents:
      widths.documents === 2
        ? sections.u16('documents', counts.postings)
        : sections.i32('documents', counts.postings),
    bags:
      widths.bags === 2
        ? sections.u16('bags', counts.postings)
        : widths.bags === 4
          ? sections.f32('bags', counts.postings)
          : sections.f64('bags', counts.postings),
    inName: sections.u8('inName', counts.postings),
    nameOffsets: sections.i32('nameOffsets', counts.tools + counts.segments),
    nameTerms: sections.u32('nameTerms', counts.nameTerms),
    bareNames: sections.u32('bareNames', counts.bareNames),
    bagLengths: sections.f64('bagLengths', counts.tools),
    records: sections.u32('records', counts.tools * RECORD),
    toolTerms:
      widths.toolTerms === 2
        ? sections.u16('toolTerms', counts.toolTerms)
        : sections.u32('toolTerms', counts.toolTerms),
  };
}

/** Refuses running totals (per segment, and of the text and schema tables) that do not add up to the header's counts. */
function checkSectionTotals(
  read: ReadSections,
  counts: Counts,
  fail: (problem: string) => never,
): void {
  checkTotals(read.segmentTools, counts.tools, fail, 'tool totals');
  checkTotals(read.segmentTerms, counts.localTerms, fail, 'term totals');
  checkTotals(read.segmentPostings, counts.postings, fail, 'posting totals');
  checkTotals(read.segmentNames, counts.nameTerms, fail, 'name term totals');
  checkTotals(read.segmentBare, counts.bareNames, fail, 'bare name totals');
  checkTotals(read.textEnds, counts.textBytes, fail, 'text ends');
  checkTotals(read.schemaEnds, counts.schemaBytes, fail, 'schema ends');
}

/**
 * The catalog's term table mapped onto the process's term dictionary (the id of each of its
 * terms), TERM_SLICE terms between two yields; refuses a table with a term twice.
 */
function* mapTermTable(options: {
  bytes: Uint8Array;
  read: ReadCatalog;
  ends: Uint32Array;
  fail: (problem: string) => never;
}): Generator<undefined, Int32Array> {
  const { bytes, ends, fail } = options;
  const { terms } = options.read.header.counts;
  const ids = new Int32Array(terms);
  const table = options.read.places.texts;
  for (let start = 0; start < terms; start += TERM_SLICE) {
    const end = Math.min(terms, start + TERM_SLICE);
    mapTerms({ bytes, table, ends, start, end, into: ids, fail });
    yield;
  }
  checkDistinct(ids, fail);
  return ids;
}

/**
 * A saved catalog's text table. ASCII texts (most) are cut out of one string of a few
 * targets' texts; the others are decoded on their own.
 */
class CatalogTexts {
  readonly #buffer: Buffer;
  readonly #ends: Uint32Array;
  /** Number of terms (the tools' texts follow them). */
  readonly #terms: number;
  #ascii = '';
  #from = 0;
  constructor(buffer: Buffer, ends: Uint32Array, terms: number) {
    this.#buffer = buffer;
    this.#ends = ends;
    this.#terms = terms;
  }
  /** Text `index` of the table, ASCII or not as its tool's record says. */
  text(index: number, ascii: boolean): string {
    const start = this.#ends[index] as number;
    const end = this.#ends[index + 1] as number;
    if (!ascii) return this.#buffer.toString('utf8', start, end);
    return this.#ascii.slice(start - this.#from, end - this.#from);
  }
  /** Makes the ASCII string hold the texts of segment `segment` (of the totals `segmentTools`), when it does not yet. */
  reach(segment: number, segmentTools: Uint32Array): void {
    const end = this.#toolText(segmentTools[segment + 1] as number);
    if (end <= this.#from + this.#ascii.length) return;
    // The texts of this target and the next ones, at least TEXT_SLICE bytes: a string
    // that long is kept outside the JavaScript heap (never copied by the collector).
    this.#from = this.#toolText(segmentTools[segment] as number);
    let last = segment + 1;
    while (
      last < segmentTools.length - 1 &&
      this.#toolText(segmentTools[last] as number) - this.#from < TEXT_SLICE
    )
      last += 1;
    this.#ascii = this.#buffer.toString(
      'latin1',
      this.#from,
      this.#toolText(segmentTools[last] as number),
    );
  }
  /** Where the texts of tool `tool` start. */
  #toolText(tool: number): number {
    return this.#ends[this.#terms + tool * TEXTS_PER_TOOL] as number;
  }
}

/** What the targets of a saved catalog are restored from. */
type RestoreSource = {
  header: Header;
  sections: ReadSections;
  /** The term id of each term of the catalog's term table. */
  ids: Int32Array;
  texts: CatalogTexts;
  schemas: SavedTexts;
  fail: (problem: string) => never;
};

/**
 * Restores the targets of a saved catalog one by one, checking each count and index, and
 * adds up the kept ones' document frequencies. Made once the term table is mapped (the
 * dictionary has every term id by then).
 */
class TargetRestorer {
  /** Document frequency of each term id over the kept targets. */
  readonly frequencies = new Int32Array(TERMS.size);
  /** Per term id, the last segment that had it (a term twice in a segment shows). */
  readonly #stamps = new Int32Array(TERMS.size);
  #stamp = 0;
  readonly #annotationsByText = new Map<string, ToolEntry['annotations']>();
  // Each kept segment's terms in the process's numbering, in one array for all of them.
  readonly #mappedTerms: Int32Array;
  readonly #mappedNames: Int32Array;
  readonly #mappedBare: Int32Array;
  /** Where the packed terms of the next target's first tool start. */
  #toolTermsAt = 0;
  readonly #source: RestoreSource;
  constructor(source: RestoreSource) {
    this.#source = source;
    const { counts } = source.header;
    this.#mappedTerms = new Int32Array(counts.localTerms);
    this.#mappedNames = new Int32Array(counts.nameTerms);
    this.#mappedBare = new Int32Array(counts.bareNames);
  }

  /**
   * Where each tool's packed terms start in target `segment` (and where its last ends): the
   * packed terms of every tool are walked, kept or not, to find where the next begin.
   */
  toolStarts(segment: number, info: SavedCatalogTarget): Int32Array {
    const { sections, header } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const { segmentTools, toolTerms } = sections;
    const total = header.counts.toolTerms;
    const firstTool = segmentTools[segment] as number;
    const toolCount = (segmentTools[segment + 1] as number) - firstTool;
    if (toolCount !== info.tools)
      fail(
        `target "${info.target}" has another number of tools than its header says`,
      );
    const toolStarts = new Int32Array(toolCount + 1);
    let at = this.#toolTermsAt;
    for (let local = 0; local < toolCount; local += 1) {
      toolStarts[local] = at;
      const length = toolTerms[at + FIELD_COUNT - 1] as number;
      if (!(length >= FIELD_COUNT) || at + length > total)
        fail(`tool ${firstTool + local} has terms out of range (corrupt)`);
      at += length;
    }
    toolStarts[toolCount] = at;
    this.#toolTermsAt = at;
    return toolStarts;
  }

  /** Target `segment` (its tools' starts from {@link toolStarts}), its arrays and tools checked. */
  restore(
    segment: number,
    info: SavedCatalogTarget,
    toolStarts: Int32Array,
  ): RestoredTarget {
    const arrays = this.#arrays(segment, info);
    this.#source.texts.reach(segment, this.#source.sections.segmentTools);
    const tools = this.#tools({ segment, info, toolStarts, arrays });
    return { target: info.target, key: info.key, tools, arrays };
  }

  /** The arrays of target `segment`: views of the sections, its terms mapped to term ids. */
  #arrays(segment: number, info: SavedCatalogTarget): SegmentArrays {
    const { sections } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const firstTool = sections.segmentTools[segment] as number;
    // As many as the header says (toolStarts checked it).
    const toolCount = info.tools;
    const termStart = sections.segmentTerms[segment] as number;
    const termEnd = sections.segmentTerms[segment + 1] as number;
    const postingStart = sections.segmentPostings[segment] as number;
    const postingEnd = sections.segmentPostings[segment + 1] as number;
    const offsets = sections.offsets.subarray(
      termStart + segment,
      termEnd + segment + 1,
    );
    checkTotals(
      offsets,
      postingEnd - postingStart,
      fail,
      `target "${info.target}"'s postings`,
    );
    const termIds = this.#mapped(
      sections.termIds,
      this.#mappedTerms,
      termStart,
      termEnd,
    );
    const documents = sections.documents.subarray(postingStart, postingEnd);
    this.#countPostings(info, { termIds, offsets, documents });
    const nameOffsets = sections.nameOffsets.subarray(
      firstTool + segment,
      firstTool + segment + toolCount + 1,
    );
    const nameStart = sections.segmentNames[segment] as number;
    const nameEnd = sections.segmentNames[segment + 1] as number;
    checkTotals(
      nameOffsets,
      nameEnd - nameStart,
      fail,
      `target "${info.target}"'s name terms`,
    );
    return {
      fieldLengths: sections.fieldLengths.subarray(
        segment * FIELD_COUNT,
        (segment + 1) * FIELD_COUNT,
      ),
      bagLengths: sections.bagLengths.subarray(
        firstTool,
        firstTool + toolCount,
      ),
      termIds,
      offsets,
      documents,
      bags: sections.bags.subarray(postingStart, postingEnd),
      inName: sections.inName.subarray(postingStart, postingEnd),
      nameOffsets,
      nameTerms: this.#mapped(
        sections.nameTerms,
        this.#mappedNames,
        nameStart,
        nameEnd,
      ),
      bareNames: this.#mapped(
        sections.bareNames,
        this.#mappedBare,
        sections.segmentBare[segment] as number,
        sections.segmentBare[segment + 1] as number,
      ),
    };
  }

  /** Catalog term numbers `start` to `end` of `from` as term ids, written to the same places of `into`. */
  #mapped(
    from: Uint32Array,
    into: Int32Array,
    start: number,
    end: number,
  ): Int32Array {
    const { ids, header } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const terms = header.counts.terms;
    for (let index = start; index < end; index += 1) {
      const number = from[index] as number;
      if (number >= terms) fail(`a term number is out of range (corrupt)`);
      into[index] = ids[number] as number;
    }
    return into.subarray(start, end);
  }

  /**
   * Refuses a target with a term twice or a posting out of order or range, and adds each
   * term's postings to its document frequency.
   */
  #countPostings(
    info: SavedCatalogTarget,
    arrays: Pick<SegmentArrays, 'termIds' | 'offsets' | 'documents'>,
  ): void {
    const fail: (problem: string) => never = this.#source.fail;
    const { termIds, offsets, documents } = arrays;
    const stamps = this.#stamps;
    const frequencies = this.frequencies;
    const stamp = (this.#stamp += 1);
    for (let index = 0; index < termIds.length; index += 1) {
      const id = termIds[index] as number;
      if (stamps[id] === stamp)
        fail(`target "${info.target}" has a term twice (corrupt)`);
      stamps[id] = stamp;
    }
    for (let index = 0; index < termIds.length; index += 1) {
      const start = offsets[index] as number;
      const end = offsets[index + 1] as number;
      const id = termIds[index] as number;
      frequencies[id] = (frequencies[id] as number) + (end - start);
      let previous = -1;
      for (let slot = start; slot < end; slot += 1) {
        const document = documents[slot] as number;
        if (document <= previous || document >= info.tools)
          fail(`target "${info.target}" has a posting out of range (corrupt)`);
        previous = document;
      }
    }
  }

  /** The tools of a target: each entry, its packed terms checked, read in place. */
  #tools(target: {
    segment: number;
    info: SavedCatalogTarget;
    toolStarts: Int32Array;
    arrays: SegmentArrays;
  }): PreparedTool[] {
    const { info, toolStarts } = target;
    const { sections, schemas } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const { toolTerms } = sections;
    const ids = target.arrays.termIds;
    const firstTool = sections.segmentTools[target.segment] as number;
    const tools: PreparedTool[] = [];
    const seen = new Set<string>();
    for (let local = 0; local < info.tools; local += 1) {
      const position = firstTool + local;
      const entry = this.#entry(info, position, seen);
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
        if ((toolTerms[index] as number) >= ids.length)
          fail(`tool "${entry.name}" names a term out of range (corrupt)`);
      const restored = new RestoredTool({
        entry,
        saved: schemas,
        savedIndex: position,
        packed: toolTerms,
        start,
        end,
        ids,
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
    return tools;
  }

  /** The entry of the tool at `position`, its record checked; refuses a name `seen` before in its target. */
  #entry(
    info: SavedCatalogTarget,
    position: number,
    seen: Set<string>,
  ): ToolEntry {
    const { sections, texts } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const { records } = sections;
    const record = position * RECORD;
    const backend = info.backends[records[record] as number];
    const profile = info.profiles[records[record + 1] as number];
    const flags = records[record + 2] as number;
    const ascii = records[record + 3] === 1;
    if (backend === undefined || profile === undefined || !validFlags(flags))
      fail(`tool ${position} has an index out of range (corrupt)`);
    const base = this.#source.header.counts.terms + position * TEXTS_PER_TOOL;
    const tool = texts.text(base, ascii);
    if (tool === '' || seen.has(tool))
      fail(
        `target "${info.target}" has an empty or repeated tool name (corrupt)`,
      );
    seen.add(tool);
    return restoredEntry({
      target: info.target,
      tool,
      backend,
      profile,
      description: texts.text(base + 1, ascii),
      flags,
      annotations: () => texts.text(base + 2, ascii),
      annotationsByText: this.#annotationsByText,
      fail,
    });
  }
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
  const { header, places } = read;
  const { counts } = header;
  const whole = new Sections(read);
  const { bytes } = whole;
  const sections = readSections(whole, header);
  checkSectionTotals(sections, counts, fail);
  const ids = yield* mapTermTable({
    bytes,
    read,
    ends: sections.textEnds,
    fail,
  });
  const restorer = new TargetRestorer({
    header,
    sections,
    ids,
    texts: new CatalogTexts(
      Buffer.from(
        bytes.buffer,
        bytes.byteOffset + places.texts,
        counts.textBytes,
      ),
      sections.textEnds,
      counts.terms,
    ),
    schemas: new SavedTexts(
      Buffer.from(
        bytes.buffer,
        bytes.byteOffset + places.schemas,
        counts.schemaBytes,
      ),
      sections.schemaEnds,
    ),
    fail,
  });
  const kept: RestoredTarget[] = [];
  const dropped: string[] = [];
  for (let segment = 0; segment < counts.segments; segment += 1) {
    const info = header.targets[segment] as SavedCatalogTarget;
    const toolStarts = restorer.toolStarts(segment, info);
    if (!keep(info.target, info.key, info)) {
      dropped.push(info.target);
      continue;
    }
    try {
      assertTargetName(info.target);
    } catch (error) {
      fail((error as Error).message);
    }
    kept.push(restorer.restore(segment, info, toolStarts));
    yield;
  }
  return { kept, dropped, frequencies: restorer.frequencies, bag: header.bag };
}

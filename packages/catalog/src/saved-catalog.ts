import { z } from 'zod';
import { assertTargetName } from './backends.js';
import { CatalogError, CatalogErrorCode, invalidArgument } from './errors.js';
import {
  FIELD_COUNT,
  type PreparedTool,
  SavedTexts,
  schemaText,
  toolArray,
  type ToolList,
} from './prepare.js';
import type { Segment, SegmentArrays } from './segments.js';
import {
  ANNOTATED,
  RECORD,
  SavedTools,
  toolFlags,
  validFlags,
  SavedToolSource,
  TEXTS_PER_TOOL,
} from './saved-tools.js';
import { TERMS } from './terms.js';
import { VERSION } from './version.js';

/** Version of the saved layout and of the analysis behind its terms: raised when either changes, so none is mixed in. */
const SAVED_CATALOG_LAYOUT = 2;

/** The numbers of things in a saved catalog, from which every section's place follows. */
const COUNTS = [
  'segments', // targets
  'tools',
  'terms', // entries of the catalog's term table
  'localTerms', // distinct terms of each segment, summed over the segments
  'postings',
  'nameTerms',
  'bareNames',
  'toolTerms', // numbers of the tools' packed terms (field ends and term numbers), summed
  'textBytes',
  'schemaBytes',
] as const;

/** Terms of the term table mapped onto the dictionary between two yields of a restore. */
const TERM_SLICE = 8192;

const count = z.int().nonnegative();
const names = z.array(z.string().min(1)).min(1);
const TARGET = z.object({
  /** The gateway target whose tools are saved. */
  target: z.string(),
  /** The key the caller gave when saving (e.g. a hash of the backend's listing). */
  key: z.string(),
  tools: z.int().positive(),
  /** The distinct `backend` values of its tools. */
  backends: names,
  /** The distinct `profile` values of its tools. */
  profiles: names,
});

/** One target of a saved catalog, as its header says. */
export type SavedCatalogTarget = z.infer<typeof TARGET>;

const HEADER = z.object({
  layout: z.literal(SAVED_CATALOG_LAYOUT),
  /** `VERSION` of the `@heretek/catalog` that wrote it. */
  catalogVersion: z.literal(VERSION),
  /** The bag weights (in field order) the postings were computed with. */
  bag: z.array(z.number()).length(FIELD_COUNT),
  /**
   * Bytes per item of the sections whose width varies: a posting's local tool (2 when every
   * target has at most 65,536 tools), its bag frequency (2 when every one is a whole number
   * below 65,536, as with the default weights; else 4 or 8 as the index holds them, 32- or
   * 64-bit floats), and a tool's packed terms (2 when its target's term numbers fit).
   */
  widths: z.object({
    documents: z.literal([2, 4]),
    bags: z.literal([2, 4, 8]),
    toolTerms: z.literal([2, 4]),
  }),
  counts: z.object(
    Object.fromEntries(COUNTS.map((name) => [name, count])) as Record<
      (typeof COUNTS)[number],
      typeof count
    >,
  ),
  /** The targets, in catalog order. */
  targets: z.array(TARGET),
});

/** The header of a saved catalog, a JSON value: its sections' counts and widths, how it was computed, its targets. */
export type SavedCatalogHeader = z.infer<typeof HEADER>;
type Counts = SavedCatalogHeader['counts'];
type Widths = SavedCatalogHeader['widths'];

/** The typed array of each kind of number a section holds. */
const VIEWS = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f32: Float32Array,
  f64: Float64Array,
};
type NumberKind = keyof typeof VIEWS;
type ViewOf<Kind extends NumberKind> = InstanceType<(typeof VIEWS)[Kind]>;
type NumberView = ViewOf<NumberKind>;

/** The kind of the numbers of a section whose width the header's `widths` gives, by width. */
const WIDTH_KINDS = {
  documents: { 2: 'u16', 4: 'i32' },
  bags: { 2: 'u16', 4: 'f32', 8: 'f64' },
  toolTerms: { 2: 'u16', 4: 'u32' },
} as const;
type KindOf<Kind> = Kind extends keyof Widths
  ? (typeof WIDTH_KINDS)[Kind][keyof (typeof WIDTH_KINDS)[Kind]]
  : Kind;

/**
 * The sections of the bytes, in order, each at a multiple of 8 (so bytes that start at a
 * multiple of 8 are read in place), little-endian: name, kind of number (or the width of
 * `widths` it takes), and number of items from the counts. {@link WRITERS} writes each.
 */
const SECTIONS = [
  // Per segment, the running totals of its tools, distinct terms, postings, name terms and bare names.
  ['segmentTools', 'u32', (c: Counts) => c.segments + 1],
  ['segmentTerms', 'u32', (c: Counts) => c.segments + 1],
  ['segmentPostings', 'u32', (c: Counts) => c.segments + 1],
  ['segmentNames', 'u32', (c: Counts) => c.segments + 1],
  ['segmentBare', 'u32', (c: Counts) => c.segments + 1],
  // Per segment, the sum of each field's length.
  ['fieldLengths', 'f64', (c: Counts) => c.segments * FIELD_COUNT],
  // Per segment: its distinct terms (catalog term numbers), and their postings' ends (one more).
  ['termIds', 'u32', (c: Counts) => c.localTerms],
  ['offsets', 'i32', (c: Counts) => c.localTerms + c.segments],
  // Per posting: local tool, bag frequency, whether in the name.
  ['documents', 'documents', (c: Counts) => c.postings],
  ['bags', 'bags', (c: Counts) => c.postings],
  ['inName', 'u8', (c: Counts) => c.postings],
  // Per segment: each tool's name terms' ends (one more than its tools), the name terms, the bare names.
  ['nameOffsets', 'i32', (c: Counts) => c.tools + c.segments],
  ['nameTerms', 'u32', (c: Counts) => c.nameTerms],
  ['bareNames', 'u32', (c: Counts) => c.bareNames],
  // Per tool: weighted bag length, record, packed terms (field ends, the target's term numbers).
  ['bagLengths', 'f64', (c: Counts) => c.tools],
  ['records', 'u32', (c: Counts) => c.tools * RECORD],
  ['toolTerms', 'toolTerms', (c: Counts) => c.toolTerms],
  // Text table (the terms, then each tool's texts) and schema table: ends, then UTF-8 bytes.
  ['textEnds', 'u32', (c: Counts) => c.terms + c.tools * TEXTS_PER_TOOL + 1],
  ['schemaEnds', 'u32', (c: Counts) => c.tools + 1],
  ['texts', 'u8', (c: Counts) => c.textBytes],
  ['schemas', 'u8', (c: Counts) => c.schemaBytes],
] as const;

type Section = (typeof SECTIONS)[number];
type SectionName = Section[0];

function kindOf(kind: Section[1], widths: Widths): NumberKind {
  if (!(kind in WIDTH_KINDS)) return kind as NumberKind;
  const byWidth: Record<number, NumberKind> = WIDTH_KINDS[kind as keyof Widths];
  return byWidth[widths[kind as keyof Widths]] as NumberKind;
}

/** Where each section of a saved catalog starts, and where the last ends. */
type Places = Record<SectionName | 'end', number>;

function sectionPlaces(counts: Counts, widths: Widths): Places {
  const places = {} as Places;
  let at = 0;
  for (const [name, kind, count] of SECTIONS) {
    places[name] = at;
    const bytes = count(counts) * VIEWS[kindOf(kind, widths)].BYTES_PER_ELEMENT;
    at += Math.ceil(bytes / 8) * 8;
  }
  places.end = at;
  return places;
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Throws the `INVALID_SAVED_CATALOG` error of a corrupt saved catalog (`SAVED_CATALOG_VERSION` of a `foreign` one). */
function refuseCatalog(where: string, problem: string, foreign = false): never {
  throw new CatalogError({
    code: foreign
      ? CatalogErrorCode.SavedCatalogVersion
      : CatalogErrorCode.InvalidSavedCatalog,
    message: `${where}: ${problem}; save the catalog again, or build it from the backends' listings${foreign ? ' with this version' : ''}.`,
  });
}

/** The segments to save, in catalog order, with the caller's key of each. */
type SavedSegment = { segment: Segment; key: string };

/** Adds a segment's items to `counts`, and widens `widths` where its numbers need it. */
function countSegment(segment: Segment, counts: Counts, widths: Widths): void {
  counts.tools += segment.tools.length;
  counts.localTerms += segment.arrays.termIds.length;
  counts.postings += segment.arrays.documents.length;
  counts.nameTerms += segment.arrays.nameTerms.length;
  counts.bareNames += segment.arrays.bareNames.length;
  for (let local = 0; local < segment.tools.length; local += 1) {
    const length = toolTermsLength(segment.tools, local);
    counts.toolTerms += length;
    if (length > 0xffff) widths.toolTerms = 4;
  }
  if (segment.arrays.termIds.length > 0x10000) widths.toolTerms = 4;
  if (segment.tools.length > 0x10000) widths.documents = 4;
  if (segment.arrays.bags instanceof Float64Array) widths.bags = 8;
  else if (widths.bags === 2)
    for (const bag of segment.arrays.bags)
      if (!Number.isInteger(bag) || bag < 0 || bag > 0xffff) {
        widths.bags = 4;
        break;
      }
}

/** Number of numbers of a list's tool `local`'s packed terms, without making a saved catalog's tool. */
function toolTermsLength(tools: ToolList, local: number): number {
  return tools instanceof SavedTools
    ? tools.termsLength(local)
    : (tools.at(local) as PreparedTool).terms.length;
}

/** A segment as the header lists it (a restored target's backends and profiles as saved: its records number them). */
function savedTarget(segment: Segment, key: string): SavedCatalogTarget {
  const { tools } = segment;
  const saved = tools instanceof SavedTools ? tools : undefined;
  const entries = saved ? [] : toolArray(tools);
  const distinct = (field: 'backend' | 'profile', from: readonly string[]) => [
    ...new Set([...from, ...entries.map(({ entry }) => entry[field])]),
  ];
  return {
    target: segment.target,
    key,
    tools: tools.length,
    backends: distinct('backend', saved?.backends ?? []),
    profiles: distinct('profile', saved?.profiles ?? []),
  };
}

/** Tools whose texts are measured, or written, between two steps of a save (a few milliseconds of work). */
const TEXTS_STEP = 512;

/** Bytes of each piece a saved catalog is handed out in (a multiple of 8, so every number stays aligned). */
const CHUNK_BYTES = 1 << 20;

/** The term table, counts (all but the texts' bytes), widths and targets of `segments`. */
function* planCatalog(
  segments: readonly SavedSegment[],
): Generator<
  undefined,
  Pick<SavedCatalogPlan, 'numberOf' | 'terms'> &
    Pick<SavedCatalogHeader, 'counts' | 'widths' | 'targets'>
> {
  // The catalog's term numbers, in order of first appearance.
  const numberOf = new Int32Array(TERMS.size).fill(-1);
  const terms: number[] = [];
  const counts = Object.fromEntries(COUNTS.map((name) => [name, 0])) as Counts;
  counts.segments = segments.length;
  const widths: Widths = { documents: 2, bags: 2, toolTerms: 2 };
  const targets: SavedCatalogTarget[] = [];
  for (const { segment, key } of segments) {
    for (const id of segment.arrays.termIds)
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

/** A tool's texts in the text table (bare name, description, annotations JSON): a restored tool's bytes as saved. */
function toolTexts(list: ToolList, local: number): (string | Uint8Array)[] {
  if (list instanceof SavedTools)
    return [
      list.textBytes(local, 0),
      list.textBytes(local, 1),
      list.textBytes(local, 2),
    ];
  const { entry } = list.at(local) as PreparedTool;
  return [
    entry.tool,
    entry.description,
    entry.annotations === undefined ? '' : JSON.stringify(entry.annotations),
  ];
}

/** A tool's schema text: a restored tool's bytes as saved. */
function toolSchema(list: ToolList, local: number): string | Uint8Array {
  return list instanceof SavedTools
    ? list.schemaBytes(local)
    : (schemaText(list.at(local) as PreparedTool) ?? '{"type":"object"}');
}

const byteLength = (text: string | Uint8Array): number =>
  typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;

/**
 * A saved catalog planned and ready to be written: its segments, header, the place of each
 * section, and the ends of its texts and schemas (measured, not kept: they are made again
 * as they are written, so no table of a hundred thousand strings lives through the write).
 */
export type SavedCatalogPlan = {
  segments: readonly SavedSegment[];
  header: SavedCatalogHeader;
  /** The term table: catalog term ids in order of first appearance. */
  terms: number[];
  /** Per term id, its number in the term table (-1 when no segment has it). */
  numberOf: Int32Array;
  places: Places;
  textEnds: Uint32Array;
  schemaEnds: Uint32Array;
  /** Per tool, 1 when its texts are ASCII. */
  ascii: Uint8Array;
};

/** Plans the saved form of `segments`: term table, counts, widths, every text's length, and so each section's place. */
export function* planSavedCatalog(options: {
  segments: readonly SavedSegment[];
  bag: readonly number[];
}): Generator<undefined, SavedCatalogPlan> {
  const { segments } = options;
  const plan = yield* planCatalog(segments);
  const { counts } = plan;
  const textEnds = new Uint32Array(
    counts.terms + counts.tools * TEXTS_PER_TOOL + 1,
  );
  const schemaEnds = new Uint32Array(counts.tools + 1);
  const ascii = new Uint8Array(counts.tools);
  let textBytes = 0;
  let text = 0;
  for (const id of plan.terms) {
    textBytes += Buffer.byteLength(TERMS.term(id), 'utf8');
    textEnds[++text] = textBytes;
  }
  let schemaBytes = 0;
  let tool = 0;
  for (const { segment } of segments) {
    yield;
    const list = segment.tools;
    for (let local = 0; local < list.length; local += 1) {
      // Used for the records of tools not restored (a restored target's are written as saved).
      let allAscii = 1;
      for (const value of toolTexts(list, local)) {
        const length = byteLength(value);
        if (length !== value.length) allAscii = 0;
        textBytes += length;
        textEnds[++text] = textBytes;
      }
      ascii[tool] = allAscii;
      schemaBytes += byteLength(toolSchema(list, local));
      schemaEnds[++tool] = schemaBytes;
      if (tool % TEXTS_STEP === 0) yield;
    }
  }
  counts.textBytes = textBytes;
  counts.schemaBytes = schemaBytes;
  const header: SavedCatalogHeader = {
    layout: SAVED_CATALOG_LAYOUT,
    catalogVersion: VERSION,
    bag: [...options.bag],
    widths: plan.widths,
    counts,
    targets: plan.targets,
  };
  const places = sectionPlaces(counts, plan.widths);
  if (places.end > 0xffffffff)
    throw invalidArgument(
      `saveCatalog: the saved catalog would take ${places.end} bytes, more than 4 GiB; save fewer targets.`,
    );
  const { numberOf, terms } = plan;
  return {
    segments,
    header,
    terms,
    numberOf,
    places,
    textEnds,
    schemaEnds,
    ascii,
  };
}

function viewOf<Kind extends NumberKind>(
  kind: Kind,
  buffer: ArrayBufferLike,
  at: number,
  count: number,
): ViewOf<Kind> {
  const View = VIEWS[kind] as unknown as new (
    buffer: ArrayBufferLike,
    offset: number,
    length: number,
  ) => ViewOf<Kind>;
  return new View(buffer, at, count);
}

/** Reverses the bytes of each `size`-byte number of `bytes` (little-endian to big or back). */
function swapBytes(bytes: Uint8Array, size: number): void {
  if (size > 1)
    for (let at = 0; at < bytes.length; at += size)
      bytes.subarray(at, at + size).reverse();
}

/** The bytes of a saved catalog as they are produced: one reused chunk, handed out whole (only the last is shorter). */
class ChunkOut {
  readonly chunk = new Uint8Array(CHUNK_BYTES);
  readonly #text = Buffer.from(this.chunk.buffer, 0, CHUNK_BYTES);
  at = 0;
  /** Bytes handed out before the chunk. */
  before = 0;

  get position(): number {
    return this.before + this.at;
  }

  /** Hands out the chunk (valid until the next step is asked for). */
  *emit(): Generator<Uint8Array, void> {
    yield this.chunk.subarray(0, this.at);
    this.before += this.at;
    this.at = 0;
  }

  /** Copies `bytes` in, handing out each chunk it fills. */
  *bytes(bytes: Uint8Array): Generator<Uint8Array, void> {
    for (let from = 0; from < bytes.length;) {
      if (this.at === CHUNK_BYTES) yield* this.emit();
      const count = Math.min(bytes.length - from, CHUNK_BYTES - this.at);
      this.chunk.set(bytes.subarray(from, from + count), this.at);
      this.at += count;
      from += count;
    }
  }

  /** Writes `text` (or its UTF-8 bytes), whose UTF-8 length is `length`. */
  *text(
    text: string | Uint8Array,
    length: number,
  ): Generator<Uint8Array, void> {
    if (typeof text !== 'string' || length > CHUNK_BYTES - this.at) {
      yield* this.bytes(
        typeof text === 'string' ? Buffer.from(text, 'utf8') : text,
      );
      return;
    }
    this.#text.write(text, this.at, length, 'utf8');
    this.at += length;
  }

  /** Writes `count` numbers of `kind`, little-endian, `fill` putting items `from` on in each view it is given. */
  *numbers(
    kind: NumberKind,
    count: number,
    fill: (view: NumberView, from: number) => void,
  ): Generator<Uint8Array, void> {
    const size = VIEWS[kind].BYTES_PER_ELEMENT;
    for (let from = 0; from < count;) {
      if (CHUNK_BYTES - this.at < size) yield* this.emit();
      const items = Math.min(count - from, (CHUNK_BYTES - this.at) / size);
      fill(viewOf(kind, this.chunk.buffer, this.at, items), from);
      if (!littleEndian)
        swapBytes(this.chunk.subarray(this.at, this.at + items * size), size);
      this.at += items * size;
      from += items;
    }
  }

  array(
    kind: NumberKind,
    values: ArrayLike<number> & { subarray(from: number, to: number): unknown },
  ): Generator<Uint8Array, void> {
    return this.numbers(kind, values.length, (view, from) =>
      view.set(values.subarray(from, from + view.length) as ArrayLike<number>),
    );
  }

  /** Writes `ids[i]` as their numbers in the term table. */
  termNumbers(
    ids: Int32Array,
    numberOf: Int32Array,
  ): Generator<Uint8Array, void> {
    return this.numbers('u32', ids.length, (view, from) => {
      for (let item = 0; item < view.length; item += 1)
        view[item] = numberOf[ids[from + item] as number] as number;
    });
  }
}

/** Writes one section's numbers (of `kind`) or bytes; `undefined` steps are pauses. */
type Writer = (
  out: ChunkOut,
  save: SavedCatalogPlan,
  kind: NumberKind,
) => Generator<Uint8Array | undefined, void>;

/** Writes the running totals (from 0) of a number of each segment. */
function totals(count: (segment: Segment) => number): Writer {
  return (out, save, kind) => {
    const running = new Uint32Array(save.segments.length + 1);
    save.segments.forEach(({ segment }, index) => {
      running[index + 1] = (running[index] as number) + count(segment);
    });
    return out.array(kind, running);
  };
}

/** Writes an array of each segment (term ids as their numbers in the term table when `terms`). */
function eachSegment(
  array: (arrays: SegmentArrays) => Parameters<ChunkOut['array']>[1],
  terms = false,
): Writer {
  return function* (out, save, kind) {
    for (const { segment } of save.segments) {
      const values = array(segment.arrays);
      if (terms) yield* out.termNumbers(values as Int32Array, save.numberOf);
      else yield* out.array(kind, values);
    }
  };
}

/** How each section of {@link SECTIONS} is written. */
const WRITERS: Record<SectionName, Writer> = {
  segmentTools: totals((segment) => segment.tools.length),
  segmentTerms: totals((segment) => segment.arrays.termIds.length),
  segmentPostings: totals((segment) => segment.arrays.documents.length),
  segmentNames: totals((segment) => segment.arrays.nameTerms.length),
  segmentBare: totals((segment) => segment.arrays.bareNames.length),
  fieldLengths: eachSegment((arrays) => arrays.fieldLengths),
  termIds: eachSegment((arrays) => arrays.termIds, true),
  offsets: eachSegment((arrays) => arrays.offsets),
  documents: eachSegment((arrays) => arrays.documents),
  bags: eachSegment((arrays) => arrays.bags),
  inName: eachSegment((arrays) => arrays.inName),
  nameOffsets: eachSegment((arrays) => arrays.nameOffsets),
  nameTerms: eachSegment((arrays) => arrays.nameTerms, true),
  bareNames: eachSegment((arrays) => arrays.bareNames, true),
  bagLengths: eachSegment((arrays) => arrays.bagLengths),
  records: writeRecords,
  toolTerms: writeToolTerms,
  textEnds: (out, save, kind) => out.array(kind, save.textEnds),
  schemaEnds: (out, save, kind) => out.array(kind, save.schemaEnds),
  texts: (out, save) =>
    writeTable(out, save, save.textEnds, save.terms, toolTexts),
  schemas: (out, save) =>
    writeTable(out, save, save.schemaEnds, [], (list, local) => [
      toolSchema(list, local),
    ]),
};

/** Each tool's record: its backend and profile (indices into its target's lists), flags, ASCII. */
function* writeRecords(
  out: ChunkOut,
  save: SavedCatalogPlan,
): Generator<Uint8Array, void> {
  let tool = 0;
  for (const [index, { segment }] of save.segments.entries()) {
    const target = save.header.targets[index] as SavedCatalogTarget;
    const list = segment.tools;
    if (list instanceof SavedTools) {
      // As saved: the header lists its backends and profiles as they were.
      tool += list.length;
      yield* out.array('u32', list.records());
      continue;
    }
    const records = new Uint32Array(list.length * RECORD);
    for (let local = 0; local < list.length; local += 1) {
      const { entry } = list.at(local) as PreparedTool;
      const record = local * RECORD;
      records[record] = target.backends.indexOf(entry.backend);
      records[record + 1] = target.profiles.indexOf(entry.profile);
      records[record + 2] = toolFlags(entry);
      records[record + 3] = save.ascii[tool++] as number;
    }
    yield* out.array('u32', records);
  }
}

/** Each tool's packed terms, in its segment's local numbering. */
function* writeToolTerms(
  out: ChunkOut,
  save: SavedCatalogPlan,
  kind: NumberKind,
): Generator<Uint8Array, void> {
  const localOf = new Int32Array(TERMS.size);
  for (const { segment } of save.segments) {
    const ids = segment.arrays.termIds;
    for (let local = 0; local < ids.length; local += 1)
      localOf[ids[local] as number] = local;
    const list = segment.tools;
    let length = 0;
    for (let local = 0; local < list.length; local += 1)
      length += toolTermsLength(list, local);
    const packed = new Uint32Array(length);
    let at = 0;
    for (let local = 0; local < list.length; local += 1) {
      // A restored target's terms are written as saved unless its segment was built again.
      const saved =
        list instanceof SavedTools ? list.savedTerms(local, ids) : undefined;
      if (saved !== undefined) {
        packed.set(saved, at);
        at += saved.length;
        continue;
      }
      const terms = (list.at(local) as PreparedTool).terms;
      for (let index = 0; index < terms.length; index += 1)
        packed[at++] =
          index < FIELD_COUNT
            ? (terms[index] as number)
            : (localOf[terms[index] as number] as number);
    }
    yield* out.array(kind, packed);
  }
}

/** Writes a table of texts whose ends `ends` holds: `terms` (term ids), then each tool's `texts`. */
function* writeTable(
  out: ChunkOut,
  save: SavedCatalogPlan,
  ends: Uint32Array,
  terms: readonly number[],
  texts: (list: ToolList, local: number) => (string | Uint8Array)[],
): Generator<Uint8Array | undefined, void> {
  let text = 0;
  const put = (value: string | Uint8Array) => {
    const length = (ends[text + 1] as number) - (ends[text] as number);
    text += 1;
    return out.text(value, length);
  };
  for (const id of terms) yield* put(TERMS.term(id));
  let tool = 0;
  for (const { segment } of save.segments)
    for (let local = 0; local < segment.tools.length; local += 1) {
      for (const value of texts(segment.tools, local)) yield* put(value);
      if (++tool % TEXTS_STEP === 0) yield;
    }
}

/** A planned catalog's bytes, in pieces of up to a megabyte of one reused buffer; `undefined` steps are pauses. */
export function* savedCatalogChunks(
  save: SavedCatalogPlan,
): Generator<Uint8Array | undefined, void> {
  const { places } = save;
  const out = new ChunkOut();
  for (const [name, kind] of SECTIONS) {
    yield* WRITERS[name](out, save, kindOf(kind, save.header.widths));
    yield* out.bytes(new Uint8Array((8 - (out.position % 8)) % 8));
    yield;
  }
  if (out.position !== places.end)
    throw new Error(
      `saved catalog: ${out.position} bytes written, not ${places.end}`,
    );
  if (out.at > 0) yield* out.emit();
}

/**
 * A saved catalog being written a piece at a time (`ToolCatalog.saveCatalogStream`): its
 * header, a JSON value, and the length and pieces of its bytes. Store both, in a container
 * that checks their integrity (the broker's index cache keeps a SHA-256 of its whole file).
 */
export type SavedCatalogStream = {
  readonly header: SavedCatalogHeader;
  readonly byteLength: number;
  /** Its bytes in order, pieces of up to a megabyte (each valid until the next is asked for). Can be read once. */
  chunks(): AsyncGenerator<Uint8Array, void, undefined>;
};

/** A saved catalog as `ToolCatalog.restoreCatalogAsync` takes it: the header and bytes of a {@link SavedCatalogStream}. */
export type SavedCatalog = { header: unknown; bytes: Uint8Array };

/** A saved catalog whose header was checked and whose length matches it. */
type ReadCatalog = {
  bytes: Uint8Array;
  header: SavedCatalogHeader;
  places: Places;
};

/** Checks a saved catalog's header (versions first, then every field) against itself and its bytes' length. */
export function readSavedCatalog(value: unknown, where: string): ReadCatalog {
  const { header: json, bytes } = (value ?? {}) as Partial<SavedCatalog>;
  if (!(bytes instanceof Uint8Array))
    refuseCatalog(where, 'give { header, bytes }, its bytes a Uint8Array');
  const versions = json as { layout?: unknown; catalogVersion?: unknown };
  if (typeof versions?.layout !== 'number')
    refuseCatalog(where, "its header is not a saved catalog's (corrupt)");
  if (versions.layout !== SAVED_CATALOG_LAYOUT)
    refuseCatalog(
      where,
      `written in layout ${JSON.stringify(versions?.layout)}, this @heretek/catalog reads layout ${SAVED_CATALOG_LAYOUT}`,
      true,
    );
  if (versions.catalogVersion !== VERSION)
    refuseCatalog(
      where,
      `written by @heretek/catalog ${JSON.stringify(versions.catalogVersion)}, this is ${VERSION}`,
      true,
    );
  const parsed = HEADER.safeParse(json);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    refuseCatalog(
      where,
      `its header's ${issue?.path.join('.') || 'value'} is malformed: ${issue?.message} (corrupt)`,
    );
  }
  const header = parsed.data;
  const { counts, targets } = header;
  if (targets.length !== counts.segments)
    refuseCatalog(where, 'its targets do not match its counts (corrupt)');
  const seen = new Set<string>();
  for (const { target } of targets) {
    if (seen.has(target))
      refuseCatalog(where, `target "${target}" appears twice (corrupt)`);
    seen.add(target);
  }
  const places = sectionPlaces(counts, header.widths);
  if (places.end !== bytes.length)
    refuseCatalog(
      where,
      `its bytes are ${bytes.length} long, its header says ${places.end} (truncated or corrupt)`,
    );
  return { bytes, header, places };
}

/** One restored target: its key and its segment's tools and arrays. */
export type RestoredTarget = {
  target: string;
  key: string;
  tools: SavedTools;
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

/** Typed views of every section of a saved catalog being restored, at the widths its header gives. */
type ReadSections = {
  [Row in Section as Row[0]]: ViewOf<KindOf<Row[1]>>;
};

/** The views of every section (copies when the bytes are not aligned or not little-endian). */
function readSections(read: ReadCatalog): ReadSections {
  const { header, places } = read;
  // Read in place when the bytes start at a multiple of 8, else from one aligned copy.
  const bytes =
    littleEndian && read.bytes.byteOffset % 8 === 0
      ? read.bytes
      : Uint8Array.prototype.slice.call(read.bytes); // a copy, even of a Buffer
  const sections = {} as Record<SectionName, NumberView>;
  for (const [name, sectionKind, items] of SECTIONS) {
    const kind = kindOf(sectionKind, header.widths);
    const count = items(header.counts);
    const at = bytes.byteOffset + places[name];
    if (littleEndian) sections[name] = viewOf(kind, bytes.buffer, at, count);
    else {
      const size = VIEWS[kind].BYTES_PER_ELEMENT;
      const copy = new Uint8Array(bytes.buffer, at, count * size).slice();
      swapBytes(copy, size);
      sections[name] = viewOf(kind, copy.buffer, 0, count);
    }
  }
  return sections as ReadSections;
}

/** Items `totals[index]` to `totals[index + 1]` of running totals. */
function spanOf(totals: Uint32Array, index: number): [number, number] {
  return [totals[index] as number, totals[index + 1] as number];
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

/** The term id of each term of the term table (the first `terms` texts), {@link TERM_SLICE} terms a step. */
function* mapTermTable(
  texts: SavedTexts,
  terms: number,
  fail: (problem: string) => never,
): Generator<undefined, Int32Array> {
  const { buffer, ends } = texts;
  const ids = new Int32Array(terms);
  TERMS.reserve(terms, ends[terms] as number);
  for (let index = 0; index < terms; index += 1) {
    const start = ends[index] as number;
    const end = ends[index + 1] as number;
    if (start === end) fail(`term ${index} is empty (corrupt)`);
    ids[index] = TERMS.internBytes(buffer, start, end);
    if ((index + 1) % TERM_SLICE === 0) yield;
  }
  return ids;
}

/** What the targets of a saved catalog are restored from. */
type RestoreSource = {
  header: SavedCatalogHeader;
  sections: ReadSections;
  /** The term id of each term of the catalog's term table. */
  ids: Int32Array;
  tools: SavedToolSource;
  fail: (problem: string) => never;
};

/**
 * Restores the targets of a saved catalog one by one, checking each count and index (and a
 * kept target's tools whole, though they are made only when asked for), and adds up the kept
 * ones' document frequencies. Made once the term table is mapped.
 */
class TargetRestorer {
  /** Document frequency of each term id over the kept targets. */
  readonly frequencies = new Int32Array(TERMS.size);
  /** Per term id, the last segment that had it (a term twice in a segment shows). */
  readonly #stamps = new Int32Array(TERMS.size);
  #stamp = 0;
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

  /** Finds where each tool's packed terms start in target `segment`: walked for every target, kept or not. */
  toolStarts(segment: number, info: SavedCatalogTarget): void {
    const { sections, header } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const { segmentTools, toolTerms } = sections;
    const starts = this.#source.tools.toolStarts;
    const total = header.counts.toolTerms;
    const firstTool = segmentTools[segment] as number;
    const toolCount = (segmentTools[segment + 1] as number) - firstTool;
    if (toolCount !== info.tools)
      fail(
        `target "${info.target}" has another number of tools than its header says`,
      );
    let at = this.#toolTermsAt;
    for (let local = 0; local < toolCount; local += 1) {
      starts[firstTool + local] = at;
      const length = toolTerms[at + FIELD_COUNT - 1] as number;
      if (!(length >= FIELD_COUNT) || at + length > total)
        fail(`tool ${firstTool + local} has terms out of range (corrupt)`);
      at += length;
    }
    starts[firstTool + toolCount] = at;
    this.#toolTermsAt = at;
  }

  /** Target `segment` (its tools' starts found by {@link toolStarts}), its arrays and tools checked. */
  restore(segment: number, info: SavedCatalogTarget): RestoredTarget {
    const arrays = this.#arrays(segment, info);
    const first = this.#source.sections.segmentTools[segment] as number;
    this.#checkTools(first, info, arrays.termIds);
    const tools = new SavedTools(
      info,
      first,
      this.#source.tools,
      arrays.termIds,
    );
    const problem = tools.checkFirst();
    if (problem !== undefined) this.#source.fail(problem);
    return { target: info.target, key: info.key, tools, arrays };
  }

  /** The arrays of target `segment`: views of the sections, its terms mapped to term ids. */
  #arrays(segment: number, info: SavedCatalogTarget): SegmentArrays {
    const { sections } = this.#source;
    const fail: (problem: string) => never = this.#source.fail;
    const first = sections.segmentTools[segment] as number;
    const [termStart, termEnd] = spanOf(sections.segmentTerms, segment);
    const postings = spanOf(sections.segmentPostings, segment);
    const names = spanOf(sections.segmentNames, segment);
    // Each segment before this one has one more end than it has terms (or tools).
    const offsets = sections.offsets.subarray(
      termStart + segment,
      termEnd + segment + 1,
    );
    const where = `target "${info.target}"'s`;
    checkTotals(offsets, postings[1] - postings[0], fail, `${where} postings`);
    const termIds = this.#mapped(sections.termIds, this.#mappedTerms, [
      termStart,
      termEnd,
    ]);
    const documents = sections.documents.subarray(...postings);
    this.#countPostings(info, { termIds, offsets, documents });
    const nameOffsets = sections.nameOffsets.subarray(
      first + segment,
      first + segment + info.tools + 1,
    );
    checkTotals(nameOffsets, names[1] - names[0], fail, `${where} name terms`);
    return {
      fieldLengths: sections.fieldLengths.subarray(
        segment * FIELD_COUNT,
        (segment + 1) * FIELD_COUNT,
      ),
      bagLengths: sections.bagLengths.subarray(first, first + info.tools),
      termIds,
      offsets,
      documents,
      bags: sections.bags.subarray(...postings),
      inName: sections.inName.subarray(...postings),
      nameOffsets,
      nameTerms: this.#mapped(sections.nameTerms, this.#mappedNames, names),
      bareNames: this.#mapped(
        sections.bareNames,
        this.#mappedBare,
        spanOf(sections.segmentBare, segment),
      ),
    };
  }

  /** Catalog term numbers `start` to `end` of `from` as term ids, written to the same places of `into`. */
  #mapped(
    from: Uint32Array,
    into: Int32Array,
    [start, end]: [number, number],
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

  /** Refuses a target with a term twice or a posting out of order or range; adds up document frequencies. */
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

  /** Checks a target's tools without making them: records, names, annotations, packed terms. */
  #checkTools(first: number, info: SavedCatalogTarget, ids: Int32Array): void {
    const { sections } = this.#source;
    const source = this.#source.tools;
    const fail: (problem: string) => never = this.#source.fail;
    const { records, toolTerms } = sections;
    const starts = source.toolStarts;
    source.newTarget();
    for (let local = 0; local < info.tools; local += 1) {
      const position = first + local;
      const record = position * RECORD;
      const flags = records[record + 2] as number;
      if (
        (records[record] as number) >= info.backends.length ||
        (records[record + 1] as number) >= info.profiles.length ||
        !validFlags(flags)
      )
        fail(`tool ${position} has an index out of range (corrupt)`);
      if (!source.newName(position))
        fail(
          `target "${info.target}" has an empty or repeated tool name (corrupt)`,
        );
      source.annotationOf[position] = -1;
      if ((flags & ANNOTATED) !== 0 && !source.readAnnotations(position))
        fail(
          `tool "${source.nameOf(info.target, position)}" has malformed annotations`,
        );
      const start = starts[position] as number;
      const end = starts[position + 1] as number;
      for (let index = start; index < start + FIELD_COUNT; index += 1) {
        const fieldEnd = toolTerms[index] as number;
        if (
          fieldEnd <
          (index === start ? FIELD_COUNT : (toolTerms[index - 1] as number))
        )
          fail(
            `tool "${source.nameOf(info.target, position)}" has its fields out of order (corrupt)`,
          );
      }
      for (let index = start + FIELD_COUNT; index < end; index += 1)
        if ((toolTerms[index] as number) >= ids.length)
          fail(
            `tool "${source.nameOf(info.target, position)}" names a term out of range (corrupt)`,
          );
    }
  }
}

/** Restores the targets `keep` accepts, in order, checking every count and index; yields between slices of work. */
export function* restoreSavedCatalog(options: {
  read: ReadCatalog;
  keep: (target: string, key: string, info: SavedCatalogTarget) => boolean;
  where: string;
}): Generator<undefined, RestoredCatalog> {
  const { read, keep, where } = options;
  const fail: (problem: string) => never = (problem) =>
    refuseCatalog(where, problem);
  const { header } = read;
  const { counts } = header;
  const sections = readSections(read);
  checkSectionTotals(sections, counts, fail);
  // A table of the bytes of `bytes`, with the ends `ends`.
  const table = (bytes: Uint8Array, ends: Uint32Array) =>
    new SavedTexts(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
      ends,
    );
  const texts = table(sections.texts, sections.textEnds);
  const ids = yield* mapTermTable(texts, counts.terms, fail);
  const restorer = new TargetRestorer({
    header,
    sections,
    ids,
    tools: new SavedToolSource({
      texts,
      terms: counts.terms,
      schemas: table(sections.schemas, sections.schemaEnds),
      records: sections.records,
      toolTerms: sections.toolTerms,
      tools: counts.tools,
    }),
    fail,
  });
  const kept: RestoredTarget[] = [];
  const dropped: string[] = [];
  for (let segment = 0; segment < counts.segments; segment += 1) {
    const info = header.targets[segment] as SavedCatalogTarget;
    restorer.toolStarts(segment, info);
    if (!keep(info.target, info.key, info)) {
      dropped.push(info.target);
      continue;
    }
    try {
      assertTargetName(info.target);
    } catch (error) {
      fail((error as Error).message);
    }
    kept.push(restorer.restore(segment, info));
    yield;
  }
  return { kept, dropped, frequencies: restorer.frequencies, bag: header.bag };
}

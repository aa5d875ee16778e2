import { multiplexedName } from '@heretek/internal';
import { CatalogError, CatalogErrorCode } from './errors.js';
import {
  addPreparedSlot,
  preparedOf,
  schemaText,
  type PreparedTool,
  RestoredTool,
  savedTermsProblem,
  type SavedTexts,
  type ToolList,
} from './prepare.js';
import { hashBytes, placeInSlots } from './terms.js';
import {
  TASK_SUPPORT,
  type TaskSupport,
  type ToolAnnotations,
  type ToolEntry,
} from './types.js';

/** Numbers of a tool's record: its backend and profile (indices into its target's lists), flags, whether its texts are ASCII. */
export const RECORD = 4;
/** Texts of each tool in the text table, after the terms: bare name, description, annotations JSON. */
export const TEXTS_PER_TOOL = 3;

const MUTATING = 1;
const DISCOVERED = 2;
/** Flag of a tool whose entry has annotations (see {@link toolFlags}). */
export const ANNOTATED = 4;
const TASK_SHIFT = 3;
const TASK_SUPPORTS: readonly (TaskSupport | undefined)[] = [
  undefined,
  ...TASK_SUPPORT,
];

/** The flags of a saved tool: mutating, discovered, annotated, task support. */
export function toolFlags(entry: ToolEntry): number {
  return (
    (entry.mutating ? MUTATING : 0) |
    (entry.source === 'seed' ? 0 : DISCOVERED) |
    (entry.annotations === undefined ? 0 : ANNOTATED) |
    (Math.max(0, TASK_SUPPORTS.indexOf(entry.taskSupport)) << TASK_SHIFT)
  );
}

/** Whether the flags of a saved tool are in range. */
export function validFlags(flags: number): boolean {
  return flags >>> TASK_SHIFT < TASK_SUPPORTS.length;
}

/** `text` parsed, when it is a JSON object (or array), else `undefined`. */
function parseObject(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Parses a restored entry's schema text and keeps the result as its `inputSchema`. */
function parseSchema(entry: ToolEntry, text: string): Record<string, unknown> {
  const schema = parseObject(text);
  if (schema === undefined || Array.isArray(schema))
    throw new CatalogError({
      code: CatalogErrorCode.InvalidSavedCatalog,
      message: `tool "${entry.name}": its saved input schema is not a JSON object; save the catalog again, or build it from the listings.`,
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
 * Byte ranges of one buffer told apart by their content, without making strings: open
 * addressing over FNV-1a hashes, two numbers a slot (the hash and the range's number + 1).
 */
class ByteSet {
  readonly #bytes: Uint8Array;
  #slots = new Int32Array(512);
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  readonly #hashes: number[] = [];
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  clear(): void {
    if (this.#starts.length === 0) return;
    this.#slots.fill(0);
    this.#starts.length = 0;
    this.#ends.length = 0;
    this.#hashes.length = 0;
  }

  /** Number of the range with the bytes of `start` to `end` (of hash `hash`), or -1. */
  find(start: number, end: number, hash: number): number {
    const slots = this.#slots;
    const bytes = this.#bytes;
    const mask = (slots.length >> 1) - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[2 * slot + 1] as number;
      if (stored === 0) return -1;
      if (slots[2 * slot] !== hash) continue;
      const at = this.#starts[stored - 1] as number;
      if ((this.#ends[stored - 1] as number) - at !== length) continue;
      let same = true;
      for (let index = 0; index < length && same; index += 1)
        same = bytes[at + index] === bytes[start + index];
      if (same) return stored - 1;
    }
  }

  /** Adds a range not in the set yet; returns its number. */
  add(start: number, end: number, hash: number): number {
    const number = this.#starts.length;
    this.#starts.push(start);
    this.#ends.push(end);
    this.#hashes.push(hash);
    if (4 * (number + 1) > this.#slots.length) {
      this.#slots = new Int32Array(this.#slots.length * 2);
      for (let each = 0; each <= number; each += 1) this.#place(each);
    } else this.#place(number);
    return number;
  }

  #place(number: number): void {
    placeInSlots(this.#slots, this.#hashes[number] as number, number + 1);
  }
}

/** Where a saved catalog's tools are read from: its sections, as views of its bytes. */
export type SavedToolSections = {
  /** The text table: the terms, then each tool's texts. */
  texts: SavedTexts;
  /** Number of terms before the tools' texts. */
  terms: number;
  /** The tools' schema texts. */
  schemas: SavedTexts;
  records: Uint32Array;
  toolTerms: Uint16Array | Uint32Array;
  tools: number;
};

/** What every tool of a restored catalog is made from: its sections, each tool's terms' start and annotations. */
export class SavedToolSource {
  readonly sections: SavedToolSections;
  /** Where each tool's packed terms start, and (at the end) where the last one's end. */
  readonly toolStarts: Int32Array;
  /** Per tool, its number in `annotations` (-1 without). */
  readonly annotationOf: Int32Array;
  readonly annotations: ToolAnnotations[] = [];
  /** Distinct annotation texts seen, by their bytes. */
  readonly #annotationTexts: ByteSet;
  /** The bare names of the target being checked, by their bytes. */
  readonly #names: ByteSet;

  constructor(sections: SavedToolSections) {
    this.sections = sections;
    this.toolStarts = new Int32Array(sections.tools + 1);
    this.annotationOf = new Int32Array(sections.tools);
    this.#annotationTexts = new ByteSet(sections.texts.buffer);
    this.#names = new ByteSet(sections.texts.buffer);
  }

  /** Text `index` of the text table, decoded as its tool's record says. */
  text(index: number, ascii: boolean): string {
    return this.sections.texts.text(index, ascii ? 'latin1' : 'utf8');
  }

  /** Index in the text table of the first text (the bare name) of tool `position`. */
  textIndex(position: number): number {
    return this.sections.terms + position * TEXTS_PER_TOOL;
  }

  /** Whether tool `position`'s texts are saved as ASCII. */
  ascii(position: number): boolean {
    return this.sections.records[position * RECORD + 3] === 1;
  }

  /** The qualified name of tool `position`, without making the tool. */
  nameOf(target: string, position: number): string {
    return multiplexedName(
      target,
      this.text(this.textIndex(position), this.ascii(position)),
    );
  }

  newTarget(): void {
    this.#names.clear();
  }

  /** Whether tool `position`'s bare name is new in its target (and not empty), remembering it. */
  newName(position: number): boolean {
    const { buffer: texts, ends: textEnds } = this.sections.texts;
    const index = this.textIndex(position);
    const start = textEnds[index] as number;
    const end = textEnds[index + 1] as number;
    if (start >= end) return false;
    const hash = hashBytes(texts, start, end);
    if (this.#names.find(start, end, hash) >= 0) return false;
    this.#names.add(start, end, hash);
    return true;
  }

  /** Reads tool `position`'s annotations, parsing each distinct text once; `false` when not a JSON object. */
  readAnnotations(position: number): boolean {
    const { buffer: texts, ends: textEnds } = this.sections.texts;
    const index = this.textIndex(position) + 2;
    const start = textEnds[index] as number;
    const end = textEnds[index + 1] as number;
    const hash = hashBytes(texts, start, end);
    const known = this.#annotationTexts.find(start, end, hash);
    if (known >= 0) {
      this.annotationOf[position] = known;
      return true;
    }
    const annotations = parseObject(this.text(index, this.ascii(position)));
    if (annotations === undefined) return false;
    this.annotationOf[position] = this.#annotationTexts.add(start, end, hash);
    this.annotations.push(Object.freeze(annotations));
    return true;
  }
}

/** The tools of one restored target, made when first asked for: a search reads only its hits', so most never are. */
export class SavedTools implements ToolList {
  readonly length: number;
  readonly target: string;
  /** The target's backends and profiles, as its records number them. */
  readonly backends: readonly string[];
  readonly profiles: readonly string[];
  #made: (PreparedTool | undefined)[] | undefined;

  constructor(
    info: {
      target: string;
      tools: number;
      backends: readonly string[];
      profiles: readonly string[];
    },
    /** Position in the saved catalog of the target's first tool. */
    readonly first: number,
    readonly source: SavedToolSource,
    /** Term id of each term number of the target's packed terms. */
    readonly ids: Int32Array,
  ) {
    ({ target: this.target, tools: this.length } = info);
    ({ backends: this.backends, profiles: this.profiles } = info);
  }

  at(local: number): PreparedTool | undefined {
    if (!(local >= 0 && local < this.length)) return undefined;
    const made = this.#made?.[local];
    if (made !== undefined) return made;
    const tool = this.#make(local);
    (this.#made ??= new Array<PreparedTool | undefined>(this.length))[local] =
      tool;
    return tool;
  }

  get made(): number {
    let made = 0;
    for (const tool of this.#made ?? []) if (tool !== undefined) made += 1;
    return made;
  }

  nameOf(local: number): string {
    return this.source.nameOf(this.target, this.first + local);
  }

  profileOf(local: number): string {
    const record = (this.first + local) * RECORD;
    return this.profiles[
      this.source.sections.records[record + 1] as number
    ] as string;
  }

  /** The bytes of tool `local`'s text `which` (0 bare name, 1 description, 2 annotations JSON). */
  textBytes(local: number, which: number): Uint8Array {
    return this.source.sections.texts.bytes(
      this.source.textIndex(this.first + local) + which,
    );
  }

  /** The bytes of tool `local`'s schema text. */
  schemaBytes(local: number): Uint8Array {
    return this.source.sections.schemas.bytes(this.first + local);
  }

  records(): Uint32Array {
    return this.source.sections.records.subarray(
      this.first * RECORD,
      (this.first + this.length) * RECORD,
    );
  }

  /** Number of numbers of tool `local`'s packed terms (field ends included). */
  termsLength(local: number): number {
    const starts = this.source.toolStarts;
    const position = this.first + local;
    return (starts[position + 1] as number) - (starts[position] as number);
  }

  /** Tool `local`'s packed terms as saved, when `ids` is the numbering they were saved in. */
  savedTerms(
    local: number,
    ids: Int32Array,
  ): Uint16Array | Uint32Array | undefined {
    if (ids !== this.ids) return undefined;
    const starts = this.source.toolStarts;
    const position = this.first + local;
    return this.source.sections.toolTerms.subarray(
      starts[position] as number,
      starts[position + 1] as number,
    );
  }

  /** What is inconsistent in the first tool's terms (another analysis of the same version shows there), if anything. */
  checkFirst(): string | undefined {
    const made = this.at(0) as PreparedTool;
    return savedTermsProblem(made.entry, made.terms);
  }

  #make(local: number): PreparedTool {
    const source = this.source;
    const { records, schemas, toolTerms } = source.sections;
    const position = this.first + local;
    const record = position * RECORD;
    const ascii = source.ascii(position);
    const index = source.textIndex(position);
    const annotation = source.annotationOf[position] as number;
    const flags = records[record + 2] as number;
    const { target } = this;
    const tool = source.text(index, ascii);
    const entry = {
      name: multiplexedName(target, tool),
      target,
      tool,
      backend: this.backends[records[record] as number] as string,
      description: source.text(index + 1, ascii),
    } as ToolEntry;
    Object.defineProperty(entry, 'inputSchema', LAZY_SCHEMA);
    addPreparedSlot(entry);
    entry.mutating = (flags & MUTATING) !== 0;
    entry.profile = this.profiles[records[record + 1] as number] as string;
    entry.source = (flags & DISCOVERED) !== 0 ? 'discovered' : 'seed';
    if ((flags & ANNOTATED) !== 0)
      entry.annotations = source.annotations[annotation];
    const taskSupport = TASK_SUPPORTS[flags >>> TASK_SHIFT];
    if (taskSupport !== undefined) entry.taskSupport = taskSupport;
    return new RestoredTool({
      entry,
      saved: schemas,
      savedIndex: position,
      packed: toolTerms,
      start: source.toolStarts[position] as number,
      end: source.toolStarts[position + 1] as number,
      ids: this.ids,
    });
  }
}

import type { SearchTuning } from './search-tuning.js';
import type { PositionList } from './top-positions.js';
import { grown, TERMS } from './terms.js';
import {
  FIELD_COUNT,
  FIELD_NAMES,
  fieldStart,
  PackedTools,
  type PreparedTool,
  type ToolList,
} from './prepare.js';
import { normalizeName } from './tokenizer.js';
import type { ToolEntry } from './types.js';

const NAME_FIELD = FIELD_NAMES.indexOf('name');
const IDENTIFIER_FIELD = FIELD_NAMES.indexOf('identifier');

/** Scratch arrays of segment builds (one build at a time: builds are synchronous). */
type Scratch = {
  /** Per term id (global, or local to the segment): the slot of the term in the current tool, or its local id. */
  slotOf: Int32Array;
  /** Per term id: the stamp of the tool (or pass) that last saw it. */
  stampOf: Int32Array;
  stamp: number;
  /** Per slot of the current tool: its term's count in each field, and its local term. */
  counts: Int32Array;
  order: Int32Array;
  /** Per posting, in order of tools: local term, tool, bag frequency, whether in the name. */
  postingTerm: Int32Array;
  postingDocument: Int32Array;
  postingBag: Float64Array;
  postingName: Uint8Array;
};
let scratch: Scratch | undefined;

/** The scratch arrays, grown (doubling) to `terms` term ids, `longest` terms a tool and `postings` postings. */
function scratchFor(terms: number, longest: number, postings: number): Scratch {
  const grow = (length: number, needed: number): number =>
    length >= needed ? length : Math.max(needed, 2 * length);
  if (
    scratch === undefined ||
    scratch.slotOf.length < terms ||
    scratch.order.length < longest ||
    scratch.postingTerm.length < postings ||
    scratch.stamp > 0x3fffffff
  ) {
    const termRoom = grow(scratch?.slotOf.length ?? 1024, terms);
    const slotRoom = grow(scratch?.order.length ?? 1024, longest);
    const postingRoom = grow(scratch?.postingTerm.length ?? 4096, postings);
    scratch = {
      slotOf: new Int32Array(termRoom),
      stampOf: new Int32Array(termRoom),
      stamp: 0,
      counts: new Int32Array(slotRoom * FIELD_COUNT),
      order: new Int32Array(slotRoom),
      postingTerm: new Int32Array(postingRoom),
      postingDocument: new Int32Array(postingRoom),
      postingBag: new Float64Array(postingRoom),
      postingName: new Uint8Array(postingRoom),
    };
  }
  return scratch;
}

/** A segment's terms in its own numbering (tokens: each tool's fields one after another, tools in order). */
type SegmentTerms = {
  /** Global id ({@link TERMS}) of each local term; every local term is used by some token. */
  termIds: Int32Array;
  /** Local term of each token. */
  tokens: Uint16Array | Uint32Array | Int32Array;
  /** Tokens of field `f` of tool `d` are `fieldCounts[d * FIELD_COUNT + f]`. */
  fieldCounts: Uint32Array | Int32Array;
  /** The most tokens of one tool. */
  longest: number;
};

/** The terms of prepared tools in the numbering of a new segment (local terms in order of first appearance). */
function localTerms(tools: ToolList): SegmentTerms {
  let tokenCount = 0;
  let longest = 0;
  for (let local = 0; local < tools.length; local += 1) {
    const length = (tools.at(local) as PreparedTool).terms.length - FIELD_COUNT;
    tokenCount += length;
    longest = Math.max(longest, length);
  }
  const tokens = new Int32Array(tokenCount);
  const fieldCounts = new Int32Array(tools.length * FIELD_COUNT);
  const { slotOf, stampOf } = scratchFor(TERMS.size, 0, 0);
  const stamp = ((scratch as Scratch).stamp += 1);
  const termIds: number[] = [];
  let out = 0;
  for (let document = 0; document < tools.length; document += 1) {
    const terms = (tools.at(document) as PreparedTool).terms;
    for (let field = 0; field < FIELD_COUNT; field += 1)
      fieldCounts[document * FIELD_COUNT + field] =
        (terms[field] as number) - fieldStart(terms, field);
    for (let index = FIELD_COUNT; index < terms.length; index += 1) {
      const id = terms[index] as number;
      if (stampOf[id] !== stamp) {
        stampOf[id] = stamp;
        slotOf[id] = termIds.length;
        termIds.push(id);
      }
      tokens[out++] = slotOf[id] as number;
    }
  }
  return { termIds: Int32Array.from(termIds), tokens, fieldCounts, longest };
}

/** Indices of `ids` (distinct) in ascending order of their values. */
function orderById(ids: Int32Array): Int32Array {
  const count = ids.length;
  if (count >= LOCAL_LIMIT)
    return Int32Array.from(ids.keys()).sort(
      (left, right) => (ids[left] as number) - (ids[right] as number),
    );
  // Sorted as numbers (natively): the term id times LOCAL_LIMIT plus the index.
  const keys = new Float64Array(count);
  for (let index = 0; index < count; index += 1)
    keys[index] = (ids[index] as number) * LOCAL_LIMIT + index;
  keys.sort();
  const order = new Int32Array(count);
  for (let index = 0; index < count; index += 1)
    order[index] = (keys[index] as number) % LOCAL_LIMIT;
  return order;
}
const LOCAL_LIMIT = 1 << 22;

/** What a segment holds besides its target and tools (see {@link Segment}). */
export type SegmentArrays = {
  /** Sum over the tools of each field's length in terms. */
  readonly fieldLengths: Float64Array;
  /** Weighted bag length of each tool. */
  readonly bagLengths: Float64Array;
  /** Distinct term ids of the segment (its local terms, in no particular order). */
  readonly termIds: Int32Array;
  /** Postings of `termIds[k]` are `offsets[k]` to `offsets[k + 1]`. */
  readonly offsets: Int32Array;
  /** Local tool of each posting, ascending within a term. */
  readonly documents: Int32Array | Uint16Array;
  /** Weighted bag frequency of each posting (before length normalization). */
  readonly bags: Float32Array | Float64Array | Uint16Array;
  /** 1 when the posting's term is in the tool's name. */
  readonly inName: Uint8Array;
  /** Name terms of local tool `d` are `nameTerms[nameOffsets[d]]` to `nameTerms[nameOffsets[d + 1]]`. */
  readonly nameOffsets: Int32Array;
  readonly nameTerms: Int32Array;
  /** Distinct term ids of the tools' bare names (their first identifier term). */
  readonly bareNames: Int32Array;
};

/** Per tool, its postings in the scratch arrays; the statistics gathered on the way. */
type CountedPostings = {
  fieldLengths: Float64Array;
  bagLengths: Float64Array;
  nameOffsets: Int32Array;
  nameTerms: number[];
  /** Each tool's bare name (its first identifier term), distinct, in order of tools. */
  bareNames: number[];
  /** Number of postings written to the scratch arrays. */
  total: number;
};

/**
 * Writes the postings of `tools` tools (each tool's distinct terms in order of first
 * appearance, with their bag frequencies under `bagWeights`) to the scratch arrays, and sums
 * the fields' lengths, each tool's bag length, name terms and bare name.
 */
function countPostings(
  terms: SegmentTerms,
  tools: number,
  bagWeights: readonly number[],
  scratch: Scratch,
): CountedPostings {
  const { termIds, tokens, fieldCounts } = terms;
  const { slotOf, stampOf, counts, order } = scratch;
  const { postingTerm, postingDocument, postingBag, postingName } = scratch;
  const fieldLengths = new Float64Array(FIELD_COUNT);
  const bagLengths = new Float64Array(tools);
  const nameOffsets = new Int32Array(tools + 1);
  const nameTerms: number[] = [];
  const bareNames: number[] = [];
  const bareSeen = new Uint8Array(termIds.length);
  let total = 0;
  let token = 0;
  for (let document = 0; document < tools; document += 1) {
    // Distinct terms in order of first appearance across the fields, with counts per field.
    const stamp = (scratch.stamp += 1);
    let distinct = 0;
    let bagLength = 0;
    for (let field = 0; field < FIELD_COUNT; field += 1) {
      const length = fieldCounts[document * FIELD_COUNT + field] as number;
      fieldLengths[field] = (fieldLengths[field] as number) + length;
      bagLength += (bagWeights[field] ?? 0) * length;
      const end = token + length;
      if (field === IDENTIFIER_FIELD && length > 0) {
        // A tool's bare name is its first identifier term.
        const bare = tokens[token] as number;
        if (bareSeen[bare] === 0) bareNames.push(termIds[bare] as number);
        bareSeen[bare] = 1;
      }
      for (; token < end; token += 1) {
        const local = tokens[token] as number;
        let slot: number;
        if (stampOf[local] === stamp) slot = slotOf[local] as number;
        else {
          slot = distinct;
          distinct += 1;
          stampOf[local] = stamp;
          slotOf[local] = slot;
          order[slot] = local;
          for (
            let at = slot * FIELD_COUNT;
            at < (slot + 1) * FIELD_COUNT;
            at += 1
          )
            counts[at] = 0;
        }
        counts[slot * FIELD_COUNT + field] =
          (counts[slot * FIELD_COUNT + field] as number) + 1;
      }
    }
    bagLengths[document] = bagLength;
    for (let slot = 0; slot < distinct; slot += 1) {
      let bag = 0;
      for (let field = 0; field < FIELD_COUNT; field += 1) {
        const count = counts[slot * FIELD_COUNT + field] as number;
        if (count !== 0) bag += count * (bagWeights[field] as number);
      }
      const local = order[slot] as number;
      const named = (counts[slot * FIELD_COUNT + NAME_FIELD] as number) > 0;
      postingTerm[total] = local;
      postingDocument[total] = document;
      postingBag[total] = bag;
      postingName[total] = named ? 1 : 0;
      total += 1;
      if (named) nameTerms.push(termIds[local] as number);
    }
    nameOffsets[document + 1] = nameTerms.length;
  }
  return { fieldLengths, bagLengths, nameOffsets, nameTerms, bareNames, total };
}

/** A segment's postings grouped by local term (see {@link SegmentArrays}). */
type GroupedPostings = Pick<
  SegmentArrays,
  'offsets' | 'documents' | 'bags' | 'inName'
>;

/** Groups the scratch postings by local term, in tool order; bag frequencies in 32 bits when all fit exactly. */
function groupPostings(
  scratch: Scratch,
  localTerms: number,
  total: number,
): GroupedPostings {
  const { postingTerm, postingDocument, postingBag, postingName } = scratch;
  const offsets = new Int32Array(localTerms + 1);
  for (let posting = 0; posting < total; posting += 1) {
    const index = (postingTerm[posting] as number) + 1;
    offsets[index] = (offsets[index] as number) + 1;
  }
  for (let index = 1; index <= localTerms; index += 1)
    offsets[index] =
      (offsets[index] as number) + (offsets[index - 1] as number);
  const cursor = scratch.slotOf;
  cursor.set(offsets.subarray(0, localTerms));
  const documents = new Int32Array(total);
  let exact = true;
  for (let posting = 0; posting < total && exact; posting += 1) {
    const bag = postingBag[posting] as number;
    exact = Math.fround(bag) === bag;
  }
  const bags = exact ? new Float32Array(total) : new Float64Array(total);
  const inName = new Uint8Array(total);
  for (let posting = 0; posting < total; posting += 1) {
    const index = postingTerm[posting] as number;
    const slot = cursor[index] as number;
    cursor[index] = slot + 1;
    documents[slot] = postingDocument[posting] as number;
    bags[slot] = postingBag[posting] as number;
    inName[slot] = postingName[posting] as number;
  }
  return { offsets, documents, bags, inName };
}

/** Builds the arrays of the segment of `tools` (see {@link Segment}). */
function buildArrays(tools: ToolList, tuning: SearchTuning): SegmentArrays {
  const segmentTerms = localTerms(tools);
  const { termIds, tokens, longest } = segmentTerms;
  const bagWeights = FIELD_NAMES.map((field) => tuning.bag[field]);
  // At most one posting per token: tool-term pairs in order of first appearance.
  const scratch = scratchFor(termIds.length, longest, tokens.length);
  const counted = countPostings(
    segmentTerms,
    tools.length,
    bagWeights,
    scratch,
  );
  const grouped = groupPostings(scratch, termIds.length, counted.total);
  return {
    ...grouped,
    fieldLengths: counted.fieldLengths,
    bagLengths: counted.bagLengths,
    termIds,
    nameOffsets: counted.nameOffsets,
    nameTerms: Int32Array.from(counted.nameTerms),
    bareNames: Int32Array.from(counted.bareNames),
  };
}

/**
 * One target's part of the index, built once from its listing and never changed. Its
 * postings hold what does not depend on the rest of the catalog; the collection statistics
 * are applied when a search reads them, so replacing one segment changes no other.
 */
export class Segment {
  readonly target: string;
  /** The target's tools, in listing order (a saved catalog's are made when first asked for). */
  readonly tools: ToolList;
  /** The segment's postings and statistics (see {@link SegmentArrays}). */
  readonly arrays: SegmentArrays;
  /** Local terms in order of term id, made when first needed (`null`: `termIds` is ascending). */
  #byId: Int32Array | null | undefined;

  /** Number of the segment in its collection while it is in one (-1 before), for per-view arrays. */
  slot = -1;
  /** Whether the segment's statistics count in its collection (staged segments' do not yet). */
  live = false;

  /** Builds the segment of `target` from its tools (at least one), or takes a saved catalog's `arrays`. */
  constructor(
    options: { target: string; tools: ToolList } & (
      { tuning: SearchTuning } | { arrays: SegmentArrays }
    ),
  ) {
    const { target, tools } = options;
    this.target = target;
    if ('arrays' in options)
      [this.tools, this.arrays] = [tools, options.arrays];
    else {
      this.arrays = buildArrays(tools, options.tuning);
      this.tools = new PackedTools(tools);
    }
  }

  /** Local tool `local` (made when first asked for, for a saved catalog's). */
  tool(local: number): PreparedTool {
    return this.tools.at(local) as PreparedTool;
  }

  /** The entry of local tool `local`. */
  entryOf(local: number): ToolEntry {
    return this.tools.entryOf?.(local) ?? this.tool(local).entry;
  }

  /** The qualified name of local tool `local`, without making a saved catalog's tool. */
  nameOf(local: number): string {
    return this.tools.nameOf?.(local) ?? this.entryOf(local).name;
  }

  /** The profile of local tool `local`, without making a saved catalog's tool. */
  profileOf(local: number): string {
    return this.tools.profileOf?.(local) ?? this.entryOf(local).profile;
  }

  /** The local tool with this qualified name (among those with its normalized name as an identifier term). */
  localByName(name: string): number | undefined {
    return this.localsByExactName(normalizeName(name)).find(
      (local) => this.nameOf(local) === name,
    );
  }

  /** The local tools (ascending) with this normalized exact name (qualified or bare) among their identifier terms. */
  localsByExactName(name: string): number[] {
    const id = TERMS.lookup(name);
    const index = id === undefined ? -1 : this.localTerm(id);
    const locals: number[] = [];
    if (index < 0) return locals;
    const { offsets, documents } = this.arrays;
    const end = offsets[index + 1] as number;
    for (let slot = offsets[index] as number; slot < end; slot += 1) {
      const local = documents[slot] as number;
      const { terms } = this.tool(local);
      const start = fieldStart(terms, IDENTIFIER_FIELD);
      const stop = terms[IDENTIFIER_FIELD] as number;
      for (let at = start; at < stop; at += 1)
        if (terms[at] === id) {
          locals.push(local);
          break;
        }
    }
    return locals;
  }

  /** Index in `termIds` of a term id, or -1. */
  localTerm(termId: number): number {
    const ids = this.arrays.termIds;
    if (this.#byId === undefined) {
      let ascending = true;
      for (let index = 1; index < ids.length && ascending; index += 1)
        ascending = (ids[index - 1] as number) < (ids[index] as number);
      this.#byId = ascending ? null : orderById(ids);
    }
    const byId = this.#byId;
    let low = 0;
    let high = ids.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const local = byId === null ? middle : (byId[middle] as number);
      const value = ids[local] as number;
      if (value === termId) return local;
      if (value < termId) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

/** Segments staged between two yields of {@link Collection.stageMany}. */
const STAGE_SLICE = 64;

/** A term's place in a segment is the segment's slot times this plus the term's index in it. */
const PLACE = 2 ** 32;

/**
 * The collection statistics over every segment of a catalog, kept exact as segments come and
 * go (document frequencies, the segments holding each term and bare name, field lengths,
 * tool count). Segments are staged (invisible to searches), which may take many steps, then
 * committed in one synchronous step, so a search reads the statistics of its own snapshot.
 */
export class Collection {
  /** Documents containing each term id (live segments). */
  documentFrequency: Int32Array = new Int32Array(1024);
  /**
   * The segments containing each term id (`undefined` when none), staged ones included, in
   * order of addition: for each, its slot times {@link PLACE} plus the term's index in the
   * segment's `termIds` (one number a segment). A term of one segment (most of a registry's:
   * tool names) keeps its place as a number, not a list.
   */
  readonly #termPlaces: Array<number[] | number | undefined> = [];
  /**
   * Places recorded by {@link Collection.stageMany} and not yet moved into `#termPlaces`:
   * those of term id `id` are `#bulkPlaces[#bulkStarts[id]]` to `#bulkPlaces[#bulkStarts[id + 1]]`
   * unless `#bulkMoved[id]` is 1. A term's places are moved when first read or changed.
   */
  #bulkStarts: Int32Array | undefined;
  #bulkPlaces: Float64Array | undefined;
  #bulkMoved: Uint8Array | undefined;
  /** The segment in each slot. */
  readonly bySlot: Array<Segment | undefined> = [];
  /** Sum over all tools of each field's length. */
  readonly fieldLengths = new Float64Array(FIELD_COUNT);
  toolCount = 0;
  postingCount = 0;
  /** Term id of a normalized bare tool name -> segments with a tool of that name (staged ones included). */
  readonly bareNames = new Map<number, Segment[]>();
  /** Slots of removed segments, for the next ones; slots in use are below `slots`. */
  readonly #freeSlots: number[] = [];
  slots = 0;

  /** Records a segment's places (searches skip them until it is committed). */
  stage(segment: Segment): void {
    const slot = this.#claimSlot(segment);
    const { termIds } = segment.arrays;
    for (let index = 0; index < termIds.length; index += 1) {
      const id = termIds[index] as number;
      const places = this.#placesMoved(id);
      const place = slot * PLACE + index;
      if (places === undefined) this.#termPlaces[id] = place;
      else if (typeof places === 'number')
        this.#termPlaces[id] = [places, place];
      else places.push(place);
    }
    this.#addBareNames(segment);
  }

  /**
   * Stages many segments at once, their places in two typed arrays instead of a list per term
   * (a restore's thousands of segments); yields every {@link STAGE_SLICE} segments.
   */
  *stageMany(segments: readonly Segment[]): Generator<undefined, void> {
    this.#moveAll();
    const starts = new Int32Array(TERMS.size + 1);
    let done = 0;
    for (const segment of segments) {
      if (++done % STAGE_SLICE === 0) yield;
      const { termIds } = segment.arrays;
      for (let index = 0; index < termIds.length; index += 1) {
        const id = (termIds[index] as number) + 1;
        starts[id] = (starts[id] as number) + 1;
      }
    }
    for (let id = 1; id < starts.length; id += 1)
      starts[id] = (starts[id] as number) + (starts[id - 1] as number);
    const places = new Float64Array(starts[starts.length - 1] as number);
    const cursor = starts.slice(0, -1);
    for (const segment of segments) {
      if (++done % STAGE_SLICE === 0) yield;
      const slot = this.#claimSlot(segment);
      const { termIds } = segment.arrays;
      for (let index = 0; index < termIds.length; index += 1) {
        const id = termIds[index] as number;
        const at = cursor[id] as number;
        cursor[id] = at + 1;
        places[at] = slot * PLACE + index;
      }
      this.#addBareNames(segment);
    }
    this.#bulkStarts = starts;
    this.#bulkPlaces = places;
    this.#bulkMoved = new Uint8Array(TERMS.size);
  }

  /** The segments containing a term id (see `#termPlaces`). */
  placesOf(id: number): readonly number[] | undefined {
    const places = this.#placesMoved(id);
    return typeof places === 'number' ? [places] : places;
  }

  /** A term id's entry of `#termPlaces`, its places recorded in bulk moved there first. */
  #placesMoved(id: number): number[] | number | undefined {
    const starts = this.#bulkStarts;
    const moved = this.#bulkMoved as Uint8Array;
    const places = this.#termPlaces[id];
    if (starts === undefined || id + 1 >= starts.length || moved[id] === 1)
      return places;
    moved[id] = 1;
    const start = starts[id] as number;
    const end = starts[id + 1] as number;
    if (start === end) return places;
    const bulk = this.#bulkPlaces as Float64Array;
    if (places === undefined && end - start === 1)
      return (this.#termPlaces[id] = bulk[start] as number);
    const list =
      places === undefined
        ? []
        : typeof places === 'number'
          ? [places]
          : places;
    for (let at = start; at < end; at += 1) list.push(bulk[at] as number);
    return (this.#termPlaces[id] = list);
  }

  /** Moves every place recorded in bulk into the entries per term. */
  #moveAll(): void {
    const starts = this.#bulkStarts;
    if (starts === undefined) return;
    for (let id = 0; id + 1 < starts.length; id += 1) this.#placesMoved(id);
    this.#bulkStarts = undefined;
    this.#bulkPlaces = undefined;
    this.#bulkMoved = undefined;
  }

  /** Gives a staged segment a free slot. */
  #claimSlot(segment: Segment): number {
    const slot = this.#freeSlots.pop() ?? this.slots++;
    segment.slot = slot;
    segment.live = false;
    this.bySlot[slot] = segment;
    return slot;
  }

  #addBareNames(segment: Segment): void {
    for (const name of segment.arrays.bareNames) {
      const list = this.bareNames.get(name);
      if (list) list.push(segment);
      else this.bareNames.set(name, [segment]);
    }
  }

  /** Makes staged segments' statistics count (`frequencies`: the sum of their {@link addFrequencies}, when known). */
  commit(segments: Iterable<Segment>, frequencies?: Int32Array): void {
    const needed = Math.max(TERMS.size, frequencies?.length ?? 0);
    if (needed > this.documentFrequency.length)
      this.documentFrequency = grown(this.documentFrequency, needed);
    const frequency = this.documentFrequency;
    if (frequencies !== undefined)
      for (let id = 0; id < frequencies.length; id += 1)
        frequency[id] = (frequency[id] as number) + (frequencies[id] as number);
    for (const segment of segments) {
      if (frequencies === undefined) addFrequencies(frequency, segment.arrays);
      segment.live = true;
      this.#counts(segment, 1);
    }
  }

  remove(segment: Segment): void {
    const { slot } = segment;
    const { termIds } = segment.arrays;
    addFrequencies(this.documentFrequency, segment.arrays, -1);
    for (let index = 0; index < termIds.length; index += 1) {
      const id = termIds[index] as number;
      const places = this.#placesMoved(id) as number[] | number;
      if (typeof places === 'number') {
        this.#termPlaces[id] = undefined;
        continue;
      }
      places.splice(places.indexOf(slot * PLACE + index), 1);
      if (places.length === 1) this.#termPlaces[id] = places[0];
    }
    this.#counts(segment, -1);
    segment.live = false;
    this.#freeSlots.push(slot);
    this.bySlot[slot] = undefined;
    for (const name of segment.arrays.bareNames) {
      const list = this.bareNames.get(name) as Segment[];
      list.splice(list.indexOf(segment), 1);
      if (list.length === 0) this.bareNames.delete(name);
    }
  }

  #counts(segment: Segment, sign: 1 | -1): void {
    for (let field = 0; field < FIELD_COUNT; field += 1)
      this.fieldLengths[field] =
        (this.fieldLengths[field] as number) +
        sign * (segment.arrays.fieldLengths[field] as number);
    this.toolCount += sign * segment.tools.length;
    this.postingCount += sign * segment.arrays.documents.length;
  }
}

/** Adds (`sign` 1) or takes away (-1) the document frequency of each term of `segment` in `frequencies` (long enough). */
export function addFrequencies(
  frequencies: Int32Array,
  segment: Pick<SegmentArrays, 'termIds' | 'offsets'>,
  sign: 1 | -1 = 1,
): void {
  const { termIds, offsets } = segment;
  for (let index = 0; index < termIds.length; index += 1) {
    const id = termIds[index] as number;
    frequencies[id] =
      (frequencies[id] as number) +
      sign * ((offsets[index + 1] as number) - (offsets[index] as number));
  }
}

/** Runs a generator of work to its end at once. */
export function drain<T>(steps: Generator<undefined, T>): T {
  let step = steps.next();
  while (step.done !== true) step = steps.next();
  return step.value;
}

/** `have` when it holds at least `length` items, else a new array with room to grow (doubling). */
export function reuse<T extends Int32Array | Float64Array>(
  have: T | undefined,
  length: number,
  make: new (length: number) => T,
): T {
  return have !== undefined && have.length >= length
    ? have
    : new make(Math.max(length, 2 * (have?.length ?? 0)));
}

/** Postings (8 bytes each) the memo of an {@link IndexView} keeps at most, or as many as the catalog has. */
const MEMO_POSTINGS = 1 << 21;

/** A term's postings over the catalog under one snapshot: each tool (`~position`: in its name) and BM25 contribution. */
type TermPostings = {
  positions: Int32Array;
  weights: Float32Array;
};

/** Postings computed between two yields of {@link IndexView.warm}. */
const POSTINGS_SLICE = 8192;
/** Tools a term must be in for {@link IndexView.warm} to compute its postings ahead. */
const WARM_POSTINGS = 8192;

/** Postings of a chunk of {@link PostingChunks}, unless a term needs more. */
const CHUNK_POSTINGS = 1 << 16;

/** The memoized postings' memory, in chunks the next view takes over (so a change reuses it, not new arrays). */
class PostingChunks {
  readonly #positions: Int32Array[] = [];
  readonly #weights: Float32Array[] = [];
  #chunk = 0;
  #used = 0;

  /** Room for `count` postings; new chunks hold {@link CHUNK_POSTINGS}, or `all` (the catalog's) when fewer. */
  take(count: number, all: number): TermPostings {
    for (;;) {
      const positions = this.#positions[this.#chunk];
      if (positions === undefined) {
        const size = Math.max(Math.min(CHUNK_POSTINGS, all), count);
        this.#positions.push(new Int32Array(size));
        this.#weights.push(new Float32Array(size));
        continue;
      }
      if (this.#used + count <= positions.length) {
        const start = this.#used;
        this.#used += count;
        return {
          positions: positions.subarray(start, start + count),
          weights: (this.#weights[this.#chunk] as Float32Array).subarray(
            start,
            start + count,
          ),
        };
      }
      this.#chunk += 1;
      this.#used = 0;
    }
  }

  /** Hands every chunk out again (what was handed out is no longer read). */
  reset(): void {
    this.#chunk = 0;
    this.#used = 0;
  }
}

/**
 * The search index of one snapshot: BM25 contributions computed from the segments' postings
 * and the statistics when a search reads them, with the same arithmetic, in the same order,
 * as an index built over every tool at once.
 */
export class IndexView {
  readonly size: number;
  readonly #collection: Collection;
  readonly #tuning: SearchTuning;
  /** Position of the first tool of each segment. */
  readonly #base: Int32Array;
  /** Segment index of each position. */
  readonly #segmentOf: Int32Array;
  /** The segments, in catalog order. */
  readonly segments: readonly Segment[];
  readonly #averageBag: number;
  /** Memoized postings of the terms searched so far, their number, and their memory. */
  readonly #memo = new Map<number, TermPostings>();
  #memoPostings = 0;
  /** Bumped each time the memo is dropped (postings handed out before are void). */
  #generation = 0;
  readonly #chunks: PostingChunks;

  /** BM25 length normalizer of each position. */
  readonly #normalizers: Float64Array;
  /** Number of term ids when the view was made (later ones are unknown to it). */
  readonly #terms: number;
  /** Memoized idf per term id (NaN: not computed yet). */
  readonly #idf: Float64Array;
  /** Memoized name weight per position (NaN: not computed yet). */
  readonly #nameWeight: Float64Array;

  /** A view over `segments` (in catalog order) and the collection's current statistics. */
  constructor(options: {
    segments: readonly Segment[];
    collection: Collection;
    tuning: SearchTuning;
    /** The view this one replaces (never read again), whose buffers it may reuse. */
    previous?: IndexView | undefined;
  }) {
    const { segments, collection, tuning } = options;
    this.segments = segments;
    this.#collection = collection;
    this.#tuning = tuning;
    this.size = collection.toolCount;
    // The view this one replaces is never read again: its buffers are reused when large
    // enough (grown by doubling), so a catalog discovered backend by backend does not
    // allocate per-tool arrays at every step.
    const old = options.previous;
    this.#base = reuse(old && old.#base, collection.slots, Int32Array);
    this.#segmentOf = reuse(old && old.#segmentOf, this.size, Int32Array);
    let position = 0;
    segments.forEach((segment, index) => {
      this.#base[segment.slot] = position;
      this.#segmentOf.fill(index, position, position + segment.tools.length);
      position += segment.tools.length;
    });
    // Mean weighted bag length, as over every tool at once (integer sums, so exact).
    let averageBag = 0;
    FIELD_NAMES.forEach((field, index) => {
      const average =
        (collection.fieldLengths[index] as number) / Math.max(1, this.size) ||
        1;
      averageBag += tuning.bag[field] * average;
    });
    this.#averageBag = averageBag || 1;
    // BM25's length normalizer of each tool's bag, as a full build computes it.
    this.#normalizers = reuse(old && old.#normalizers, this.size, Float64Array);
    const { b } = tuning;
    for (const segment of segments) {
      const base = this.#base[segment.slot] as number;
      const lengths = segment.arrays.bagLengths;
      for (let local = 0; local < lengths.length; local += 1)
        this.#normalizers[base + local] =
          1 - b + (b * (lengths[local] as number)) / this.#averageBag;
    }
    this.#chunks = (old && old.#chunks) ?? new PostingChunks();
    this.#chunks.reset();
    this.#terms = TERMS.size;
    this.#idf = reuse(old && old.#idf, this.#terms, Float64Array).fill(
      Number.NaN,
    );
    this.#nameWeight = reuse(
      old && old.#nameWeight,
      this.size,
      Float64Array,
    ).fill(Number.NaN);
  }

  /** Position of the first tool of `segment`. */
  baseOf(segment: Segment): number {
    return this.#base[segment.slot] as number;
  }

  /** The segment and local tool at a position. */
  locate(position: number): { segment: Segment; local: number } {
    const segment = this.segments[this.#segmentOf[position] as number];
    if (segment === undefined) throw new RangeError(`position ${position}`);
    return { segment, local: position - this.baseOf(segment) };
  }

  /** Id of an indexed term, or `undefined` when no tool contains it. */
  termId(term: string): number | undefined {
    const id = TERMS.lookup(term);
    return id !== undefined &&
      id < this.#terms &&
      (this.#collection.documentFrequency[id] ?? 0) > 0
      ? id
      : undefined;
  }

  documentFrequency(termId: number): number {
    return this.#collection.documentFrequency[termId] ?? 0;
  }

  idf(termId: number): number {
    const memo = this.#idf[termId];
    if (memo === undefined) return 0;
    if (!Number.isNaN(memo)) return memo;
    const df = this.documentFrequency(termId);
    const idf = df > 0 ? Math.log(1 + (this.size - df + 0.5) / (df + 0.5)) : 0;
    this.#idf[termId] = idf;
    return idf;
  }

  /** Sum of the idf of the distinct terms of a tool's name. */
  nameWeight(position: number): number {
    const memo = this.#nameWeight[position];
    if (memo === undefined) return 0;
    if (!Number.isNaN(memo)) return memo;
    const { segment, local } = this.locate(position);
    let weight = 0;
    const { nameOffsets, nameTerms } = segment.arrays;
    const end = nameOffsets[local + 1] as number;
    for (let slot = nameOffsets[local] as number; slot < end; slot += 1)
      weight += this.idf(nameTerms[slot] as number);
    this.#nameWeight[position] = weight;
    return weight;
  }

  /**
   * Adds `queryWeight` times the BM25 contribution (a 32-bit float, as the index always stored
   * them) of `termId` to `scores`, recording newly touched tools, and its idf to `nameCovered`
   * for tools whose name contains it (recording in `named` those it reaches first).
   */
  accumulate(
    termId: number,
    queryWeight: number,
    scores: Float64Array,
    touched: PositionList,
    nameCovered?: Float64Array,
    named?: PositionList,
  ): void {
    const idf = this.idf(termId);
    const { positions, weights } = this.#postings(termId, idf);
    for (let slot = 0; slot < positions.length; slot += 1) {
      let document = positions[slot] as number;
      if (document < 0) {
        document = ~document;
        if (nameCovered !== undefined) {
          if (nameCovered[document] === 0) named?.push(document);
          nameCovered[document] = (nameCovered[document] as number) + idf;
        }
      }
      if (scores[document] === 0) touched.push(document);
      scores[document] =
        (scores[document] as number) + (weights[slot] as number) * queryWeight;
    }
  }

  /** A term's postings (see {@link TermPostings}), memoized per view (or computed ahead by {@link IndexView.warm}). */
  #postings(termId: number, idf: number): TermPostings {
    const memo = this.#memo.get(termId);
    if (memo) return memo;
    return drain(this.#compute(termId, idf, true)) as TermPostings;
  }

  /** Computes and memoizes a term's postings a slice at a time; a full memo is dropped first if `evict`, else nothing is done. */
  *#compute(
    termId: number,
    idf: number,
    evict: boolean,
  ): Generator<undefined, TermPostings | undefined> {
    const collection = this.#collection;
    const places = collection.placesOf(termId) ?? [];
    const total = this.documentFrequency(termId);
    const cap = Math.max(MEMO_POSTINGS, collection.postingCount);
    if (this.#memoPostings + total > cap) {
      if (!evict) return undefined;
      this.#memo.clear();
      this.#memoPostings = 0;
      this.#chunks.reset();
      this.#generation += 1;
    }
    const postings = this.#chunks.take(total, collection.postingCount);
    const { positions, weights } = postings;
    const k1 = this.#tuning.k1;
    const normalizers = this.#normalizers;
    let out = 0;
    let sliceEnd = POSTINGS_SLICE;
    for (let place = 0; place < places.length; place += 1) {
      if (out >= sliceEnd) {
        yield;
        sliceEnd = out + POSTINGS_SLICE;
      }
      const packed = places[place] as number;
      const segmentSlot = Math.floor(packed / PLACE);
      const segment = collection.bySlot[segmentSlot] as Segment;
      if (!segment.live) continue;
      const index = packed - segmentSlot * PLACE;
      const base = this.#base[segmentSlot] as number;
      const { documents, bags, inName, offsets } = segment.arrays;
      const end = offsets[index + 1] as number;
      for (let slot = offsets[index] as number; slot < end; slot += 1) {
        const document = base + (documents[slot] as number);
        const bag = bags[slot] as number;
        const normalized = bag / (normalizers[document] as number);
        positions[out] = inName[slot] === 1 ? ~document : document;
        weights[out] =
          idf * (bag > 0 ? (normalized * (k1 + 1)) / (k1 + normalized) : 0);
        out += 1;
      }
    }
    this.#memo.set(termId, postings);
    this.#memoPostings += total;
    return postings;
  }

  /**
   * Computes, a slice at a time, what the first searches of a view would otherwise compute
   * while a caller waits: the postings of the terms in at least {@link WARM_POSTINGS} tools
   * (a word of every tool's description costs one posting per tool; until the memo is
   * full), then every tool's name weight. Work cut short by a search that dropped the memo
   * is abandoned (the search computed what it needed).
   */
  *warm(): Generator<undefined, void> {
    const frequencies = this.#collection.documentFrequency;
    for (let termId = 0; termId < this.#terms; termId += 1) {
      if ((termId + 1) % POSTINGS_SLICE === 0) yield;
      if ((frequencies[termId] ?? 0) < WARM_POSTINGS || this.#memo.has(termId))
        continue;
      const generation = this.#generation;
      const steps = this.#compute(termId, this.idf(termId), false);
      let step = steps.next();
      while (step.done !== true) {
        yield;
        // A search computed this term or dropped the memo (and the room handed out).
        if (generation !== this.#generation || this.#memo.has(termId)) break;
        step = steps.next();
      }
      if (step.done === true && step.value === undefined) break;
    }
    for (let position = 0; position < this.size; position += 1) {
      if ((position + 1) % POSTINGS_SLICE === 0) yield;
      this.nameWeight(position);
    }
  }

  /** The length-normalized bag frequency (a 32-bit float) of a term in a tool, 0 when it has none. */
  bagFrequency(termId: number, position: number): number {
    const { segment, local } = this.locate(position);
    const index = segment.localTerm(termId);
    if (index < 0) return 0;
    const { documents, offsets, bags } = segment.arrays;
    let low = offsets[index] as number;
    let high = (offsets[index + 1] as number) - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = documents[middle] as number;
      if (value === local)
        return Math.fround(
          (bags[middle] as number) / (this.#normalizers[position] as number),
        );
      if (value < local) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }

  /** Whether some tool containing a term id passes `accept` (given its position). */
  someDocument(termId: number, accept: (position: number) => boolean): boolean {
    const collection = this.#collection;
    const places = collection.placesOf(termId) ?? [];
    for (let place = 0; place < places.length; place += 1) {
      const packed = places[place] as number;
      const segment = collection.bySlot[Math.floor(packed / PLACE)] as Segment;
      if (!segment.live) continue;
      const index = packed % PLACE;
      const base = this.baseOf(segment);
      const { offsets, documents } = segment.arrays;
      const end = offsets[index + 1] as number;
      for (let slot = offsets[index] as number; slot < end; slot += 1)
        if (accept(base + (documents[slot] as number))) return true;
    }
    return false;
  }
}

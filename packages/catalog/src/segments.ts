import { type PositionList, type SearchTuning } from './bm25f.js';
import { TERMS } from './terms.js';
import {
  FIELD_COUNT,
  FIELD_NAMES,
  fieldStart,
  type PreparedTool,
} from './prepare.js';
import { normalizeName } from './tokenizer.js';

const NAME_FIELD = FIELD_NAMES.indexOf('name');
const IDENTIFIER_FIELD = FIELD_NAMES.indexOf('identifier');

/** Scratch arrays of segment builds (one build at a time: builds are synchronous). */
type Scratch = {
  /** Per term id: the slot of the term in the current tool, then its index in the segment. */
  slotOf: Int32Array;
  /** Per term id: the stamp of the tool (or pass) that last saw it. */
  stampOf: Int32Array;
  stamp: number;
  /** Per slot of the current tool: its term's count in each field, and its term id. */
  counts: Int32Array;
  order: Int32Array;
  /** Per posting, in order of tools: term, tool, bag frequency, whether in the name. */
  postingTerm: Int32Array;
  postingDocument: Int32Array;
  postingBag: Float64Array;
  postingName: Uint8Array;
};
let scratch: Scratch | undefined;

/**
 * The scratch arrays, grown (by doubling) to `terms` term ids, a tool of `longest` terms and
 * `postings` postings.
 */
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

/**
 * One target's part of the index: its tools and their postings, built once from its listing
 * and never changed. Postings hold what does not depend on the rest of the catalog (the
 * weighted bag frequency of each term in each tool, the tool's bag length); the collection
 * statistics (document frequencies, average length, target-level frequencies) are applied
 * when a search reads them, so replacing one segment changes no other.
 */
export class Segment {
  /** The gateway target. */
  readonly target: string;
  /** The target's tools, in listing order. */
  readonly tools: readonly PreparedTool[];
  /** Sum over the tools of each field's length in terms. */
  readonly fieldLengths: Float64Array;
  /** Weighted bag length of each tool. */
  readonly bagLengths: Float64Array;
  /** Distinct term ids of the segment, ascending. */
  readonly termIds: Int32Array;
  /** Postings of `termIds[k]` are `offsets[k]` to `offsets[k + 1]`. */
  readonly offsets: Int32Array;
  /** Local tool of each posting, ascending within a term. */
  readonly documents: Int32Array;
  /** Weighted bag frequency of each posting (before length normalization). */
  readonly bags: Float32Array | Float64Array;
  /** 1 when the posting's term is in the tool's name. */
  readonly inName: Uint8Array;
  /** Name terms of local tool `d` are `nameTerms[nameOffsets[d]]` to `nameTerms[nameOffsets[d + 1]]`. */
  readonly nameOffsets: Int32Array;
  readonly nameTerms: Int32Array;

  /** Number of the segment in its collection while it is in one (-1 before), for per-view arrays. */
  slot = -1;

  /** Builds the segment of `target` from its prepared tools (at least one). */
  constructor(options: {
    target: string;
    tools: readonly PreparedTool[];
    tuning: SearchTuning;
  }) {
    const { target, tools, tuning } = options;
    this.target = target;
    this.tools = tools;
    const bagWeights = FIELD_NAMES.map((field) => tuning.bag[field]);
    const fieldLengths = new Float64Array(FIELD_COUNT);
    const bagLengths = new Float64Array(tools.length);
    let tokens = 0;
    let longest = 0;
    for (const tool of tools) {
      tokens += tool.terms.length - FIELD_COUNT;
      longest = Math.max(longest, tool.terms.length - FIELD_COUNT);
    }
    const nameOffsets = new Int32Array(tools.length + 1);
    const nameTerms: number[] = [];
    // At most one posting per token: tool-term pairs in order of first appearance.
    const scratch = scratchFor(TERMS.size, longest, tokens);
    const {
      slotOf,
      stampOf,
      counts,
      order,
      postingTerm,
      postingDocument,
      postingBag,
      postingName,
    } = scratch;
    let total = 0;
    for (let document = 0; document < tools.length; document += 1) {
      const tool = tools[document] as PreparedTool;
      // Distinct terms in order of first appearance across the fields, with counts per field.
      const stamp = (scratch.stamp += 1);
      const terms = tool.terms;
      let distinct = 0;
      let bagLength = 0;
      for (let field = 0; field < FIELD_COUNT; field += 1) {
        const start = fieldStart(terms, field);
        const end = terms[field] as number;
        fieldLengths[field] = (fieldLengths[field] as number) + (end - start);
        bagLength += (bagWeights[field] ?? 0) * (end - start);
        for (let index = start; index < end; index += 1) {
          const id = terms[index] as number;
          let slot: number;
          if (stampOf[id] === stamp) slot = slotOf[id] as number;
          else {
            slot = distinct;
            distinct += 1;
            stampOf[id] = stamp;
            slotOf[id] = slot;
            order[slot] = id;
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
        const id = order[slot] as number;
        const named = (counts[slot * FIELD_COUNT + NAME_FIELD] as number) > 0;
        postingTerm[total] = id;
        postingDocument[total] = document;
        postingBag[total] = bag;
        postingName[total] = named ? 1 : 0;
        total += 1;
        if (named) nameTerms.push(id);
      }
      nameOffsets[document + 1] = nameTerms.length;
    }
    // Group the postings by term id (ascending), keeping tool order within a term.
    const distinctTerms: number[] = [];
    const stamp = (scratch.stamp += 1);
    for (let posting = 0; posting < total; posting += 1) {
      const id = postingTerm[posting] as number;
      if (stampOf[id] !== stamp) {
        stampOf[id] = stamp;
        distinctTerms.push(id);
      }
    }
    const termIds = Int32Array.from(distinctTerms).sort();
    termIds.forEach((id, index) => {
      slotOf[id] = index;
    });
    const offsets = new Int32Array(termIds.length + 1);
    for (let posting = 0; posting < total; posting += 1) {
      const index = (slotOf[postingTerm[posting] as number] as number) + 1;
      offsets[index] = (offsets[index] as number) + 1;
    }
    for (let index = 1; index <= termIds.length; index += 1)
      offsets[index] =
        (offsets[index] as number) + (offsets[index - 1] as number);
    const cursor = offsets.slice(0, termIds.length);
    const documents = new Int32Array(total);
    let exact = true;
    for (let posting = 0; posting < total && exact; posting += 1) {
      const bag = postingBag[posting] as number;
      exact = Math.fround(bag) === bag;
    }
    const bags = exact ? new Float32Array(total) : new Float64Array(total);
    const inName = new Uint8Array(total);
    for (let posting = 0; posting < total; posting += 1) {
      const index = slotOf[postingTerm[posting] as number] as number;
      const slot = cursor[index] as number;
      cursor[index] = slot + 1;
      documents[slot] = postingDocument[posting] as number;
      bags[slot] = postingBag[posting] as number;
      inName[slot] = postingName[posting] as number;
    }
    this.fieldLengths = fieldLengths;
    this.bagLengths = bagLengths;
    this.termIds = termIds;
    this.offsets = offsets;
    this.documents = documents;
    this.bags = bags;
    this.inName = inName;
    this.nameOffsets = nameOffsets;
    this.nameTerms = Int32Array.from(nameTerms);
  }

  /**
   * The local tool with this qualified name, found through the postings of its identifier
   * term (every tool has one posting per distinct term, whatever the term's weight).
   */
  localByName(name: string): number | undefined {
    const id = TERMS.lookup(normalizeName(name));
    const index = id === undefined ? -1 : this.localTerm(id);
    if (index < 0) return undefined;
    const end = this.offsets[index + 1] as number;
    for (let slot = this.offsets[index] as number; slot < end; slot += 1) {
      const local = this.documents[slot] as number;
      if ((this.tools[local] as PreparedTool).entry.name === name) return local;
    }
    return undefined;
  }

  /** The local tools (ascending) with this normalized exact name (qualified or bare) among their identifier terms. */
  localsByExactName(name: string): number[] {
    const id = TERMS.lookup(name);
    const index = id === undefined ? -1 : this.localTerm(id);
    const locals: number[] = [];
    if (index < 0) return locals;
    const end = this.offsets[index + 1] as number;
    for (let slot = this.offsets[index] as number; slot < end; slot += 1) {
      const local = this.documents[slot] as number;
      const { terms } = this.tools[local] as PreparedTool;
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
    const ids = this.termIds;
    let low = 0;
    let high = ids.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = ids[middle] as number;
      if (value === termId) return middle;
      if (value < termId) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

/**
 * The collection statistics over every segment of a catalog, kept exact as segments come and
 * go: document frequency of each term, the segments holding it (their number is the
 * target-level frequency), field lengths, tool count, and the segments holding each bare name.
 * Changed only when a catalog swaps in a new snapshot (a synchronous step), so a search always
 * reads the statistics of its own snapshot.
 */
export class Collection {
  /** Documents containing each term id. */
  documentFrequency = new Int32Array(1024);
  /**
   * The segments containing each term id (`undefined` when none), each followed by the
   * term's index in the segment's `termIds`: `[segment, index, segment, index, ...]`.
   */
  readonly termPlaces: Array<Array<Segment | number> | undefined> = [];
  /** Sum over all tools of each field's length. */
  readonly fieldLengths = new Float64Array(FIELD_COUNT);
  /** Number of tools. */
  toolCount = 0;
  /** Number of postings (tool-term pairs). */
  postingCount = 0;
  /** Normalized bare tool name -> segments with a tool of that name. */
  readonly bareNames = new Map<string, Segment[]>();
  /** Slots of removed segments, for the next ones; slots in use are below `slots`. */
  readonly #freeSlots: number[] = [];
  /** Number of slots ever used. */
  slots = 0;

  /** Adds a segment's statistics. */
  add(segment: Segment): void {
    segment.slot = this.#freeSlots.pop() ?? this.slots++;
    const needed = TERMS.size;
    if (needed > this.documentFrequency.length) {
      const grown = new Int32Array(
        Math.max(needed, this.documentFrequency.length * 2),
      );
      grown.set(this.documentFrequency);
      this.documentFrequency = grown;
    }
    const { termIds, offsets } = segment;
    for (let index = 0; index < termIds.length; index += 1) {
      const id = termIds[index] as number;
      this.documentFrequency[id] =
        (this.documentFrequency[id] as number) +
        ((offsets[index + 1] as number) - (offsets[index] as number));
      const places = this.termPlaces[id];
      if (places) places.push(segment, index);
      else this.termPlaces[id] = [segment, index];
    }
    this.#fieldLengths(segment, 1);
    for (const name of bareNamesOf(segment)) {
      const list = this.bareNames.get(name);
      if (list) list.push(segment);
      else this.bareNames.set(name, [segment]);
    }
  }

  /** Removes a segment's statistics (it must have been added). */
  remove(segment: Segment): void {
    const { termIds, offsets } = segment;
    for (let index = 0; index < termIds.length; index += 1) {
      const id = termIds[index] as number;
      this.documentFrequency[id] =
        (this.documentFrequency[id] as number) -
        ((offsets[index + 1] as number) - (offsets[index] as number));
      const places = this.termPlaces[id] as Array<Segment | number>;
      places.splice(places.indexOf(segment), 2);
      if (places.length === 0) this.termPlaces[id] = undefined;
    }
    this.#fieldLengths(segment, -1);
    this.#freeSlots.push(segment.slot);
    for (const name of bareNamesOf(segment)) {
      const list = this.bareNames.get(name) as Segment[];
      list.splice(list.indexOf(segment), 1);
      if (list.length === 0) this.bareNames.delete(name);
    }
  }

  #fieldLengths(segment: Segment, sign: 1 | -1): void {
    for (let field = 0; field < FIELD_COUNT; field += 1)
      this.fieldLengths[field] =
        (this.fieldLengths[field] as number) +
        sign * (segment.fieldLengths[field] as number);
    this.toolCount += sign * segment.tools.length;
    this.postingCount += sign * segment.documents.length;
  }
}

function bareNamesOf(segment: Segment): Set<string> {
  return new Set(segment.tools.map((tool) => normalizeName(tool.entry.tool)));
}

/** `have` when it is exactly `length` long, else a new array of that length. */
function reuse<T extends Int32Array | Float64Array>(
  have: T | undefined,
  length: number,
  make: new (length: number) => T,
): T {
  return have !== undefined && have.length === length ? have : new make(length);
}

/**
 * Postings kept in the per-snapshot memo of {@link IndexView} (8 bytes each) when the
 * catalog has fewer; otherwise at most as many as the catalog has.
 */
const MEMO_POSTINGS = 1 << 21;

/**
 * A term's postings over the whole catalog under one snapshot's statistics: the tool of each
 * (`~position` when the term is in the tool's name) and its BM25 contribution.
 */
type TermPostings = {
  positions: Int32Array;
  weights: Float32Array;
};

/**
 * The search index of one snapshot: the ordered segments over the collection statistics at
 * the time of the snapshot. BM25 contributions are computed from the postings and the
 * statistics when a search reads them (idf memoized per term), with the same arithmetic, in
 * the same order, as an index built over every tool at once.
 */
export class IndexView {
  /** Number of tools. */
  readonly size: number;
  readonly #collection: Collection;
  readonly #tuning: SearchTuning;
  /** Position of the first tool of each segment. */
  readonly #base: Int32Array;
  /** Segment index of each position. */
  readonly #segmentOf: Int32Array;
  readonly #segments: readonly Segment[];
  readonly #averageBag: number;
  /** Memoized postings of the terms searched so far, and their number. */
  readonly #memo = new Map<number, TermPostings>();
  #memoPostings = 0;

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
    this.#segments = segments;
    this.#collection = collection;
    this.#tuning = tuning;
    this.size = collection.toolCount;
    // The view this one replaces is never read again: its buffers are reused when large
    // enough (grown by doubling), so a catalog discovered backend by backend does not
    // allocate per-tool arrays at every step.
    const previous = options.previous;
    const capacity = (length: number, have: number | undefined): number =>
      have !== undefined && have >= length
        ? have
        : Math.max(length, 2 * (have ?? 0));
    this.#base = reuse(
      previous === undefined ? undefined : previous.#base,
      capacity(
        collection.slots,
        previous === undefined ? undefined : previous.#base.length,
      ),
      Int32Array,
    );
    this.#segmentOf = reuse(
      previous === undefined ? undefined : previous.#segmentOf,
      capacity(
        this.size,
        previous === undefined ? undefined : previous.#segmentOf.length,
      ),
      Int32Array,
    );
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
    this.#normalizers = reuse(
      previous === undefined ? undefined : previous.#normalizers,
      capacity(
        this.size,
        previous === undefined ? undefined : previous.#normalizers.length,
      ),
      Float64Array,
    );
    const { b } = tuning;
    for (const segment of segments) {
      const base = this.#base[segment.slot] as number;
      const lengths = segment.bagLengths;
      for (let local = 0; local < lengths.length; local += 1)
        this.#normalizers[base + local] =
          1 - b + (b * (lengths[local] as number)) / this.#averageBag;
    }
    this.#terms = TERMS.size;
    this.#idf = reuse(
      previous === undefined ? undefined : previous.#idf,
      capacity(
        this.#terms,
        previous === undefined ? undefined : previous.#idf.length,
      ),
      Float64Array,
    ).fill(Number.NaN);
    this.#nameWeight = reuse(
      previous === undefined ? undefined : previous.#nameWeight,
      capacity(
        this.size,
        previous === undefined ? undefined : previous.#nameWeight.length,
      ),
      Float64Array,
    ).fill(Number.NaN);
  }

  /** The segments, in catalog order. */
  get segments(): readonly Segment[] {
    return this.#segments;
  }

  /** Position of the first tool of `segment`. */
  baseOf(segment: Segment): number {
    return this.#base[segment.slot] as number;
  }

  /** The segment and local tool at a position. */
  locate(position: number): { segment: Segment; local: number } {
    const segment = this.#segments[this.#segmentOf[position] as number];
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

  /** Number of tools containing a term id. */
  documentFrequency(termId: number): number {
    return this.#collection.documentFrequency[termId] ?? 0;
  }

  /** Inverse document frequency of a term id (raised to the tuning's exponent). */
  idf(termId: number): number {
    const memo = this.#idf[termId];
    if (memo === undefined) return 0;
    if (!Number.isNaN(memo)) return memo;
    const tuning = this.#tuning;
    const df = this.documentFrequency(termId);
    const idf =
      df > 0
        ? Math.log(1 + (this.size - df + 0.5) / (df + 0.5)) **
          tuning.idfExponent
        : 0;
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
    const end = segment.nameOffsets[local + 1] as number;
    for (let slot = segment.nameOffsets[local] as number; slot < end; slot += 1)
      weight += this.idf(segment.nameTerms[slot] as number);
    this.#nameWeight[position] = weight;
    return weight;
  }

  /**
   * Adds `queryWeight` times the BM25 contribution of `termId` to each tool containing it
   * into `scores`, records newly touched tools in `touched`, and, when `nameCovered` is
   * given, adds the term's idf for tools whose name contains it (recording in `named` the
   * tools whose name it reaches first). Contributions are rounded to 32-bit floats, as the
   * postings of the index always stored them.
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

  /**
   * The postings of a term over every segment, with their BM25 contributions under this
   * view's statistics (rounded to 32-bit floats, as the postings of a full build store
   * them). Memoized per view, so a term costs its computation once per snapshot; the memo
   * is dropped when it would hold more postings than the catalog has (at least
   * {@link MEMO_POSTINGS}).
   */
  #postings(termId: number, idf: number): TermPostings {
    const memo = this.#memo.get(termId);
    if (memo) return memo;
    const places = this.#collection.termPlaces[termId] ?? [];
    const total = this.documentFrequency(termId);
    const positions = new Int32Array(total);
    const weights = new Float32Array(total);
    const k1 = this.#tuning.k1;
    const normalizers = this.#normalizers;
    let out = 0;
    for (let place = 0; place < places.length; place += 2) {
      const segment = places[place] as Segment;
      const index = places[place + 1] as number;
      const base = this.#base[segment.slot] as number;
      const { documents, bags, inName } = segment;
      const end = segment.offsets[index + 1] as number;
      for (let slot = segment.offsets[index] as number; slot < end; slot += 1) {
        const document = base + (documents[slot] as number);
        const bag = bags[slot] as number;
        const normalized = bag / (normalizers[document] as number);
        positions[out] = inName[slot] === 1 ? ~document : document;
        weights[out] =
          idf * (bag > 0 ? (normalized * (k1 + 1)) / (k1 + normalized) : 0);
        out += 1;
      }
    }
    const postings = { positions, weights };
    const cap = Math.max(MEMO_POSTINGS, this.#collection.postingCount);
    if (this.#memoPostings + total > cap) {
      this.#memo.clear();
      this.#memoPostings = 0;
    }
    this.#memo.set(termId, postings);
    this.#memoPostings += total;
    return postings;
  }

  /**
   * The length-normalized bag frequency of a term in a tool (what BM25 saturates, as a
   * 32-bit float), 0 when the tool does not contain it.
   */
  bagFrequency(termId: number, position: number): number {
    const { segment, local } = this.locate(position);
    const index = segment.localTerm(termId);
    if (index < 0) return 0;
    const { documents } = segment;
    let low = segment.offsets[index] as number;
    let high = (segment.offsets[index + 1] as number) - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = documents[middle] as number;
      if (value === local)
        return Math.fround(
          (segment.bags[middle] as number) /
            (this.#normalizers[position] as number),
        );
      if (value < local) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }

  /** Whether some tool containing a term id passes `accept` (given its position). */
  someDocument(termId: number, accept: (position: number) => boolean): boolean {
    const places = this.#collection.termPlaces[termId] ?? [];
    for (let place = 0; place < places.length; place += 2) {
      const segment = places[place] as Segment;
      const index = places[place + 1] as number;
      const base = this.baseOf(segment);
      const end = segment.offsets[index + 1] as number;
      for (let slot = segment.offsets[index] as number; slot < end; slot += 1)
        if (accept(base + (segment.documents[slot] as number))) return true;
    }
    return false;
  }
}

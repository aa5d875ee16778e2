import { FIELD_NAMES, type FieldName, type PreparedTool } from './prepare.js';

/** Scoring knobs of {@link Bm25fIndex}; the defaults are {@link DEFAULT_TUNING}. */
export type SearchTuning = {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** Length normalization of the bag, 0 (none) to 1 (full). */
  b: number;
  /**
   * Term-frequency multiplier of each field inside the single bag of words (0 leaves the
   * field out of the bag). The bag is the model: one document per tool, Okapi BM25 over it.
   */
  bag: Readonly<Record<FieldName, number>>;
  /**
   * Query-term frequency saturation (BM25's k3): a term said twice weighs
   * `(k3 + 1) * 2 / (k3 + 2)`. 0 counts each distinct term once.
   */
  queryTermSaturation: number;
  /** Bonus for the share of a tool's name words that the query contains (times the best plain score). */
  nameCoverageWeight: number;
  /** The name-coverage bonus of a tool is at most this multiple of its own score (0: no cap). */
  nameCoverageCap: number;
  /**
   * Share (0 to 1) of a target-level idf blended into each term's idf: the idf of a word
   * among targets (servers) rather than tools. Scaled down for catalogs with few targets
   * (by targets / (targets + 10)).
   */
  groupIdfWeight: number;
  /** A term found in at least this share of the tools counts as common (see the padding rule of search). */
  commonTermShare: number;
  /** Exponent of the inverse document frequency (1 = classic BM25; higher favours rare terms). */
  idfExponent: number;
  /**
   * Weight of the usage field: the search terms of past requests after which a tool was
   * called (see `ToolCatalog.recordUse`). A usage term's length-normalized frequency, times
   * this weight, joins the term's frequency in the tool's bag before BM25 saturation, so a
   * word counts at most as much as a word the tool's own text repeats (0 ignores usage).
   */
  usageWeight: number;
  /** Length normalization of the usage field, 0 (none) to 1 (full). */
  usageB: number;
  /** Hits scoring below this share of the best hit are cut (0 keeps everything up to `limit`). */
  relativeCutoff: number;
};

/** Partial tuning: any knob, and any subset of the bag's fields, overrides {@link DEFAULT_TUNING}. */
export type SearchTuningOverrides = Partial<Omit<SearchTuning, 'bag'>> & {
  bag?: Partial<Record<FieldName, number>>;
};

/**
 * Tuning used by default: the plain single bag of words with the refinements that the
 * leave-one-set-out selection kept (record in the package README): tool-name words weigh
 * 1.5 in the bag, a capped name-coverage bonus, target-level idf.
 */
export const DEFAULT_TUNING: SearchTuning = {
  k1: 1.2,
  b: 0.75,
  bag: {
    name: 1.5,
    identifier: 0,
    target: 1,
    description: 1,
    parameters: 1,
    parameterText: 1,
  },
  queryTermSaturation: 0,
  nameCoverageWeight: 0.5,
  nameCoverageCap: 1,
  usageWeight: 1.5,
  usageB: 0,
  relativeCutoff: 0.2,
  idfExponent: 1,
  commonTermShare: 0.2,
  groupIdfWeight: 1,
};

/** {@link DEFAULT_TUNING} with `overrides` applied (the bag merged field by field). */
export function resolveTuning(
  overrides: SearchTuningOverrides | undefined,
): SearchTuning {
  return {
    ...DEFAULT_TUNING,
    ...overrides,
    bag: { ...DEFAULT_TUNING.bag, ...overrides?.bag },
  };
}

const FIELD_COUNT = FIELD_NAMES.length;
/** Number of targets at which half of `groupIdfWeight` applies. */
const GROUP_IDF_HALF_TRUST = 10;
const NAME_FIELD = FIELD_NAMES.indexOf('name');

/**
 * Term dictionary shared by the successive indexes of one catalog, so a rebuild does not
 * look up the terms of unchanged tools again.
 */
export class Vocabulary {
  readonly #ids = new Map<string, number>();
  /** Number of terms ever added. */
  get size(): number {
    return this.#ids.size;
  }
  /** Id of `term`, adding it when new. */
  intern(term: string): number {
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.#ids.size;
      this.#ids.set(term, id);
    }
    return id;
  }
  /** Id of `term`, or `undefined` when never added. */
  lookup(term: string): number | undefined {
    return this.#ids.get(term);
  }
}

/** A growable list of tool positions over a preallocated typed array (no garbage per search). */
export class PositionList {
  /** Backing store; the first `length` items are valid. */
  items: Int32Array;
  /** Number of valid items. */
  length = 0;
  /** Creates a list with room for `capacity` positions. */
  constructor(capacity: number) {
    this.items = new Int32Array(Math.max(1, capacity));
  }
  /** Appends a position (grows when full). */
  push(position: number): void {
    if (this.length === this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.length] = position;
    this.length += 1;
  }
}

/** Term statistics of one prepared tool, computed once per tool and reused across rebuilds. */
export type ToolTermStats = {
  /** Distinct terms of the tool. */
  terms: string[];
  /** Frequencies: `counts[i * FIELD_COUNT + f]` is the count of `terms[i]` in field `f`. */
  counts: Float64Array;
  /** Length of each field in terms. */
  lengths: Float64Array;
  /** Term ids in the last vocabulary that indexed this tool. */
  ids?: { vocabulary: Vocabulary; ids: Int32Array };
};

const statsCache = new WeakMap<object, ToolTermStats>();

/** Per-field term counts of a prepared tool (cached per prepared tool). */
export function toolTermStats(tool: PreparedTool): ToolTermStats {
  const cached = statsCache.get(tool.fields);
  if (cached) return cached;
  const slots = new Map<string, number>();
  const terms: string[] = [];
  const lengths = new Float64Array(FIELD_COUNT);
  FIELD_NAMES.forEach((field, fieldIndex) => {
    const list = tool.fields[field];
    lengths[fieldIndex] = list.length;
    for (const term of list) {
      if (!slots.has(term)) {
        slots.set(term, terms.length);
        terms.push(term);
      }
    }
  });
  const counts = new Float64Array(terms.length * FIELD_COUNT);
  FIELD_NAMES.forEach((field, fieldIndex) => {
    for (const term of tool.fields[field]) {
      const slot = (slots.get(term) as number) * FIELD_COUNT + fieldIndex;
      counts[slot] = (counts[slot] ?? 0) + 1;
    }
  });
  const stats: ToolTermStats = { terms, counts, lengths };
  statsCache.set(tool.fields, stats);
  return stats;
}

function termIdsOf(stats: ToolTermStats, vocabulary: Vocabulary): Int32Array {
  if (stats.ids?.vocabulary === vocabulary) return stats.ids.ids;
  const ids = new Int32Array(stats.terms.length);
  stats.terms.forEach((term, index) => {
    ids[index] = vocabulary.intern(term);
  });
  stats.ids = { vocabulary, ids };
  return ids;
}

/** Idf of every term id: over tools, blended with an idf over targets when `groups` is given. */
function termIdf(options: {
  docTermIds: readonly Int32Array[];
  documentFrequency: Int32Array;
  tuning: SearchTuning;
  groups: { of: Int32Array; count: number } | undefined;
}): Float64Array {
  const { docTermIds, documentFrequency, tuning, groups } = options;
  const termCount = documentFrequency.length;
  const idf = new Float64Array(termCount);
  for (let id = 0; id < termCount; id += 1) {
    const df = documentFrequency[id] as number;
    if (df > 0)
      idf[id] =
        Math.log(1 + (docTermIds.length - df + 0.5) / (df + 0.5)) **
        tuning.idfExponent;
  }
  if (!groups || tuning.groupIdfWeight <= 0) return idf;
  // Blend in an idf computed over targets: a word spread over many servers is generic,
  // one that only a few servers use is topical, however many tools those servers have.
  const groupFrequency = new Int32Array(termCount);
  const lastGroup = new Int32Array(termCount).fill(-1);
  const order = Array.from(docTermIds.keys()).sort(
    (left, right) =>
      (groups.of[left] as number) - (groups.of[right] as number) ||
      left - right,
  );
  for (const documentIndex of order) {
    const group = groups.of[documentIndex] as number;
    const ids = docTermIds[documentIndex] as Int32Array;
    for (let index = 0; index < ids.length; index += 1) {
      const id = ids[index] as number;
      if (lastGroup[id] !== group) {
        lastGroup[id] = group;
        groupFrequency[id] = (groupFrequency[id] as number) + 1;
      }
    }
  }
  // With few targets their idf says little: trust it in proportion to their number.
  const alpha =
    (tuning.groupIdfWeight * groups.count) /
    (groups.count + GROUP_IDF_HALF_TRUST);
  for (let id = 0; id < termCount; id += 1) {
    const gdf = groupFrequency[id] as number;
    if (gdf === 0) continue;
    const groupIdf =
      Math.log(1 + (groups.count - gdf + 0.5) / (gdf + 0.5)) **
      tuning.idfExponent;
    idf[id] = (1 - alpha) * (idf[id] as number) + alpha * groupIdf;
  }
  return idf;
}

/** Mean weighted bag length over the tools (1 for an empty catalog). */
function averageBagLength(
  stats: readonly ToolTermStats[],
  bagWeights: readonly number[],
): number {
  const averageLengths = new Float64Array(FIELD_COUNT);
  for (const stat of stats)
    for (let field = 0; field < FIELD_COUNT; field += 1)
      averageLengths[field] =
        (averageLengths[field] ?? 0) + (stat.lengths[field] ?? 0);
  for (let field = 0; field < FIELD_COUNT; field += 1)
    averageLengths[field] =
      (averageLengths[field] ?? 0) / Math.max(1, stats.length) || 1;
  let averageBag = 0;
  for (let field = 0; field < FIELD_COUNT; field += 1)
    averageBag += (bagWeights[field] ?? 0) * (averageLengths[field] ?? 0);
  return averageBag || 1;
}

/** Postings in columns: for each term id, its tools, their BM25 contributions and flags. */
type Postings = {
  offsets: Int32Array;
  documents: Int32Array;
  weights: Float32Array;
  normalizedBags: Float32Array;
  inName: Uint8Array;
  nameWeight: Float64Array;
};

/** Fills the postings with each term's final BM25 contribution to each tool. */
function buildPostings(options: {
  stats: readonly ToolTermStats[];
  docTermIds: readonly Int32Array[];
  documentFrequency: Int32Array;
  idf: Float64Array;
  tuning: SearchTuning;
}): Postings {
  const { stats, docTermIds, documentFrequency, idf, tuning } = options;
  const termCount = documentFrequency.length;
  const offsets = new Int32Array(termCount + 1);
  for (let id = 0; id < termCount; id += 1)
    offsets[id + 1] =
      (offsets[id] as number) + (documentFrequency[id] as number);
  const total = offsets[termCount] as number;
  const postings: Postings = {
    offsets,
    documents: new Int32Array(total),
    weights: new Float32Array(total),
    normalizedBags: new Float32Array(total),
    inName: new Uint8Array(total),
    nameWeight: new Float64Array(stats.length),
  };
  const bagWeights = FIELD_NAMES.map((field) => tuning.bag[field]);
  const averageBag = averageBagLength(stats, bagWeights);
  const cursor = offsets.slice(0, termCount);
  const k1 = tuning.k1;
  stats.forEach((stat, documentIndex) => {
    let bagLength = 0;
    for (let field = 0; field < FIELD_COUNT; field += 1)
      bagLength += (bagWeights[field] ?? 0) * (stat.lengths[field] ?? 0);
    const bagNormalizer = 1 - tuning.b + (tuning.b * bagLength) / averageBag;
    const ids = docTermIds[documentIndex] as Int32Array;
    let names = 0;
    for (let index = 0; index < ids.length; index += 1) {
      let bag = 0;
      for (let field = 0; field < FIELD_COUNT; field += 1) {
        const count = stat.counts[index * FIELD_COUNT + field] as number;
        if (count !== 0) bag += count * (bagWeights[field] as number);
      }
      const id = ids[index] as number;
      const slot = cursor[id] as number;
      cursor[id] = slot + 1;
      const normalized = bag / bagNormalizer;
      postings.documents[slot] = documentIndex;
      postings.normalizedBags[slot] = normalized;
      postings.weights[slot] =
        (idf[id] as number) *
        (bag > 0 ? (normalized * (k1 + 1)) / (k1 + normalized) : 0);
      if ((stat.counts[index * FIELD_COUNT + NAME_FIELD] as number) > 0) {
        postings.inName[slot] = 1;
        names += idf[id] as number;
      }
    }
    postings.nameWeight[documentIndex] = names;
  });
  return postings;
}

/**
 * A BM25 index over prepared tools (one bag of words per tool) in compressed postings (one
 * contiguous typed array per column), built once per catalog snapshot and never mutated.
 * Each posting carries the final BM25 contribution of the term to the tool, so a search
 * only adds numbers.
 */
export class Bm25fIndex {
  /** Number of documents. */
  readonly size: number;
  /** Number of distinct terms in the indexed tools. */
  readonly liveTerms: number;
  readonly #vocabulary: Vocabulary;
  readonly #offsets: Int32Array;
  readonly #documents: Int32Array;
  readonly #weights: Float32Array;
  readonly #inName: Uint8Array;
  readonly #idf: Float64Array;
  readonly #nameWeight: Float64Array;
  readonly #normalizedBags: Float32Array;

  /** Builds the index. */
  constructor(options: {
    tools: readonly PreparedTool[];
    tuning: SearchTuning;
    vocabulary?: Vocabulary;
    groups?: { of: Int32Array; count: number };
  }) {
    const { tools, tuning } = options;
    const vocabulary = options.vocabulary ?? new Vocabulary();
    this.#vocabulary = vocabulary;
    this.size = tools.length;
    const stats = tools.map((tool) => toolTermStats(tool));
    const docTermIds = stats.map((stat) => termIdsOf(stat, vocabulary));
    const documentFrequency = new Int32Array(vocabulary.size);
    for (const ids of docTermIds) {
      for (let index = 0; index < ids.length; index += 1) {
        const id = ids[index] as number;
        documentFrequency[id] = (documentFrequency[id] as number) + 1;
      }
    }
    const idf = termIdf({
      docTermIds,
      documentFrequency,
      tuning,
      groups: options.groups,
    });
    let liveTerms = 0;
    for (const df of documentFrequency) if (df > 0) liveTerms += 1;
    this.liveTerms = liveTerms;
    const postings = buildPostings({
      stats,
      docTermIds,
      documentFrequency,
      idf,
      tuning,
    });
    this.#offsets = postings.offsets;
    this.#documents = postings.documents;
    this.#weights = postings.weights;
    this.#normalizedBags = postings.normalizedBags;
    this.#inName = postings.inName;
    this.#nameWeight = postings.nameWeight;
    this.#idf = idf;
  }

  /** The term dictionary of this index. */
  get vocabulary(): Vocabulary {
    return this.#vocabulary;
  }

  /** Id of an indexed term, or `undefined` when no tool contains it. */
  termId(term: string): number | undefined {
    const id = this.#vocabulary.lookup(term);
    return id !== undefined &&
      id < this.#idf.length &&
      (this.#idf[id] as number) > 0
      ? id
      : undefined;
  }

  /** Inverse document frequency of a term id (raised to the tuning's exponent). */
  idf(termId: number): number {
    return this.#idf[termId] ?? 0;
  }

  /** Sum of the idf of the distinct terms of a tool's name. */
  nameWeight(document: number): number {
    return this.#nameWeight[document] ?? 0;
  }

  /**
   * Adds `queryWeight` times each posting of `termId` into `scores`, records newly touched
   * tools in `touched`, and, when `nameCovered` is given, adds the term's idf for tools whose
   * name contains it.
   */
  accumulate(
    termId: number,
    queryWeight: number,
    scores: Float64Array,
    touched: PositionList,
    nameCovered?: Float64Array,
  ): void {
    const end = this.#offsets[termId + 1] as number;
    const documents = this.#documents;
    const weights = this.#weights;
    const inName = this.#inName;
    const idf = this.#idf[termId] as number;
    for (let slot = this.#offsets[termId] as number; slot < end; slot += 1) {
      const document = documents[slot] as number;
      if (scores[document] === 0) touched.push(document);
      scores[document] =
        (scores[document] as number) + (weights[slot] as number) * queryWeight;
      if (nameCovered !== undefined && inName[slot] === 1)
        nameCovered[document] = (nameCovered[document] as number) + idf;
    }
  }

  /**
   * The length-normalized bag frequency of a term in a tool (what BM25 saturates), 0 when
   * the tool does not contain it.
   */
  bagFrequency(termId: number, document: number): number {
    let low = this.#offsets[termId] ?? 0;
    let high = (this.#offsets[termId + 1] ?? 0) - 1;
    const documents = this.#documents;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = documents[middle] as number;
      if (value === document) return this.#normalizedBags[middle] as number;
      if (value < document) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }

  /** The tools containing a term id. */
  documentsOf(termId: number): Int32Array {
    return this.#documents.subarray(
      this.#offsets[termId] ?? 0,
      this.#offsets[termId + 1] ?? 0,
    );
  }
}

import { FIELD_NAMES, type FieldName, type PreparedTool } from './prepare.js';

/** Extra evidence of one field, scored on its own and added to the bag score. */
export type FieldTuning = {
  /** Weight of the field's own BM25 score (0: the field counts only inside the bag). */
  weight: number;
  /** Length normalization of the field's own score, 0 (none) to 1 (full). */
  b: number;
};

/** Scoring knobs of {@link Bm25fIndex}; the defaults are {@link DEFAULT_TUNING}. */
export type SearchTuning = {
  /** BM25 term-frequency saturation (bag and fields). */
  k1: number;
  /** Length normalization of the bag, 0 (none) to 1 (full). */
  b: number;
  /**
   * Term-frequency multiplier of each field inside the single bag of words (0 leaves the
   * field out of the bag). The bag is the base model: one document per tool.
   */
  bag: Readonly<Record<FieldName, number>>;
  /**
   * Length normalization inside the bag: `'bag'` normalizes the bag's term frequency by the
   * bag's length (Okapi BM25 over one document), `'field'` normalizes each field's frequency
   * by that field's length with the field's `b` before summing (BM25F).
   */
  bagNormalization: 'bag' | 'field';
  /** Field evidence added on top of the bag: each field's own BM25 score times its weight. */
  fields: Readonly<Record<FieldName, FieldTuning>>;
  /**
   * Query-term frequency saturation (BM25's k3): a term said twice weighs
   * `(k3 + 1) * 2 / (k3 + 2)`. 0 counts each distinct term once.
   */
  queryTermSaturation: number;
  /** Share of the best score within the same target added to each tool of that target (0 disables). */
  siblingWeight: number;
  /** The sibling bonus of a tool is at most this multiple of its own score (0: no cap). */
  siblingCap: number;
  /** Bonus for the share of a tool's name words that the query contains (times the best plain score). */
  nameCoverageWeight: number;
  /** The name-coverage bonus of a tool is at most this multiple of its own score (0: no cap). */
  nameCoverageCap: number;
  /** Pseudo-relevance feedback (RM3-like): number of top tools to learn from (0 disables it). */
  feedbackDocuments: number;
  /** Pseudo-relevance feedback: number of expansion terms. */
  feedbackTerms: number;
  /** Pseudo-relevance feedback: weight of the expansion query against the original. */
  feedbackWeight: number;
  /**
   * Weight of a second ranker, query likelihood with Dirichlet smoothing over the bag, fused
   * with the BM25 ranking by reciprocal rank (0 disables it).
   */
  likelihoodWeight: number;
  /** Dirichlet prior (mu) of the query-likelihood ranker. */
  likelihoodMu: number;
  /** Rank constant of the reciprocal-rank fusion. */
  fusionK: number;
  /**
   * Query weight of the synonyms of a query word that matches nothing, when the catalog
   * was given a `synonyms` source (0 disables the expansion).
   */
  synonymWeight: number;
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
  /**
   * Saturation of the usage field. 0 joins a usage term's weighted frequency to the tool's
   * own bag frequency before one BM25 saturation (with `k1`); above 0, the usage field is a
   * BM25 term of its own, saturated with this k1 and added to the text score, so a word
   * that many requests repeat approaches `usageWeight` times its idf and no more.
   */
  usageK1: number;
  /**
   * Above 0, the usage field is scored by query likelihood with Dirichlet smoothing of this
   * strength instead of BM25: a term gains `usageWeight * log(1 + count / (mu * p))`, `p`
   * being the term's share of all remembered request terms, less `usageB` times the
   * length part `log((length + mu) / mu)`, never below 0 (`usageK1` is then unused).
   */
  usageMu: number;
  /** Highest count of one term in one tool's remembered requests that is counted (0: no cap). */
  usageCap: number;
  /**
   * Share (0 to 1) of the text idf in a usage term's idf. 1 caps the text idf by the term's
   * idf among the remembered requests and among the tools with usage; 0 uses only the
   * latter two (an idf over the usage field).
   */
  usageTextIdf: number;
  /** Hits scoring below this share of the best hit are cut (0 keeps everything up to `limit`). */
  relativeCutoff: number;
};

/** Partial tuning: any knob, and any subset of the fields, overrides {@link DEFAULT_TUNING}. */
export type SearchTuningOverrides = Partial<
  Omit<SearchTuning, 'fields' | 'bag'>
> & {
  bag?: Partial<Record<FieldName, number>>;
  fields?: Partial<Record<FieldName, Partial<FieldTuning>>>;
};

/**
 * Tuning used by default: the plain single bag of words with the refinements that the
 * leave-one-set-out selection kept (`bench/tune.mjs`, record in the package README):
 * tool-name words weigh 1.5 in the bag, a capped name-coverage bonus, target-level idf.
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
  bagNormalization: 'bag',
  fields: {
    name: { weight: 0, b: 0.8 },
    identifier: { weight: 0, b: 0 },
    target: { weight: 0, b: 0.3 },
    description: { weight: 0, b: 0.5 },
    parameters: { weight: 0, b: 0.5 },
    parameterText: { weight: 0, b: 0.75 },
  },
  queryTermSaturation: 0,
  siblingWeight: 0,
  siblingCap: 0,
  nameCoverageWeight: 0.5,
  nameCoverageCap: 1,
  feedbackDocuments: 0,
  feedbackTerms: 0,
  feedbackWeight: 0,
  likelihoodWeight: 0,
  likelihoodMu: 100,
  fusionK: 60,
  synonymWeight: 0,
  usageWeight: 1.5,
  usageB: 0,
  usageK1: 0,
  usageCap: 0,
  usageMu: 0,
  usageTextIdf: 1,
  relativeCutoff: 0.2,
  idfExponent: 1,
  commonTermShare: 0.2,
  groupIdfWeight: 1,
};

/** {@link DEFAULT_TUNING} with `overrides` applied (fields and bag merged one by one). */
export function resolveTuning(
  overrides: SearchTuningOverrides | undefined,
): SearchTuning {
  return {
    ...DEFAULT_TUNING,
    ...overrides,
    bag: { ...DEFAULT_TUNING.bag, ...overrides?.bag },
    fields: Object.fromEntries(
      FIELD_NAMES.map((field) => [
        field,
        { ...DEFAULT_TUNING.fields[field], ...overrides?.fields?.[field] },
      ]),
    ) as SearchTuning['fields'],
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

/**
 * A BM25F index over prepared tools in compressed postings (one contiguous typed array per
 * column), built once per catalog snapshot and never mutated. Each posting carries the
 * final BM25F contribution of the term to the tool, so a search only adds numbers.
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
  readonly #bagCounts: Float32Array;
  readonly #normalizedBags: Float32Array;
  readonly #bagLengths: Float64Array;
  readonly #collection: Float64Array;

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
    const averageLengths = new Float64Array(FIELD_COUNT);
    for (const stat of stats)
      for (let field = 0; field < FIELD_COUNT; field += 1)
        averageLengths[field] =
          (averageLengths[field] ?? 0) + (stat.lengths[field] ?? 0);
    for (let field = 0; field < FIELD_COUNT; field += 1)
      averageLengths[field] =
        (averageLengths[field] ?? 0) / Math.max(1, stats.length) || 1;
    const fieldWeights = FIELD_NAMES.map(
      (field) => tuning.fields[field].weight,
    );
    const fieldB = FIELD_NAMES.map((field) => tuning.fields[field].b);
    const bagWeights = FIELD_NAMES.map((field) => tuning.bag[field]);
    let averageBag = 0;
    for (let field = 0; field < FIELD_COUNT; field += 1)
      averageBag += (bagWeights[field] ?? 0) * (averageLengths[field] ?? 0);
    averageBag = averageBag || 1;

    const termCount = vocabulary.size;
    const documentFrequency = new Int32Array(termCount);
    for (const ids of docTermIds) {
      for (let index = 0; index < ids.length; index += 1) {
        const id = ids[index] as number;
        documentFrequency[id] = (documentFrequency[id] as number) + 1;
      }
    }
    const offsets = new Int32Array(termCount + 1);
    for (let id = 0; id < termCount; id += 1)
      offsets[id + 1] =
        (offsets[id] as number) + (documentFrequency[id] as number);
    const total = offsets[termCount] as number;
    const documents = new Int32Array(total);
    const weights = new Float32Array(total);
    const bagCounts = new Float32Array(total);
    const normalizedBags = new Float32Array(total);
    const inName = new Uint8Array(total);
    const idf = new Float64Array(termCount);
    for (let id = 0; id < termCount; id += 1) {
      const df = documentFrequency[id] as number;
      if (df > 0)
        idf[id] =
          Math.log(1 + (tools.length - df + 0.5) / (df + 0.5)) **
          tuning.idfExponent;
    }
    const groups = options.groups;
    if (groups && tuning.groupIdfWeight > 0) {
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
    }
    let liveTerms = 0;
    for (let id = 0; id < termCount; id += 1)
      if ((documentFrequency[id] as number) > 0) liveTerms += 1;
    this.liveTerms = liveTerms;
    const nameWeight = new Float64Array(tools.length);
    const bagLengths = new Float64Array(tools.length);
    const collection = new Float64Array(termCount);
    let collectionLength = 0;
    const cursor = offsets.slice(0, termCount);
    const k1 = tuning.k1;
    const normalizers = new Float64Array(FIELD_COUNT);
    const perField = tuning.bagNormalization === 'field';
    const saturate = (frequency: number): number =>
      (frequency * (k1 + 1)) / (k1 + frequency);
    stats.forEach((stat, documentIndex) => {
      let bagLength = 0;
      for (let field = 0; field < FIELD_COUNT; field += 1) {
        const b = fieldB[field] ?? 0.75;
        normalizers[field] =
          1 -
          b +
          (b * (stat.lengths[field] ?? 0)) / (averageLengths[field] ?? 1);
        bagLength += (bagWeights[field] ?? 0) * (stat.lengths[field] ?? 0);
      }
      bagLengths[documentIndex] = bagLength;
      collectionLength += bagLength;
      const bagNormalizer = 1 - tuning.b + (tuning.b * bagLength) / averageBag;
      const ids = docTermIds[documentIndex] as Int32Array;
      let names = 0;
      for (let index = 0; index < ids.length; index += 1) {
        let bag = 0;
        let normalizedBag = 0;
        let evidence = 0;
        for (let field = 0; field < FIELD_COUNT; field += 1) {
          const count = stat.counts[index * FIELD_COUNT + field] as number;
          if (count === 0) continue;
          bag += count * (bagWeights[field] as number);
          normalizedBag +=
            (count * (bagWeights[field] as number)) /
            (normalizers[field] as number);
          const weight = fieldWeights[field] as number;
          if (weight > 0)
            evidence +=
              weight * saturate(count / (normalizers[field] as number));
        }
        const id = ids[index] as number;
        const slot = cursor[id] as number;
        cursor[id] = slot + 1;
        documents[slot] = documentIndex;
        bagCounts[slot] = bag;
        normalizedBags[slot] = perField ? normalizedBag : bag / bagNormalizer;
        collection[id] = (collection[id] as number) + bag;
        weights[slot] =
          (idf[id] as number) *
          ((bag > 0
            ? saturate(perField ? normalizedBag : bag / bagNormalizer)
            : 0) +
            evidence);
        if ((stat.counts[index * FIELD_COUNT + NAME_FIELD] as number) > 0) {
          inName[slot] = 1;
          names += idf[id] as number;
        }
      }
      nameWeight[documentIndex] = names;
    });
    for (let id = 0; id < termCount; id += 1)
      collection[id] = (collection[id] as number) / (collectionLength || 1);
    this.#bagCounts = bagCounts;
    this.#normalizedBags = normalizedBags;
    this.#bagLengths = bagLengths;
    this.#collection = collection;
    this.#offsets = offsets;
    this.#documents = documents;
    this.#weights = weights;
    this.#inName = inName;
    this.#idf = idf;
    this.#nameWeight = nameWeight;
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
   * Adds a term's query-likelihood evidence (Dirichlet smoothing with prior `mu`) into
   * `scores` for the tools that contain it: `log(1 + tf / (mu * p(term | catalog)))`. The
   * part that depends on a tool's length only is added by {@link Bm25fIndex.likelihoodLength}.
   */
  accumulateLikelihood(
    termId: number,
    queryWeight: number,
    mu: number,
    scores: Float64Array,
  ): void {
    const end = this.#offsets[termId + 1] as number;
    const documents = this.#documents;
    const counts = this.#bagCounts;
    const prior = mu * ((this.#collection[termId] as number) || 1e-9);
    for (let slot = this.#offsets[termId] as number; slot < end; slot += 1) {
      const count = counts[slot] as number;
      if (count > 0) {
        const document = documents[slot] as number;
        scores[document] =
          (scores[document] as number) +
          queryWeight * Math.log(1 + count / prior);
      }
    }
  }

  /** The length part of a tool's query-likelihood score for a query of `terms` terms. */
  likelihoodLength(document: number, terms: number, mu: number): number {
    return -terms * Math.log((this.#bagLengths[document] ?? 0) + mu);
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

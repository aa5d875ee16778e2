import {
  Bm25fIndex,
  PositionList,
  type SearchTuning,
  toolTermStats,
  Vocabulary,
} from './bm25f.js';
import { type PreparedTool, prepareTool } from './prepare.js';
import { compactDescription } from './render.js';
import {
  analyzeQuery,
  analyzeText,
  normalizeName,
  type QueryWord,
} from './tokenizer.js';
import type { SearchHit, SearchResult, ToolEntry } from './types.js';
import type { UsageStore } from './usage.js';

/** The profile whose tools are visible in every profile. */
export const CORE_PROFILE = 'core';

/** One immutable state of a catalog: tools, lookup tables and the search index. */
export type Snapshot = {
  readonly tools: readonly PreparedTool[];
  /** The entries, in order (frozen). */
  readonly entries: readonly ToolEntry[];
  readonly byName: ReadonlyMap<string, number>;
  readonly byExactName: ReadonlyMap<string, readonly number[]>;
  readonly index: Bm25fIndex;
  /** Fingerprint -> prepared tool, for reuse by the next rebuild. */
  readonly contentCache: ReadonlyMap<string, PreparedTool>;
  /** Scratch score buffer (searches are synchronous, so one per snapshot suffices). */
  readonly scores: Float64Array;
  /** Scratch buffer: idf of the query terms found in each tool's name. */
  readonly nameCovered: Float64Array;
  /** Scratch buffer: query-likelihood scores of the second ranker. */
  readonly likelihood: Float64Array;
  /** Scratch lists of touched and of accepted tools. */
  readonly touched: PositionList;
  readonly accepted: PositionList;
  /** Target (server) of each tool, as an index into `targetNames`. */
  readonly targetOf: Int32Array;
  /** Distinct targets in first-seen order. */
  readonly targetNames: readonly string[];
};

function reusableVocabulary(previous: Snapshot | undefined): Vocabulary {
  if (!previous) return new Vocabulary();
  const vocabulary = previous.index.vocabulary;
  // Start afresh when terms of removed tools make up most of the dictionary.
  return vocabulary.size > 2 * previous.index.liveTerms + 50_000
    ? new Vocabulary()
    : vocabulary;
}

/** Builds a snapshot, reusing the prepared terms of unchanged tools. */
export function buildSnapshot(options: {
  entries: readonly ToolEntry[];
  tuning: SearchTuning;
  previous?: Snapshot;
}): Snapshot {
  const tools = options.entries.map((entry) =>
    prepareTool(entry, options.previous?.contentCache),
  );
  const byName = new Map<string, number>();
  const byExactName = new Map<string, number[]>();
  const contentCache = new Map<string, PreparedTool>();
  tools.forEach((tool, position) => {
    byName.set(tool.entry.name, position);
    for (const exact of tool.exactNames) {
      const list = byExactName.get(exact);
      if (list) list.push(position);
      else byExactName.set(exact, [position]);
    }
    if (tool.fingerprint !== undefined)
      contentCache.set(tool.fingerprint, tool);
  });
  const targetPositions = new Map<string, number>();
  const targetNames: string[] = [];
  const targetOf = new Int32Array(tools.length);
  tools.forEach((tool, position) => {
    let slot = targetPositions.get(tool.entry.target);
    if (slot === undefined) {
      slot = targetNames.length;
      targetPositions.set(tool.entry.target, slot);
      targetNames.push(tool.entry.target);
    }
    targetOf[position] = slot;
  });
  const snapshot: Snapshot = {
    tools,
    entries: Object.freeze(tools.map((tool) => tool.entry)),
    byName,
    byExactName,
    index: new Bm25fIndex({
      tools,
      tuning: options.tuning,
      vocabulary: reusableVocabulary(options.previous),
      groups: { of: targetOf, count: targetNames.length },
    }),
    contentCache,
    scores: new Float64Array(tools.length),
    nameCovered: new Float64Array(tools.length),
    likelihood: new Float64Array(tools.length),
    touched: new PositionList(tools.length),
    accepted: new PositionList(tools.length),
    targetOf,
    targetNames,
  };
  return snapshot;
}

/** Depth of each list in the reciprocal-rank fusion. */
const FUSION_DEPTH = 100;

/** Keeps the `size` best (score, position) pairs; ties go to the earlier position. */
function topPositions(
  candidates: PositionList,
  scores: Float64Array,
  size: number,
): number[] {
  const better = (left: number, right: number): boolean => {
    const difference = (scores[left] as number) - (scores[right] as number);
    return difference > 0 || (difference === 0 && left < right);
  };
  const heap: number[] = [];
  const items = candidates.items;
  for (let index = 0; index < candidates.length; index += 1) {
    const candidate = items[index] as number;
    if (heap.length < size) {
      heap.push(candidate);
      let child = heap.length - 1;
      while (child > 0) {
        const parent = (child - 1) >> 1;
        if (!better(heap[parent] as number, heap[child] as number)) break;
        [heap[parent], heap[child]] = [
          heap[child] as number,
          heap[parent] as number,
        ];
        child = parent;
      }
    } else if (better(candidate, heap[0] as number)) {
      heap[0] = candidate;
      let parent = 0;
      for (;;) {
        const left = parent * 2 + 1;
        const right = left + 1;
        let worst = parent;
        if (
          left < heap.length &&
          better(heap[worst] as number, heap[left] as number)
        )
          worst = left;
        if (
          right < heap.length &&
          better(heap[worst] as number, heap[right] as number)
        )
          worst = right;
        if (worst === parent) break;
        [heap[parent], heap[worst]] = [
          heap[worst] as number,
          heap[parent] as number,
        ];
        parent = worst;
      }
    }
  }
  return heap.sort((left, right) => (better(left, right) ? -1 : 1));
}

/** What one search against a snapshot needs. */
type SearchRun = {
  snapshot: Snapshot;
  query: string;
  profile: string | undefined;
  target: string | undefined;
  limit: number;
  tuning: SearchTuning;
  /** Learned usage, scored as a field of its own. */
  usage?: UsageStore | undefined;
  /** Synonyms of a word, for query words that match nothing. */
  synonyms?: ((word: string) => readonly string[]) | undefined;
};

/** Runs one search against a snapshot (see `ToolCatalog.search`). */
export function runSearch(options: SearchRun): SearchResult {
  const { snapshot } = options;
  snapshot.touched.length = 0;
  try {
    return scoreAndRank(options);
  } finally {
    // Leave the scratch buffers clean even if something threw half-way.
    const { touched, scores, nameCovered, likelihood } = snapshot;
    for (let slot = 0; slot < touched.length; slot += 1) {
      const position = touched.items[slot] as number;
      scores[position] = 0;
      nameCovered[position] = 0;
      likelihood[position] = 0;
    }
    touched.length = 0;
  }
}

/** One usage term compiled against a snapshot: the tools that have it, and their gains. */
type UsageTerm = {
  version: number;
  positions: Int32Array;
  gains: Float32Array;
};

const usageViews = new WeakMap<
  Snapshot,
  WeakMap<UsageStore, Map<string, UsageTerm>>
>();

/**
 * One usage term compiled against a snapshot: for each tool (in the snapshot) whose past
 * requests contain it, the saturated gain before idf. The usage frequency, times
 * `usageWeight` and length-normalized by `usageB`, joins the tool's own bag frequency
 * before BM25 saturation, so a word counts at most as much as a word the tool's text
 * repeats. Compiled when a query first needs it and again only after its posting changed
 * (with `usageB` above 0, after any change), so a new use costs the next search only the
 * recompilation of the query's terms that it touched.
 */
function usageTerm(
  snapshot: Snapshot,
  usage: UsageStore,
  tuning: SearchTuning,
  term: string,
  posting: ReadonlyMap<string, number>,
): UsageTerm {
  let perUsage = usageViews.get(snapshot);
  if (!perUsage) {
    perUsage = new WeakMap();
    usageViews.set(snapshot, perUsage);
  }
  let terms = perUsage.get(usage);
  if (!terms) {
    terms = new Map();
    perUsage.set(usage, terms);
  }
  const b = tuning.usageB;
  const average = usage.averageLength || 1;
  const mu = tuning.usageMu;
  // With length normalization or smoothing, any new use may change a tool's length or the
  // term's share of all requests: recompile then.
  const version = b > 0 || mu > 0 ? usage.version : usage.termVersion(term);
  const cached = terms.get(term);
  if (cached && cached.version === version) return cached;
  const { index, byName } = snapshot;
  const k1 = tuning.k1;
  const usageK1 = tuning.usageK1;
  const saturate = (frequency: number): number =>
    (frequency * (k1 + 1)) / (k1 + frequency);
  const textId = index.termId(term);
  const positions: number[] = [];
  const gains: number[] = [];
  let occurrences = 0;
  if (mu > 0)
    for (const frequency of posting.values()) occurrences += frequency;
  const share =
    occurrences / Math.max(1, usage.averageLength * usage.toolCount);
  for (const [name, frequency] of posting) {
    const position = byName.get(name);
    if (position === undefined) continue;
    const norm = b > 0 ? 1 - b + (b * usage.lengthOf(name)) / average : 1;
    const text =
      textId === undefined ? 0 : index.bagFrequency(textId, position);
    const counted =
      tuning.usageCap > 0 ? Math.min(tuning.usageCap, frequency) : frequency;
    positions.push(position);
    if (mu > 0) {
      const lengthPart = Math.log((usage.lengthOf(name) + mu) / mu);
      gains.push(
        tuning.usageWeight *
          Math.max(0, Math.log(1 + counted / (mu * share)) - b * lengthPart),
      );
    } else if (usageK1 > 0) {
      const normalized = counted / norm;
      gains.push(
        (tuning.usageWeight * (normalized * (usageK1 + 1))) /
          (usageK1 + normalized),
      );
    } else
      gains.push(
        saturate(text + (tuning.usageWeight * counted) / norm) - saturate(text),
      );
  }
  const compiled = {
    version,
    positions: Int32Array.from(positions),
    gains: Float32Array.from(gains),
  };
  terms.set(term, compiled);
  return compiled;
}

/**
 * Adds the usage field's score for the query's terms and returns the terms that matched
 * some tool's usage in scope. A tool gains usage evidence only from terms of the query.
 * A term's idf is its idf in the text index (for a word no tool's text has, an idf over
 * the tools whose requests have it), capped by its idf among the remembered requests and
 * among the tools that have usage: a word that many requests, or the requests of many
 * different tools, use ("find", "recommend") says little about the tool wanted.
 */
function accumulateUsage(
  options: SearchRun,
  words: readonly QueryWord[],
  touched: PositionList,
  accept: (position: number) => boolean,
  filtered: boolean,
): Set<string> {
  const matched = new Set<string>();
  const { usage, tuning, snapshot } = options;
  if (usage === undefined || usage.size === 0 || tuning.usageWeight <= 0)
    return matched;
  const { scores, index } = snapshot;
  const counts = new Map<string, number>();
  for (const word of words)
    for (const term of word.terms)
      counts.set(term, (counts.get(term) ?? 0) + 1);
  const k3 = tuning.queryTermSaturation;
  const total = snapshot.tools.length;
  const requests = usage.size;
  const used = usage.toolCount;
  for (const [term, count] of counts) {
    const posting = usage.postings(term);
    if (posting === undefined) continue;
    const textId = index.termId(term);
    const df = Math.min(total, posting.size);
    const idf =
      textId === undefined
        ? Math.log(1 + (total - df + 0.5) / (df + 0.5))
        : index.idf(textId);
    const inRequests = usage.requestFrequency(term);
    const requestIdf = Math.log(
      1 + (requests - inRequests + 0.5) / (inRequests + 0.5),
    );
    const usedIdf = Math.log(
      1 + (used - posting.size + 0.5) / (posting.size + 0.5),
    );
    const usageIdf = Math.min(requestIdf, usedIdf);
    const share = tuning.usageTextIdf;
    const queryWeight =
      (k3 > 0 ? ((k3 + 1) * count) / (k3 + count) : 1) *
      (share * Math.min(idf, usageIdf) + (1 - share) * usageIdf);
    const { positions, gains } = usageTerm(
      snapshot,
      usage,
      tuning,
      term,
      posting,
    );
    for (let slot = 0; slot < positions.length; slot += 1) {
      const position = positions[slot] as number;
      if (filtered && !accept(position)) continue;
      matched.add(term);
      if (scores[position] === 0) touched.push(position);
      scores[position] =
        (scores[position] as number) + queryWeight * (gains[slot] as number);
    }
  }
  return matched;
}

function scoreAndRank(options: SearchRun): SearchResult {
  const { snapshot, profile, target, limit, tuning } = options;
  const { index, tools, scores } = snapshot;
  const query = options.query.trim();
  if (query === '') return { hits: [], unmatchedTerms: [] };
  const accept = (position: number): boolean => {
    const entry = (tools[position] as PreparedTool).entry;
    if (target !== undefined && entry.target !== target) return false;
    if (
      profile !== undefined &&
      entry.profile !== profile &&
      entry.profile !== CORE_PROFILE
    )
      return false;
    return true;
  };

  // Exact names: the whole query, then identifier-like words naming a tool.
  const exact: number[] = [];
  const addExact = (name: string, qualifiedBypassesProfile: boolean): void => {
    for (const position of snapshot.byExactName.get(name) ?? []) {
      const entry = (tools[position] as PreparedTool).entry;
      if (target !== undefined && entry.target !== target) continue;
      const bypass =
        qualifiedBypassesProfile && normalizeName(entry.name) === name;
      if (!bypass && !accept(position)) continue;
      if (!exact.includes(position)) exact.push(position);
    }
  };
  addExact(normalizeName(query), true);
  const words = analyzeQuery(query);
  for (const word of words)
    if (word.identifier !== undefined) addExact(word.identifier, false);

  // BM25F over the query's distinct terms.
  const { nameCovered } = snapshot;
  const termIds = new Map<number, number>();
  const queryTerms = words.flatMap((word) => word.terms);
  for (const term of queryTerms) {
    const id = index.termId(term);
    if (id !== undefined) termIds.set(id, (termIds.get(id) ?? 0) + 1);
  }
  const k3 = tuning.queryTermSaturation;
  for (const [id, count] of termIds)
    termIds.set(id, k3 > 0 ? ((k3 + 1) * count) / (k3 + count) : 1);
  const { touched, accepted } = snapshot;
  touched.length = 0;
  for (const [id, weight] of termIds)
    index.accumulate(id, weight, scores, touched, nameCovered);
  const usageMatched = accumulateUsage(
    options,
    words,
    touched,
    accept,
    profile !== undefined || target !== undefined,
  );
  const added = new Set<number>();
  if (options.synonyms !== undefined && tuning.synonymWeight > 0) {
    // Words that match nothing contribute their synonyms, at a low weight.
    for (const word of words) {
      if (word.terms.length === 0) continue;
      if (word.terms.some((term) => index.termId(term) !== undefined)) continue;
      for (const synonym of options.synonyms(word.word.toLowerCase()))
        for (const term of analyzeText(synonym)) {
          const id = index.termId(term);
          if (id === undefined || termIds.has(id) || added.has(id)) continue;
          added.add(id);
          index.accumulate(id, tuning.synonymWeight, scores, touched);
        }
    }
  }
  const acceptAll = (): PositionList => {
    accepted.length = 0;
    for (let index = 0; index < touched.length; index += 1) {
      const position = touched.items[index] as number;
      if (accept(position)) accepted.push(position);
    }
    return accepted;
  };
  const filtered = profile !== undefined || target !== undefined;
  let candidates = filtered ? acceptAll() : touched;
  if (tuning.nameCoverageWeight > 0 && candidates.length > 0) {
    // Name-aware scoring: tools whose name words the query mostly contains move up.
    let strongest = 0;
    for (let slot = 0; slot < candidates.length; slot += 1)
      strongest = Math.max(
        strongest,
        scores[candidates.items[slot] as number] as number,
      );
    const bonus = tuning.nameCoverageWeight * strongest;
    const cap = tuning.nameCoverageCap;
    for (let slot = 0; slot < candidates.length; slot += 1) {
      const position = candidates.items[slot] as number;
      const weight = index.nameWeight(position);
      if (weight > 0) {
        const own = scores[position] as number;
        const gain = (bonus * (nameCovered[position] as number)) / weight;
        scores[position] = own + (cap > 0 ? Math.min(gain, cap * own) : gain);
      }
    }
  }
  if (tuning.siblingWeight > 0 && candidates.length > 0) {
    // A tool gains a share of the best score among the tools of its own target.
    const best = new Float64Array(snapshot.targetNames.length);
    for (let index = 0; index < candidates.length; index += 1) {
      const position = candidates.items[index] as number;
      const slot = snapshot.targetOf[position] as number;
      if ((scores[position] as number) > (best[slot] as number))
        best[slot] = scores[position] as number;
    }
    const cap = tuning.siblingCap;
    for (let index = 0; index < candidates.length; index += 1) {
      const position = candidates.items[index] as number;
      const own = scores[position] as number;
      const bonus =
        tuning.siblingWeight *
        (best[snapshot.targetOf[position] as number] as number);
      scores[position] = own + (cap > 0 ? Math.min(bonus, cap * own) : bonus);
    }
  }

  if (
    tuning.feedbackDocuments > 0 &&
    tuning.feedbackTerms > 0 &&
    candidates.length > 0
  ) {
    // Pseudo-relevance feedback: add the strongest other terms of the top tools.
    const top = topPositions(candidates, scores, tuning.feedbackDocuments);
    const expansion = new Map<number, number>();
    for (const position of top) {
      const stats = toolTermStats(tools[position] as PreparedTool);
      const fieldCount = stats.lengths.length;
      stats.terms.forEach((term, slot) => {
        let frequency = 0;
        for (let field = 0; field < fieldCount; field += 1)
          frequency += stats.counts[slot * fieldCount + field] ?? 0;
        const id = index.termId(term);
        if (id === undefined || termIds.has(id)) return;
        expansion.set(
          id,
          (expansion.get(id) ?? 0) +
            (frequency / (frequency + 1)) * index.idf(id),
        );
      });
    }
    const chosen = [...expansion.entries()]
      .sort((left, right) => right[1] - left[1])
      .slice(0, tuning.feedbackTerms);
    const strongest = chosen[0]?.[1] ?? 1;
    for (const [id, weight] of chosen)
      index.accumulate(
        id,
        (tuning.feedbackWeight * weight) / strongest,
        scores,
        touched,
      );
    candidates = filtered ? acceptAll() : touched;
  }

  // Which query words matched nothing in the searched scope.
  const unfiltered = !filtered;
  const matchedTerms = new Set<string>();
  const termMatches = (term: string): boolean => {
    if (matchedTerms.has(term)) return true;
    const id = index.termId(term);
    const inText =
      id !== undefined &&
      (unfiltered ||
        index.documentsOf(id).some((position) => accept(position)));
    if (!inText && !usageMatched.has(term)) return false;
    matchedTerms.add(term);
    return true;
  };
  const exactNames = new Set(
    exact.flatMap((position) => (tools[position] as PreparedTool).exactNames),
  );
  const unmatched: string[] = [];
  for (const word of words) {
    if (word.terms.length === 0 || unmatched.includes(word.word)) continue;
    if (word.identifier !== undefined && exactNames.has(word.identifier))
      continue;
    if (exactNames.has(normalizeName(query))) continue;
    if (!word.terms.some(termMatches)) unmatched.push(word.word);
  }

  // A query with unmatched words whose other words are all common in the catalog gets no
  // hits rather than tools that merely share a common word.
  if (exact.length === 0 && unmatched.length > 0 && candidates.length > 0) {
    const minimumDocuments = Math.max(3, tuning.commonTermShare * tools.length);
    const informative =
      usageMatched.size > 0 ||
      [...termIds.keys(), ...added].some(
        (id) => index.documentsOf(id).length < minimumDocuments,
      );
    if (!informative) {
      accepted.length = 0;
      candidates = accepted;
    }
  }

  let best = topPositions(candidates, scores, limit + exact.length);
  let topScore = best.length > 0 ? (scores[best[0] as number] as number) : 0;
  let ranking = scores;
  if (tuning.likelihoodWeight > 0 && candidates.length > 0) {
    // A second ranker of another family, query likelihood with Dirichlet smoothing, fused
    // with BM25 by reciprocal rank over the top of both lists.
    const { likelihood } = snapshot;
    const mu = tuning.likelihoodMu;
    let queryWeight = 0;
    for (const [id, weight] of termIds) {
      index.accumulateLikelihood(id, weight, mu, likelihood);
      queryWeight += weight;
    }
    const floor = topScore * tuning.relativeCutoff;
    accepted.length = 0;
    for (let slot = 0; slot < candidates.length; slot += 1) {
      const position = candidates.items[slot] as number;
      if ((scores[position] as number) < floor) continue;
      likelihood[position] =
        (likelihood[position] as number) +
        index.likelihoodLength(position, queryWeight, mu);
      accepted.push(position);
    }
    const depth = Math.max(FUSION_DEPTH, limit);
    const fused = new Map<number, number>();
    topPositions(accepted, scores, depth).forEach((position, rank) =>
      fused.set(position, 1 / (tuning.fusionK + rank + 1)),
    );
    topPositions(accepted, likelihood, depth).forEach((position, rank) =>
      fused.set(
        position,
        (fused.get(position) ?? 0) +
          tuning.likelihoodWeight / (tuning.fusionK + rank + 1),
      ),
    );
    for (const [position, score] of fused) likelihood[position] = score;
    accepted.length = 0;
    for (const position of fused.keys()) accepted.push(position);
    best = topPositions(accepted, likelihood, limit + exact.length);
    ranking = likelihood;
    topScore = 0;
  }
  const hits: SearchHit[] = [];
  const toHit = (position: number, score: number): SearchHit => {
    const entry = (tools[position] as PreparedTool).entry;
    return {
      name: entry.name,
      target: entry.target,
      description: compactDescription({ description: entry.description }),
      mutating: entry.mutating,
      score,
    };
  };
  const bestScore =
    best.length > 0 ? (ranking[best[0] as number] as number) : 0;
  exact.forEach((position, rank) =>
    hits.push(toHit(position, bestScore + exact.length - rank)),
  );
  for (const position of best) {
    if (hits.length >= limit) break;
    const score = ranking[position] as number;
    if (score < topScore * tuning.relativeCutoff) break;
    if (!exact.includes(position)) hits.push(toHit(position, score));
  }

  return { hits: hits.slice(0, limit), unmatchedTerms: unmatched };
}

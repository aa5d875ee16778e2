import type { SearchTuning } from './search-tuning.js';
import { PositionList, topPositions } from './top-positions.js';
import { fieldTerms, type PreparedTool } from './prepare.js';
import { type Collection, IndexView, reuse, type Segment } from './segments.js';
import { compactDescription } from './render.js';
import { TERMS } from './terms.js';
import { analyzeQuery, normalizeName, type QueryWord } from './tokenizer.js';
import type { SearchHit, SearchResult, ToolEntry } from './types.js';
import type { UsageStore } from './usage.js';
import type { VectorMatrix } from './similarity-kernel.js';

/** The profile whose tools are visible in every profile. */
export const CORE_PROFILE = 'core';

/** Positions of the tools with a normalized exact name, ascending. */
type ExactNames = { get(name: string): readonly number[] | undefined };

/** One state of a catalog: tools, lookup tables and the search index. */
export type Snapshot = {
  readonly size: number;
  toolAt(position: number): PreparedTool;
  entryAt(position: number): ToolEntry;
  /** The name, target and profile of the tool at a position, without making a saved catalog's tool. */
  nameAt(position: number): string;
  targetAt(position: number): string;
  profileAt(position: number): string;
  /** The entries, in order (frozen; assembled when first asked for). */
  entries(): readonly ToolEntry[];
  readonly byName: { get(name: string): number | undefined };
  readonly byExactName: ExactNames;
  readonly index: IndexView;
  readonly byTarget: ReadonlyMap<string, Segment>;
  /** Scratch score buffer (searches are synchronous, so one per snapshot suffices). */
  readonly scores: Float64Array;
  /** Scratch buffer: idf of the query terms found in each tool's name. */
  readonly nameCovered: Float64Array;
  /** Scratch lists of touched tools, of accepted tools, and of tools with a query term in their name. */
  readonly touched: PositionList;
  readonly named: PositionList;
  readonly accepted: PositionList;
  /** Usage terms compiled against this snapshot (see {@link usageTerm}). */
  readonly usageTerms: Map<string, UsageTerm>;
  /** The tools' vectors by lookup function and dimension (see `vectorMatrix`). */
  readonly vectorMatrices: WeakMap<object, Map<number, VectorMatrix>>;
};

/** The snapshot of `segments` over the collection statistics (of exactly these segments): a pass over the positions. */
export function buildSnapshot(options: {
  segments: readonly Segment[];
  collection: Collection;
  tuning: SearchTuning;
  /** The snapshot this one replaces, whose scratch buffers it may take over. */
  previous?: Snapshot;
}): Snapshot {
  const index = new IndexView({
    ...options,
    previous: options.previous?.index,
  });
  const byTarget = new Map<string, Segment>();
  for (const segment of options.segments) byTarget.set(segment.target, segment);
  const { bareNames } = options.collection;
  const byName = {
    get(name: string): number | undefined {
      const split = name.indexOf('_');
      const segment = byTarget.get(split < 0 ? name : name.slice(0, split));
      const local = segment?.localByName(name);
      return segment === undefined || local === undefined
        ? undefined
        : index.baseOf(segment) + local;
    },
  };
  const byExactName: ExactNames = {
    get(name) {
      const split = name.indexOf('_');
      const id = TERMS.lookup(name);
      const segments = new Set(
        id === undefined ? undefined : bareNames.get(id),
      );
      const owner = split < 0 ? undefined : byTarget.get(name.slice(0, split));
      if (owner) segments.add(owner);
      const positions: number[] = [];
      for (const segment of segments)
        if (segment.live)
          for (const local of segment.localsByExactName(name))
            positions.push(index.baseOf(segment) + local);
      return positions.length === 0
        ? undefined
        : positions.sort((left, right) => left - right);
    },
  };
  let entries: readonly ToolEntry[] | undefined;
  const size = index.size;
  // Scratch buffers are clean between searches, so the snapshot this one replaces lends its
  // own (the lists grow as they are filled).
  const { previous } = options;
  return {
    size,
    toolAt(position) {
      const { segment, local } = index.locate(position);
      return segment.tool(local);
    },
    entryAt(position) {
      const { segment, local } = index.locate(position);
      return segment.entryOf(local);
    },
    nameAt(position) {
      const { segment, local } = index.locate(position);
      return segment.nameOf(local);
    },
    targetAt(position) {
      return index.locate(position).segment.target;
    },
    profileAt(position) {
      const { segment, local } = index.locate(position);
      return segment.profileOf(local);
    },
    entries() {
      entries ??= Object.freeze(
        options.segments.flatMap((segment) =>
          Array.from({ length: segment.tools.length }, (_, local) =>
            segment.entryOf(local),
          ),
        ),
      );
      return entries;
    },
    byName,
    byExactName,
    index,
    byTarget,
    scores: reuse(previous?.scores, size, Float64Array),
    nameCovered: reuse(previous?.nameCovered, size, Float64Array),
    touched: previous?.touched ?? new PositionList(size),
    named: previous?.named ?? new PositionList(size),
    accepted: previous?.accepted ?? new PositionList(size),
    usageTerms: new Map(),
    vectorMatrices: new WeakMap(),
  };
}

/** What one search against a snapshot needs. */
export type SearchRun = {
  snapshot: Snapshot;
  query: string;
  profile: string | undefined;
  target: string | undefined;
  limit: number;
  tuning: SearchTuning;
  /** Learned usage (the catalog's one store: the snapshot keeps its compiled terms), scored as a field of its own. */
  usage?: UsageStore | undefined;
};

/**
 * A lexical ranking: the tools named exactly (first, in order), then the other best ones,
 * their scores, down to the relative cutoff, as many as make `limit` hits with the exact ones.
 */
export type LexicalRanking = {
  exact: number[];
  /** The best score (of any tool in scope, named exactly or not). */
  top: number;
  positions: number[];
  scores: number[];
  unmatchedTerms: string[];
};

/** Ranks one search against a snapshot (see `ToolCatalog.search`). */
export function rankLexical(options: SearchRun): LexicalRanking {
  const { snapshot } = options;
  snapshot.touched.length = 0;
  snapshot.named.length = 0;
  try {
    return scoreAndRank(options);
  } finally {
    // Leave the scratch buffers clean even if something threw half-way.
    const { touched, scores, nameCovered } = snapshot;
    for (let slot = 0; slot < touched.length; slot += 1) {
      const position = touched.items[slot] as number;
      scores[position] = 0;
      nameCovered[position] = 0;
    }
    touched.length = 0;
    snapshot.named.length = 0;
  }
}

/** The hit of the tool at `position` (its entry made). */
export function hitAt(
  snapshot: Snapshot,
  position: number,
  score: number,
): SearchHit {
  const entry = snapshot.entryAt(position);
  return {
    name: entry.name,
    target: entry.target,
    description: compactDescription(entry.description),
    mutating: entry.mutating,
    score,
  };
}

/** The hits of a search: the exact names first (scored above `top`), then the ranked ones, `limit` at most. */
export function hitsOf(options: {
  snapshot: Snapshot;
  exact: readonly number[];
  top: number;
  positions: readonly number[];
  scores: readonly number[];
  limit: number;
}): SearchHit[] {
  const { snapshot, exact, top } = options;
  const hits = exact
    .slice(0, options.limit)
    .map((position, rank) =>
      hitAt(snapshot, position, top + exact.length - rank),
    );
  options.positions.forEach((position, slot) => {
    if (hits.length < options.limit)
      hits.push(hitAt(snapshot, position, options.scores[slot] as number));
  });
  return hits;
}

/** Runs one search against a snapshot (see `ToolCatalog.search`). */
export function runSearch(options: SearchRun): SearchResult {
  const ranking = rankLexical(options);
  return {
    hits: hitsOf({
      ...ranking,
      snapshot: options.snapshot,
      limit: options.limit,
    }),
    unmatchedTerms: ranking.unmatchedTerms,
  };
}

/** One usage term compiled against a snapshot: the tools that have it, and their gains. */
type UsageTerm = {
  version: number;
  positions: Int32Array;
  gains: Float32Array;
};

/**
 * One usage term compiled against a snapshot: for each tool whose past requests contain it,
 * the saturated gain before idf (see `usageWeight`). Compiled when a query first needs it
 * and again only after its posting changed, so a new use costs the next search little.
 */
function usageTerm(
  snapshot: Snapshot,
  usage: UsageStore,
  tuning: SearchTuning,
  term: string,
  posting: ReadonlyMap<string, number>,
): UsageTerm {
  const terms = snapshot.usageTerms;
  const version = usage.termVersion(term);
  const cached = terms.get(term);
  if (cached && cached.version === version) return cached;
  const { index, byName } = snapshot;
  const k1 = tuning.k1;
  const saturate = (frequency: number): number =>
    (frequency * (k1 + 1)) / (k1 + frequency);
  const textId = index.termId(term);
  const positions: number[] = [];
  const gains: number[] = [];
  for (const [name, frequency] of posting) {
    const position = byName.get(name);
    if (position === undefined) continue;
    const text =
      textId === undefined ? 0 : index.bagFrequency(textId, position);
    positions.push(position);
    gains.push(
      saturate(text + tuning.usageWeight * frequency) - saturate(text),
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
  scope: Scope,
): Set<string> {
  const matched = new Set<string>();
  const { usage, tuning, snapshot } = options;
  if (usage === undefined || usage.size === 0 || tuning.usageWeight <= 0)
    return matched;
  const { scores, index, touched } = snapshot;
  const terms = new Set(words.flatMap((word) => word.terms));
  const total = snapshot.size;
  const requests = usage.size;
  const used = usage.toolCount;
  for (const term of terms) {
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
    const queryWeight = Math.min(idf, Math.min(requestIdf, usedIdf));
    const { positions, gains } = usageTerm(
      snapshot,
      usage,
      tuning,
      term,
      posting,
    );
    for (let slot = 0; slot < positions.length; slot += 1) {
      const position = positions[slot] as number;
      if (scope.filtered && !scope.accept(position)) continue;
      matched.add(term);
      if (scores[position] === 0) touched.push(position);
      scores[position] =
        (scores[position] as number) + queryWeight * (gains[slot] as number);
    }
  }
  return matched;
}

/** The profile and target of one search. */
export type Scope = {
  /** Whether a profile or a target narrows the search. */
  filtered: boolean;
  /** Whether the tool at a position is in scope. */
  accept: (position: number) => boolean;
};

export function searchScope(
  options: Pick<SearchRun, 'snapshot' | 'profile' | 'target'>,
): Scope {
  const { profile, target, snapshot } = options;
  return {
    filtered: profile !== undefined || target !== undefined,
    accept: (position) => {
      if (target !== undefined && snapshot.targetAt(position) !== target)
        return false;
      if (profile === undefined) return true;
      const toolProfile = snapshot.profileAt(position);
      return toolProfile === profile || toolProfile === CORE_PROFILE;
    },
  };
}

/** Tools named exactly: by the whole query, then by identifier-like words of it. */
function exactMatches(
  options: SearchRun,
  query: string,
  words: readonly QueryWord[],
  scope: Scope,
): number[] {
  const { snapshot, target } = options;
  const exact: number[] = [];
  const addExact = (name: string, qualifiedBypassesProfile: boolean): void => {
    for (const position of snapshot.byExactName.get(name) ?? []) {
      const entry = snapshot.entryAt(position);
      if (target !== undefined && entry.target !== target) continue;
      const bypass =
        qualifiedBypassesProfile && normalizeName(entry.name) === name;
      if (!bypass && !scope.accept(position)) continue;
      if (!exact.includes(position)) exact.push(position);
    }
  };
  addExact(normalizeName(query), true);
  for (const word of words)
    if (word.identifier !== undefined) addExact(word.identifier, false);
  return exact;
}

/** Adds the BM25 score of the query's distinct terms (each once); returns their ids. */
function scoreTerms(
  options: SearchRun,
  words: readonly QueryWord[],
): Set<number> {
  const { index, scores, touched, nameCovered, named } = options.snapshot;
  const termIds = new Set<number>();
  for (const word of words)
    for (const term of word.terms) {
      const id = index.termId(term);
      if (id !== undefined) termIds.add(id);
    }
  for (const id of termIds)
    index.accumulate(id, 1, scores, touched, nameCovered, named);
  return termIds;
}

/** Name-aware scoring: tools whose name words the query mostly contains move up. */
function addNameCoverage(
  options: SearchRun,
  candidates: PositionList,
  scope: Scope,
): void {
  const { tuning } = options;
  const { index, scores, nameCovered, named } = options.snapshot;
  if (tuning.nameCoverageWeight <= 0 || candidates.length === 0) return;
  let strongest = 0;
  const items = candidates.items;
  for (let slot = 0; slot < candidates.length; slot += 1) {
    const score = scores[items[slot] as number] as number;
    if (score > strongest) strongest = score;
  }
  const bonus = tuning.nameCoverageWeight * strongest;
  const cap = tuning.nameCoverageCap;
  // Only tools with a query term in their name gain (the others' gain is 0).
  for (let slot = 0; slot < named.length; slot += 1) {
    const position = named.items[slot] as number;
    if (scope.filtered && !scope.accept(position)) continue;
    const weight = index.nameWeight(position);
    if (weight > 0) {
      const own = scores[position] as number;
      const gain = (bonus * (nameCovered[position] as number)) / weight;
      scores[position] = own + (cap > 0 ? Math.min(gain, cap * own) : gain);
    }
  }
}

/** Query words that matched nothing in the searched scope, in query order. */
function unmatchedWords(options: {
  snapshot: Snapshot;
  query: string;
  words: readonly QueryWord[];
  exact: readonly number[];
  scope: Scope;
  usageMatched: ReadonlySet<string>;
}): string[] {
  const { snapshot, query, words, scope, usageMatched } = options;
  const { index } = snapshot;
  const matchedTerms = new Set<string>();
  const termMatches = (term: string): boolean => {
    if (matchedTerms.has(term)) return true;
    const id = index.termId(term);
    const inText =
      id !== undefined &&
      (!scope.filtered ||
        index.someDocument(id, (position) => scope.accept(position)));
    if (!inText && !usageMatched.has(term)) return false;
    matchedTerms.add(term);
    return true;
  };
  const exactNames = new Set(
    options.exact.flatMap((position) =>
      fieldTerms(snapshot.toolAt(position), 'identifier'),
    ),
  );
  const unmatched: string[] = [];
  for (const word of words) {
    if (word.terms.length === 0 || unmatched.includes(word.word)) continue;
    if (word.identifier !== undefined && exactNames.has(word.identifier))
      continue;
    if (exactNames.has(normalizeName(query))) continue;
    if (!word.terms.some(termMatches)) unmatched.push(word.word);
  }
  return unmatched;
}

/** Whether some matched term is rare enough in the catalog to be worth hits. */
function informative(
  options: SearchRun,
  termIds: ReadonlySet<number>,
  usageMatched: ReadonlySet<string>,
): boolean {
  const { index, size } = options.snapshot;
  const minimumDocuments = Math.max(3, options.tuning.commonTermShare * size);
  return (
    usageMatched.size > 0 ||
    [...termIds.keys()].some(
      (id) => index.documentFrequency(id) < minimumDocuments,
    )
  );
}

/** The best tools not named exactly, down to the relative cutoff, and the best score. */
function collectRanked(
  options: SearchRun,
  exact: readonly number[],
  candidates: PositionList,
): Pick<LexicalRanking, 'top' | 'positions' | 'scores'> {
  const { limit, tuning } = options;
  const { scores } = options.snapshot;
  const best = topPositions(candidates, scores, limit + exact.length);
  const top = best.length > 0 ? (scores[best[0] as number] as number) : 0;
  const positions: number[] = [];
  const kept: number[] = [];
  for (const position of best) {
    if (exact.length + positions.length >= limit) break;
    const score = scores[position] as number;
    if (score < top * tuning.relativeCutoff) break;
    if (!exact.includes(position)) {
      positions.push(position);
      kept.push(score);
    }
  }
  return { top, positions, scores: kept };
}

function scoreAndRank(options: SearchRun): LexicalRanking {
  const { snapshot } = options;
  const query = options.query.trim();
  if (query === '')
    return { exact: [], top: 0, positions: [], scores: [], unmatchedTerms: [] };
  const scope = searchScope(options);
  const words = analyzeQuery(query);
  const exact = exactMatches(options, query, words, scope);
  const termIds = scoreTerms(options, words);
  const usageMatched = accumulateUsage(options, words, scope);
  const { touched, accepted } = snapshot;
  let candidates = touched;
  if (scope.filtered) {
    accepted.length = 0;
    for (let slot = 0; slot < touched.length; slot += 1) {
      const position = touched.items[slot] as number;
      if (scope.accept(position)) accepted.push(position);
    }
    candidates = accepted;
  }
  addNameCoverage(options, candidates, scope);
  const unmatched = unmatchedWords({
    snapshot,
    query,
    words,
    exact,
    scope,
    usageMatched,
  });
  // A query with unmatched words whose other words are all common in the catalog gets no
  // hits rather than tools that merely share a common word.
  if (
    exact.length === 0 &&
    unmatched.length > 0 &&
    candidates.length > 0 &&
    !informative(options, termIds, usageMatched)
  ) {
    accepted.length = 0;
    candidates = accepted;
  }
  return {
    exact,
    ...collectRanked(options, exact, candidates),
    unmatchedTerms: unmatched,
  };
}

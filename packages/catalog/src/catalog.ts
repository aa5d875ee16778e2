import { assertTargetName } from './backends.js';
import { SEED_TOOLS } from './entries.js';
import { CatalogError } from './errors.js';
import { prepareTool, type PreparedTool } from './prepare.js';
import { compactDescription } from './render.js';
import { analyzeQuery, normalizeName } from './tokenizer.js';
import type { SearchHit, SearchResult, ToolEntry } from './types.js';
import { WinkIndex } from './wink-index.js';

/** Default number of hits of {@link ToolCatalog.search}. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Largest accepted `limit`. */
export const MAX_SEARCH_LIMIT = 200;
/** Hits scoring below this share of the best hit are cut. */
export const RELATIVE_SCORE_CUTOFF = 0.25;
/** The profile whose tools are visible in every profile. */
export const CORE_PROFILE = 'core';

type Snapshot = {
  readonly tools: readonly PreparedTool[];
  readonly byName: ReadonlyMap<string, number>;
  readonly byExactName: ReadonlyMap<string, readonly number[]>;
  readonly index: WinkIndex;
};

function validateEntry(entry: ToolEntry, where: string): void {
  if (typeof entry !== 'object' || entry === null) {
    throw new CatalogError({ code: 'INVALID_TOOL', message: `${where}: a tool entry must be an object, got ${JSON.stringify(entry)}.` });
  }
  for (const key of ['name', 'target', 'tool', 'backend', 'profile'] as const) {
    if (typeof entry[key] !== 'string' || entry[key] === '') {
      throw new CatalogError({
        code: 'INVALID_TOOL',
        message: `${where}: tool ${JSON.stringify(entry.name)} needs a non-empty string "${key}" (build entries with toolEntryFromMcpTool).`,
      });
    }
  }
  if (typeof entry.description !== 'string') {
    throw new CatalogError({ code: 'INVALID_TOOL', message: `${where}: tool "${entry.name}" has a non-string "description".` });
  }
  if (typeof entry.mutating !== 'boolean') {
    throw new CatalogError({ code: 'INVALID_TOOL', message: `${where}: tool "${entry.name}" needs a boolean "mutating".` });
  }
}

function buildSnapshot(entries: readonly ToolEntry[]): Snapshot {
  const tools = entries.map((entry) => prepareTool(entry));
  const byName = new Map<string, number>();
  const byExactName = new Map<string, number[]>();
  tools.forEach((tool, position) => {
    byName.set(tool.entry.name, position);
    for (const exact of tool.exactNames) {
      const list = byExactName.get(exact);
      if (list) list.push(position);
      else byExactName.set(exact, [position]);
    }
  });
  return { tools, byName, byExactName, index: new WinkIndex({ tools }) };
}

function assertUniqueNames(entries: readonly ToolEntry[], where: string): void {
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.name)) {
      throw new CatalogError({
        code: 'DUPLICATE_TOOL',
        message: `${where}: tool name "${entry.name}" appears more than once; qualified names must be unique.`,
      });
    }
    seen.add(entry.name);
  }
}

/**
 * An in-memory, searchable catalog of MCP tools.
 *
 * Every change builds a new immutable snapshot and swaps it in one assignment, so a search
 * always sees either the old or the new catalog, never a mix.
 *
 * @example
 * ```ts
 * const catalog = ToolCatalog.fromSeed();
 * const { hits } = catalog.search({ query: 'android adb install apk', profile: 'android' });
 * ```
 */
export class ToolCatalog {
  #snapshot: Snapshot;

  /** Creates a catalog holding `tools` (default: empty). Throws `DUPLICATE_TOOL` on repeated names. */
  constructor(options: { tools?: readonly ToolEntry[] } = {}) {
    const tools = [...(options.tools ?? [])];
    tools.forEach((entry, position) => validateEntry(entry, `tools[${position}]`));
    assertUniqueNames(tools, 'new ToolCatalog');
    this.#snapshot = buildSnapshot(tools);
  }

  /** A catalog holding the 34 {@link SEED_TOOLS}. */
  static fromSeed(): ToolCatalog {
    return new ToolCatalog({ tools: SEED_TOOLS });
  }

  /** Number of tools in the catalog. */
  get size(): number {
    return this.#snapshot.tools.length;
  }

  /** All tools, in insertion order (a backend's tools stay together). */
  list(): readonly ToolEntry[] {
    return this.#snapshot.tools.map((tool) => tool.entry);
  }

  /** The tool with exactly this qualified name, if any. */
  get(name: string): ToolEntry | undefined {
    const snapshot = this.#snapshot;
    const position = snapshot.byName.get(name);
    return position === undefined ? undefined : snapshot.tools[position]?.entry;
  }

  /**
   * Replaces every tool of `target` with `tools` atomically. Each tool must belong to `target`
   * and names must be unique, else nothing changes and a `CatalogError` is thrown.
   */
  replaceBackend(target: string, tools: readonly ToolEntry[]): void {
    assertTargetName(target);
    if (!Array.isArray(tools)) {
      throw new CatalogError({ code: 'INVALID_ARGUMENT', message: `replaceBackend("${target}"): tools must be an array.` });
    }
    tools.forEach((entry, position) => {
      validateEntry(entry, `replaceBackend("${target}") tools[${position}]`);
      if (entry.target !== target) {
        throw new CatalogError({
          code: 'INVALID_TOOL',
          message: `replaceBackend("${target}"): tool "${entry.name}" belongs to target "${entry.target}"; pass only tools of "${target}".`,
        });
      }
    });
    assertUniqueNames(tools, `replaceBackend("${target}")`);
    const current = this.#snapshot.tools.map((tool) => tool.entry);
    const firstPosition = current.findIndex((entry) => entry.target === target);
    const others = current.filter((entry) => entry.target !== target);
    const insertAt = firstPosition === -1 ? others.length : current.slice(0, firstPosition).filter((entry) => entry.target !== target).length;
    const next = [...others.slice(0, insertAt), ...tools, ...others.slice(insertAt)];
    assertUniqueNames(next, `replaceBackend("${target}")`);
    this.#snapshot = buildSnapshot(next);
  }

  /** Removes every tool of `target` (no-op when it has none). */
  removeBackend(target: string): void {
    const current = this.#snapshot.tools.map((tool) => tool.entry);
    const next = current.filter((entry) => entry.target !== target);
    if (next.length !== current.length) this.#snapshot = buildSnapshot(next);
  }

  /**
   * Ranked search. A query equal to a tool's exact name (qualified or bare) returns that tool
   * first. Results are narrowed to `profile` + `core` when a profile is given, and to one
   * `target` when given; the list is cut where scores fall below a share of the best hit.
   */
  search(options: { query: string; profile?: string; target?: string; limit?: number }): SearchResult {
    const snapshot = this.#snapshot;
    if (typeof options !== 'object' || options === null || typeof options.query !== 'string') {
      throw new CatalogError({ code: 'INVALID_ARGUMENT', message: 'search: "query" must be a string.' });
    }
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw new CatalogError({ code: 'INVALID_ARGUMENT', message: `search: "limit" must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got ${String(limit)}.` });
    }
    const { profile, target } = options;
    const accept = (position: number): boolean => {
      const entry = snapshot.tools[position]?.entry;
      if (!entry) return false;
      if (target !== undefined && entry.target !== target) return false;
      if (profile !== undefined && entry.profile !== profile && entry.profile !== CORE_PROFILE) return false;
      return true;
    };
    const query = options.query.trim();
    if (query === '') return { hits: [], unmatchedTerms: [] };

    const exact = (snapshot.byExactName.get(normalizeName(query)) ?? []).filter(
      (position) => target === undefined || snapshot.tools[position]?.entry.target === target,
    );
    const words = analyzeQuery(query);
    const terms = [...new Set(words.flatMap((word) => word.terms))];
    const scored = snapshot.index.search({ terms, accept, limit: Math.max(snapshot.tools.length, 3) });

    const hits: SearchHit[] = [];
    const taken = new Set<number>();
    const toHit = (position: number, score: number): SearchHit => {
      const entry = (snapshot.tools[position] as PreparedTool).entry;
      return {
        name: entry.name,
        target: entry.target,
        description: compactDescription({ description: entry.description }),
        mutating: entry.mutating,
        score,
      };
    };
    const best = scored[0]?.[1] ?? 0;
    for (const position of exact) {
      hits.push(toHit(position, Math.max(best, 1) * 2));
      taken.add(position);
    }
    for (const [position, score] of scored) {
      if (hits.length >= limit) break;
      if (taken.has(position) || score < best * RELATIVE_SCORE_CUTOFF) continue;
      hits.push(toHit(position, score));
      taken.add(position);
    }
    const unmatchedTerms =
      exact.length > 0
        ? []
        : [...new Set(words.filter((word) => word.terms.length > 0 && !word.terms.some((term) => snapshot.index.has(term))).map((word) => word.word))];
    return { hits: hits.slice(0, limit), unmatchedTerms };
  }
}

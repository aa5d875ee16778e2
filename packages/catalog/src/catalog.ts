import { assertTargetName } from './backends.js';
import {
  checkTuningOverrides,
  resolveTuning,
  type SearchTuning,
  type SearchTuningOverrides,
} from './search-tuning.js';
import { SEED_TOOLS } from './entries.js';
import {
  CatalogError,
  CatalogErrorCode,
  invalidArgument,
  invalidUsage,
} from './errors.js';
import {
  planSavedCatalog,
  readSavedCatalog,
  savedCatalogChunks,
  type SavedCatalog,
  type SavedCatalogStream,
  restoreSavedCatalog,
  type RestoredCatalog,
  type RestoredTarget,
  type SavedCatalogTarget,
} from './saved-catalog.js';
import { FIELD_NAMES, type PreparedTool, prepareTool } from './prepare.js';
import { analyzeQuery } from './tokenizer.js';
import { checkUsageRecord, UsageStore, type UsageRecord } from './usage.js';
import { multiplexedName } from '@heretek/internal';
import { addFrequencies, Collection, drain, Segment } from './segments.js';
import { buildSnapshot, runSearch, type Snapshot } from './snapshot.js';
import {
  checkSearchVectors,
  runHybridSearch,
  type SearchVectors,
} from './hybrid.js';
import type { SearchResult, ToolEntry } from './types.js';

/** Default number of hits of {@link ToolCatalog.search}. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Largest accepted `limit`. */
export const MAX_SEARCH_LIMIT = 200;
/** Queries longer than this many characters are truncated before analysis. */
export const MAX_QUERY_CHARS = 4096;
const settled = (): void => undefined;
function yieldToOthers(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** `restored` without the targets `admit` rejects (moved to `dropped`, their document frequencies taken away). */
function admitted(
  restored: RestoredCatalog,
  admit: (target: string) => boolean,
): RestoredCatalog {
  const kept: RestoredTarget[] = [];
  const dropped = [...restored.dropped];
  for (const target of restored.kept) {
    if (admit(target.target)) {
      kept.push(target);
      continue;
    }
    dropped.push(target.target);
    addFrequencies(restored.frequencies, target.arrays, -1);
  }
  return { ...restored, kept, dropped };
}

/** Runs a generator of work to its end, calling `pause` (which may yield) between its steps. */
async function drainAsync<T>(
  steps: Generator<undefined, T>,
  pause: () => Promise<void>,
): Promise<T> {
  let step = steps.next();
  while (step.done !== true) {
    await pause();
    step = steps.next();
  }
  return step.value;
}

/** Longest stretch of work, in milliseconds, between two yields of a restore or a save. */
const RESTORE_SLICE_MS = 10;

/** A pause that yields to other work once {@link RESTORE_SLICE_MS} of work has passed since it last did. */
function pacer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since >= RESTORE_SLICE_MS) {
      await yieldToOthers();
      since = performance.now();
    }
  };
}

/** Options of {@link ToolCatalog.restoreCatalogAsync}. */
export type RestoreCatalogOptions = {
  /** Whether to restore a saved target, given its key and header entry (default: all). */
  keep?: (target: string, key: string, info: SavedCatalogTarget) => boolean;
  /**
   * Which of the targets `keep` accepted go in, awaited only before the swap, so a caller
   * checks them (against its pins, say) while the saved catalog is decoded; the ones it
   * rejects are `dropped`. A rejection rejects the restore, with nothing changed.
   */
  admit?: Promise<(target: string) => boolean>;
};

/** What {@link ToolCatalog.restoreCatalogAsync} restored. */
export type RestoreCatalogResult = {
  /** The targets restored, in the saved catalog's order. */
  restored: string[];
  /** The saved targets that `keep` rejected (left as they were in this catalog). */
  dropped: string[];
};

/** Tools tokenized between two yields of {@link ToolCatalog.replaceBackendAsync}. */
const PREPARE_SLICE = 256;

function validateEntry(entry: ToolEntry, where: string): void {
  const invalid = (problem: string): never => {
    throw new CatalogError({
      code: CatalogErrorCode.InvalidTool,
      message: `${where}: ${problem}`,
    });
  };
  if (typeof entry !== 'object' || entry === null)
    invalid(`a tool entry must be an object, got ${JSON.stringify(entry)}.`);
  for (const key of ['name', 'target', 'tool', 'backend', 'profile'] as const)
    if (typeof entry[key] !== 'string' || entry[key] === '')
      invalid(
        `tool ${JSON.stringify(entry.name)} needs a non-empty string "${key}" (build entries with toolEntryFromMcpTool).`,
      );
  assertTargetName(entry.target, where);
  const qualified = multiplexedName(entry.target, entry.tool);
  if (entry.name !== qualified)
    invalid(
      `tool name "${entry.name}" must be "<target>_<tool>" = "${qualified}".`,
    );
  if (typeof entry.description !== 'string')
    invalid(`tool "${entry.name}" has a non-string "description".`);
  if (typeof entry.mutating !== 'boolean')
    invalid(`tool "${entry.name}" needs a boolean "mutating".`);
}

function assertUniqueNames(entries: readonly ToolEntry[], where: string): void {
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.name)) {
      throw new CatalogError({
        code: CatalogErrorCode.DuplicateTool,
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
  #built: Snapshot;
  /** The constructor's tools by target, until the catalog is first read. */
  #unbuilt: Map<string, ToolEntry[]> | undefined;
  readonly #collection = new Collection();
  readonly #tuning: SearchTuning;
  readonly #usage = new UsageStore();
  #queue: Promise<void> = Promise.resolve();

  /**
   * Creates a catalog holding `tools` (default: empty). Throws `DUPLICATE_TOOL` on repeated
   * names. `tuning` overrides scoring knobs (default {@link DEFAULT_TUNING}). The tools are
   * checked here and analyzed when the catalog is first read, so a server can answer its
   * client's first requests before a seed catalog is built.
   */
  constructor(
    options: {
      tools?: readonly ToolEntry[];
      tuning?: SearchTuningOverrides;
    } = {},
  ) {
    const tools = [...(options.tools ?? [])];
    tools.forEach((entry, position) =>
      validateEntry(entry, `tools[${position}]`),
    );
    assertUniqueNames(tools, 'new ToolCatalog');
    const problem =
      options.tuning === undefined
        ? undefined
        : checkTuningOverrides(options.tuning);
    if (problem !== undefined) {
      throw invalidArgument(`new ToolCatalog: ${problem}`);
    }
    this.#tuning = resolveTuning(options.tuning);
    this.#built = buildSnapshot({
      segments: [],
      collection: this.#collection,
      tuning: this.#tuning,
    });
    const byTarget = new Map<string, ToolEntry[]>();
    for (const entry of tools) {
      const list = byTarget.get(entry.target);
      if (list) list.push(entry);
      else byTarget.set(entry.target, [entry]);
    }
    this.#unbuilt = byTarget;
  }

  /** The current snapshot (the constructor's tools indexed first). */
  get #snapshot(): Snapshot {
    this.#indexConstructorTools();
    return this.#built;
  }

  /** A catalog holding the 34 {@link SEED_TOOLS}. */
  static fromSeed(): ToolCatalog {
    return new ToolCatalog({ tools: SEED_TOOLS });
  }

  /** Number of tools in the catalog. */
  get size(): number {
    if (this.#unbuilt === undefined) return this.#snapshot.size;
    let size = 0;
    for (const tools of this.#unbuilt.values()) size += tools.length;
    return size;
  }

  /** All tools, in insertion order (a backend's tools stay together). */
  list(): readonly ToolEntry[] {
    return this.#snapshot.entries();
  }

  /** The tool with exactly this qualified name, if any. */
  get(name: string): ToolEntry | undefined {
    const snapshot = this.#snapshot;
    const position = snapshot.byName.get(name);
    return position === undefined ? undefined : snapshot.entryAt(position);
  }

  /** Replaces every tool of `target` with `tools` at once: {@link ToolCatalog.replaceBackends} of one target. */
  replaceBackend(target: string, tools: readonly ToolEntry[]): void {
    this.replaceBackends(new Map([[target, tools]]));
  }

  /**
   * Applies many backends' listings in one build: every target of `changes` gets exactly
   * its tools (new targets at the end, in the map's order). Every listing is checked first;
   * on any bad one nothing changes and a `CatalogError` names it. Tools already indexed (an
   * equal entry) are not analyzed again. Treat entries as immutable once added.
   */
  replaceBackends(changes: ReadonlyMap<string, readonly ToolEntry[]>): void {
    this.#apply(drain(this.#segmentsFor(this.#checkChanges(changes))));
  }

  /** Like {@link ToolCatalog.replaceBackend}, yielding while it works (see {@link ToolCatalog.replaceBackendsAsync}). */
  replaceBackendAsync(
    target: string,
    tools: readonly ToolEntry[],
  ): Promise<void> {
    return this.replaceBackendsAsync(new Map([[target, tools]]));
  }

  /**
   * Like {@link ToolCatalog.replaceBackends}, analyzing the new tools in slices between which
   * searches run; calls are applied in the order they were made.
   */
  async replaceBackendsAsync(
    changes: ReadonlyMap<string, readonly ToolEntry[]>,
  ): Promise<void> {
    const checked = this.#checkChanges(changes);
    return this.#enqueue(async () => {
      this.#apply(await drainAsync(this.#segmentsFor(checked), yieldToOthers));
    });
  }

  /** Indexes the constructor's tools, once, before anything reads or changes the catalog. */
  #indexConstructorTools(): void {
    const unbuilt = this.#unbuilt;
    if (unbuilt === undefined) return;
    this.#unbuilt = undefined;
    this.#apply(drain(this.#segmentsFor(unbuilt)));
  }

  /** Runs `run` once every call queued before it has settled. */
  #enqueue<T>(run: () => Promise<T>): Promise<T> {
    const job = this.#queue.then(run, run);
    this.#queue = job.then(settled, settled);
    return job;
  }

  /**
   * The saved form of the targets of `keys` (target -> the caller's key of its listing), as
   * the README's "Saving and restoring" describes: a JSON header, and bytes that `chunks()`
   * gives a piece of up to a megabyte at a time (write each out before asking for the next:
   * they share one buffer), yielding to searches at least every 10 ms of work. They are the
   * catalog's as it was when the call was made. Rejects with `INVALID_ARGUMENT` when `keys`
   * is not a Map of strings to strings.
   */
  async saveCatalogStream(
    keys: ReadonlyMap<string, string>,
  ): Promise<SavedCatalogStream> {
    const segments = this.#savedSegments(keys);
    const pause = pacer();
    const save = await drainAsync(
      planSavedCatalog({ segments, bag: this.#bagWeights() }),
      pause,
    );
    let started = false;
    return {
      header: save.header,
      byteLength: save.places.end,
      async *chunks() {
        if (started)
          throw invalidArgument(
            'saveCatalogStream: chunks() was already called; save the catalog again for another copy.',
          );
        started = true;
        const steps = savedCatalogChunks(save);
        for (let step = steps.next(); ; step = steps.next()) {
          if (step.done === true) return;
          if (step.value === undefined) await pause();
          else yield step.value;
        }
      },
    };
  }

  /** This catalog's segments of the targets of `keys`, in catalog order, each with its key (keys checked). */
  #savedSegments(
    keys: ReadonlyMap<string, string>,
  ): { segment: Segment; key: string }[] {
    const where = 'saveCatalogStream';
    if (!(keys instanceof Map))
      throw invalidArgument(
        `${where}: give a Map of target -> key (two strings).`,
      );
    for (const [target, key] of keys)
      if (typeof target !== 'string' || typeof key !== 'string')
        throw invalidArgument(
          `${where}: target ${JSON.stringify(target)} has key ${JSON.stringify(key)}; give a Map of target -> key (two strings).`,
        );
    const segments: { segment: Segment; key: string }[] = [];
    for (const segment of this.#snapshot.index.segments) {
      const key = keys.get(segment.target);
      if (key !== undefined) segments.push({ segment, key });
    }
    return segments;
  }

  /**
   * Restores the saved targets `keep` accepts, as {@link ToolCatalog.replaceBackends} would
   * apply their listings (see the README's "Saving and restoring"). The postings are views of
   * `saved.bytes`, which the catalog keeps: do not change them. Rejects with
   * `SAVED_CATALOG_VERSION` or `INVALID_SAVED_CATALOG`, with nothing changed.
   */
  async restoreCatalogAsync(
    saved: SavedCatalog,
    options: RestoreCatalogOptions = {},
  ): Promise<RestoreCatalogResult> {
    const where = 'restoreCatalogAsync';
    const read = readSavedCatalog(saved, where);
    if (
      typeof options !== 'object' ||
      options === null ||
      (options.keep !== undefined && typeof options.keep !== 'function')
    )
      throw invalidArgument(
        `${where}: options must be { keep?: (target, key, info) => boolean }.`,
      );
    const keep = options.keep ?? (() => true);
    return this.#enqueue(async () => {
      this.#indexConstructorTools();
      const pause = pacer();
      const decoded = await drainAsync(
        restoreSavedCatalog({ read, keep, where }),
        pause,
      );
      const restored =
        options.admit === undefined
          ? decoded
          : admitted(decoded, await options.admit);
      const segments = this.#restoredSegments(restored);
      await drainAsync(
        this.#collection.stageMany([...segments.values()]),
        pause,
      );
      this.#apply(segments, { frequencies: restored.frequencies });
      return { restored: [...segments.keys()], dropped: restored.dropped };
    });
  }

  /** The bag weights of this catalog's tuning, in field order. */
  #bagWeights(): number[] {
    return FIELD_NAMES.map((field) => this.#tuning.bag[field]);
  }

  /** The segments of restored targets: as saved, or built again from the saved terms under other weights. */
  #restoredSegments(restored: RestoredCatalog): Map<string, Segment> {
    const weights = this.#bagWeights();
    const asSaved = restored.bag.every(
      (weight, index) => weight === weights[index],
    );
    const segments = new Map<string, Segment>();
    for (const { target, tools, arrays } of restored.kept)
      segments.set(
        target,
        asSaved
          ? new Segment({ target, tools, arrays })
          : new Segment({ target, tools, tuning: this.#tuning }),
      );
    return segments;
  }

  #checkChanges(
    changes: ReadonlyMap<string, readonly ToolEntry[]>,
  ): Map<string, ToolEntry[]> {
    if (!(changes instanceof Map)) {
      throw invalidArgument(
        'replaceBackends: changes must be a Map of target -> tools.',
      );
    }
    const checked = new Map<string, ToolEntry[]>();
    for (const [target, tools] of changes) {
      assertTargetName(target);
      if (!Array.isArray(tools)) {
        throw invalidArgument(
          `replaceBackend("${target}"): tools must be an array.`,
        );
      }
      tools.forEach((entry, position) => {
        validateEntry(entry, `replaceBackend("${target}") tools[${position}]`);
        if (entry.target !== target) {
          throw new CatalogError({
            code: CatalogErrorCode.InvalidTool,
            message: `replaceBackend("${target}"): tool "${entry.name}" belongs to target "${entry.target}"; pass only tools of "${target}".`,
          });
        }
      });
      // Qualified names of different targets cannot collide (a target never contains "_").
      assertUniqueNames(tools, `replaceBackend("${target}")`);
      checked.set(target, [...tools]);
    }
    return checked;
  }

  /** The new segment of each changed target (none for an empty one), pausing every {@link PREPARE_SLICE} tools. */
  *#segmentsFor(
    changes: ReadonlyMap<string, readonly ToolEntry[]>,
  ): Generator<undefined, Map<string, Segment | undefined>> {
    const segments = new Map<string, Segment | undefined>();
    for (const [target, tools] of changes) {
      const previous = this.#snapshot.byTarget.get(target);
      const prepared: PreparedTool[] = [];
      for (const entry of tools) {
        const local = previous?.localByName(entry.name);
        prepared.push(
          prepareTool(
            entry,
            local === undefined ? undefined : previous?.tool(local),
          ),
        );
        if (prepared.length % PREPARE_SLICE === 0) yield;
      }
      segments.set(
        target,
        prepared.length === 0
          ? undefined
          : new Segment({ target, tools: prepared, tuning: this.#tuning }),
      );
      yield;
    }
    return segments;
  }

  /**
   * Swaps in the catalog with each changed target's segment replaced (new targets at the end;
   * `undefined` removes one): only the changed segments' statistics change.
   */
  #apply(
    changes: ReadonlyMap<string, Segment | undefined>,
    staged?: { frequencies: Int32Array },
  ): void {
    if (changes.size === 0) return;
    const collection = this.#collection;
    const added: Segment[] = [];
    for (const segment of changes.values())
      if (segment) {
        if (staged === undefined) collection.stage(segment);
        added.push(segment);
      }
    const next: Segment[] = [];
    for (const segment of this.#snapshot.index.segments) {
      if (!changes.has(segment.target)) {
        next.push(segment);
        continue;
      }
      collection.remove(segment);
      const replacement = changes.get(segment.target);
      if (replacement) next.push(replacement);
    }
    for (const [target, segment] of changes)
      if (segment && !this.#snapshot.byTarget.has(target)) next.push(segment);
    collection.commit(added, staged?.frequencies);
    this.#built = buildSnapshot({
      segments: next,
      collection,
      tuning: this.#tuning,
      previous: this.#snapshot,
    });
    this.#forgetGone(changes.keys());
    this.#warm();
  }

  /** Runs {@link IndexView.warm} a slice per turn of the event loop while the snapshot is current. */
  #warm(): void {
    const snapshot = this.#snapshot;
    const steps = snapshot.index.warm();
    const step = (): void => {
      if (this.#snapshot === snapshot && steps.next().done !== true)
        setImmediate(step);
    };
    setImmediate(step);
  }

  /** Removes every tool of `target` (no-op when it has none). */
  removeBackend(target: string): void {
    if (this.#snapshot.byTarget.has(target))
      this.#apply(new Map([[target, undefined]]));
    this.#forgetGone([target]);
  }

  /**
   * Ranked search. A query equal to a tool's exact name (qualified or bare) returns that tool
   * first. Results are narrowed to `profile` + `core` and to one `target` when given; the
   * list is cut where scores fall below a share of the best hit. With `vectors`, BM25 is
   * fused with vector similarity (hybrid ranking); exact names still come first.
   */
  search(options: {
    query: string;
    profile?: string;
    target?: string;
    limit?: number;
    vectors?: SearchVectors;
  }): SearchResult {
    const snapshot = this.#snapshot;
    if (
      typeof options !== 'object' ||
      options === null ||
      typeof options.query !== 'string'
    ) {
      throw invalidArgument('search: "query" must be a string.');
    }
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw invalidArgument(
        `search: "limit" must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got ${String(limit)}.`,
      );
    }
    const { profile, target } = options;
    for (const [key, value] of Object.entries({ profile, target }))
      if (value !== undefined && typeof value !== 'string')
        throw invalidArgument(`search: "${key}" must be a string when given.`);
    const query =
      options.query.length > MAX_QUERY_CHARS
        ? options.query.slice(0, MAX_QUERY_CHARS)
        : options.query;
    const run = {
      snapshot,
      query,
      profile,
      target,
      limit,
      tuning: this.#tuning,
      usage: this.#usage,
    };
    const { vectors } = options;
    return vectors === undefined
      ? runSearch(run)
      : runHybridSearch({
          ...run,
          vectors,
          fusion: checkSearchVectors(vectors),
        });
  }

  /**
   * The search terms of `query` (identifier splitting, stop words dropped, Porter2 stems): what
   * {@link ToolCatalog.recordUse} remembers, and what a caller should store, not the raw text.
   *
   * @example
   * ```ts
   * catalog.searchTerms('Install the APK on my phone'); // ['instal', 'apk', 'phone']
   * ```
   */
  searchTerms(query: string): string[] {
    if (typeof query !== 'string') {
      throw invalidArgument('searchTerms: "query" must be a string.');
    }
    return analyzeQuery(query.slice(0, MAX_QUERY_CHARS)).flatMap(
      (word) => word.terms,
    );
  }

  /**
   * Learns from one use: `tool` (a qualified name) was called after a search for `query`
   * (or its `terms`, see {@link ToolCatalog.searchTerms}). The request's terms become a
   * field of their own, weighted by `usageWeight` (see the README's "Learning from use" for
   * the caps). The tool need not be in the catalog yet; replacing or removing its backend
   * forgets the evidence of tools that are gone.
   *
   * @throws CatalogError `INVALID_USAGE` when `tool` is not a qualified `<target>_<tool>`
   * name or the query/terms are malformed.
   */
  recordUse(
    use:
      | { query: string; tool: string }
      | { terms: readonly string[]; tool: string },
  ): void {
    const where = 'recordUse';
    if (typeof use !== 'object' || use === null) {
      throw invalidUsage(`${where}: give { query, tool } or { terms, tool }.`);
    }
    const terms =
      'query' in use && typeof use.query === 'string'
        ? this.searchTerms(use.query)
        : 'terms' in use
          ? use.terms
          : undefined;
    const record = checkUsageRecord({ tool: use.tool, terms }, where);
    if (record.terms.length > 0) this.#usage.add(record.tool, record.terms);
  }

  /** The learned usage, oldest first: what to save to restore it with {@link ToolCatalog.loadUsage}. */
  usage(): UsageRecord[] {
    return this.#usage.records();
  }

  /**
   * Replaces the learned usage with `records` (as {@link ToolCatalog.usage} gives them); on a
   * malformed one nothing changes and an `INVALID_USAGE` error names it.
   */
  loadUsage(records: Iterable<UsageRecord>): void {
    const checked = [...records].map((record, index) =>
      checkUsageRecord(record, `loadUsage record [${index}]`),
    );
    this.#usage.clear();
    for (const record of checked)
      if (record.terms.length > 0) this.#usage.add(record.tool, record.terms);
  }

  /** Forgets the usage of tools of `targets` that are no longer in the catalog. */
  #forgetGone(targets: Iterable<string>): void {
    const changed = new Set(targets);
    const byTarget = this.#snapshot.byTarget;
    this.#usage.forget((name) => {
      const split = name.indexOf('_');
      const target = name.slice(0, split);
      return (
        changed.has(target) &&
        byTarget.get(target)?.localByName(name) === undefined
      );
    });
  }
}

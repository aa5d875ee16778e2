/**
 * The rule that turns a search followed by a successful call into a use:
 *
 * - A `mcp_search_tools` request with search terms and at least one hit opens
 *   a window of the next {@link USE_WINDOW_CALLS} `mcp_call_tool` calls
 *   (successful or not) and at most {@link USE_WINDOW_MS} (10 minutes).
 * - A call inside the window of a tool among that search's hits, whose result
 *   is not `isError` (and was not refused by the broker), is a use: the
 *   search's terms and the tool's qualified name.
 * - A call of a tool that no open search listed, a failed call, or a call
 *   after the window records nothing. A failed call still counts toward the
 *   window, so a retry with fixed arguments right after it is learned.
 * - When several open searches listed the tool, only the most recent one is
 *   credited. One search can credit several different tools (a task that
 *   needs two tools), each once.
 * - At most {@link USE_MAX_OPEN_SEARCHES} searches are open; older ones close.
 *
 * Five calls cover the usual agent sequence (search, inspect, a call that
 * fails its argument check, the corrected call, a follow-up call) without
 * crediting a search for calls that belong to a later task.
 */

/** Calls after a search during which a successful call of one of its hits is learned. */
export const USE_WINDOW_CALLS = 5;
/** Time after a search during which its window stays open (10 minutes). */
export const USE_WINDOW_MS = 10 * 60_000;
/** Searches whose windows can be open at once. */
export const USE_MAX_OPEN_SEARCHES = 4;

/** A learned use: what to append to the usage file and give the catalog. */
export type RecordedUse = { terms: string[]; tool: string };

type OpenSearch = {
  terms: string[];
  hits: Set<string>;
  callsLeft: number;
  openedAt: number;
  credited: Set<string>;
};

/**
 * Applies the rule in this module's header to the broker's stream of searches
 * and calls. Not shared between processes; one per broker.
 *
 * @example
 * ```ts
 * const recorder = new UseRecorder();
 * recorder.searched({ terms: ['create', 'issue'], hits: ['github_create_issue'] });
 * const use = recorder.called({ tool: 'github_create_issue', isError: false });
 * if (use) void usage.append(use);
 * ```
 */
export class UseRecorder {
  readonly #windowCalls: number;
  readonly #windowMs: number;
  readonly #maxOpen: number;
  readonly #now: () => number;
  #open: OpenSearch[] = [];

  constructor(
    options: {
      /** Default {@link USE_WINDOW_CALLS}. */
      windowCalls?: number;
      /** Default {@link USE_WINDOW_MS}. */
      windowMs?: number;
      /** Default {@link USE_MAX_OPEN_SEARCHES}. */
      maxOpenSearches?: number;
      /** Clock in milliseconds (tests). */
      now?: () => number;
    } = {},
  ) {
    this.#windowCalls = Math.max(1, options.windowCalls ?? USE_WINDOW_CALLS);
    this.#windowMs = Math.max(1, options.windowMs ?? USE_WINDOW_MS);
    this.#maxOpen = Math.max(
      1,
      options.maxOpenSearches ?? USE_MAX_OPEN_SEARCHES,
    );
    this.#now = options.now ?? Date.now;
  }

  /**
   * Records an answered search: its terms (as the catalog tokenized the
   * query) and the qualified names of its hits. A search without terms (a
   * browse) or without hits opens no window.
   */
  searched(search: {
    terms: readonly string[];
    hits: readonly string[];
  }): void {
    const terms = search.terms.filter((term) => term !== '');
    if (terms.length === 0 || search.hits.length === 0) return;
    this.#open.push({
      terms,
      hits: new Set(search.hits),
      callsLeft: this.#windowCalls,
      openedAt: this.#now(),
      credited: new Set(),
    });
    if (this.#open.length > this.#maxOpen) {
      this.#open.splice(0, this.#open.length - this.#maxOpen);
    }
  }

  /**
   * Records a finished `mcp_call_tool` and returns the use it makes, if any.
   * `isError` is true for an `isError` result and for a call the broker
   * refused (role, arguments, pins, circuit).
   */
  called(call: { tool: string; isError: boolean }): RecordedUse | undefined {
    const now = this.#now();
    this.#open = this.#open.filter(
      (search) => now - search.openedAt <= this.#windowMs,
    );
    let use: RecordedUse | undefined;
    if (!call.isError) {
      for (let index = this.#open.length - 1; index >= 0; index -= 1) {
        const search = this.#open[index] as OpenSearch;
        if (!search.hits.has(call.tool)) continue;
        if (!search.credited.has(call.tool)) {
          search.credited.add(call.tool);
          use = { terms: [...search.terms], tool: call.tool };
        }
        break;
      }
    }
    for (const search of this.#open) search.callsLeft -= 1;
    this.#open = this.#open.filter((search) => search.callsLeft > 0);
    return use;
  }
}

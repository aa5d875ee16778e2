import type { UsageRecord } from '@heretek/catalog';

/**
 * The rule that turns a search followed by a successful call into a use. A search with terms
 * and hits opens a window of the next {@link USE_WINDOW_CALLS} calls (successful or not; a
 * failed call counts, so the corrected retry right after it is learned) and at most
 * {@link USE_WINDOW_MS}. A successful call of one of its hits inside the window is a use: the
 * search's terms and the tool's name. Only the most recent open search that listed the tool
 * is credited, each tool once per search; at most {@link USE_MAX_OPEN_SEARCHES} are open.
 * Five calls cover search, inspect, a refused call, the corrected one and a follow-up.
 */

/** Calls after a search during which a successful call of one of its hits is learned. */
const USE_WINDOW_CALLS = 5;
/** Time after a search during which its window stays open (10 minutes). */
const USE_WINDOW_MS = 10 * 60_000;
/** Searches whose windows can be open at once. */
const USE_MAX_OPEN_SEARCHES = 4;

type OpenSearch = {
  terms: string[];
  hits: Set<string>;
  callsLeft: number;
  openedAt: number;
  credited: Set<string>;
};

/** Applies the rule in this module's header to one broker's searches and calls. */
export class UseRecorder {
  #open: OpenSearch[] = [];

  /** An answered search: its catalog terms and its hits' names (a browse, without terms, opens no window). */
  searched(search: {
    terms: readonly string[];
    hits: readonly string[];
  }): void {
    const terms = search.terms.filter((term) => term !== '');
    if (terms.length === 0 || search.hits.length === 0) return;
    this.#open.push({
      terms,
      hits: new Set(search.hits),
      callsLeft: USE_WINDOW_CALLS,
      openedAt: Date.now(),
      credited: new Set(),
    });
    if (this.#open.length > USE_MAX_OPEN_SEARCHES)
      this.#open.splice(0, this.#open.length - USE_MAX_OPEN_SEARCHES);
  }

  /** A finished call (`isError` also for one the broker refused); returns the use it makes, if any. */
  called(call: { tool: string; isError: boolean }): UsageRecord | undefined {
    const now = Date.now();
    this.#open = this.#open.filter(
      (search) => now - search.openedAt <= USE_WINDOW_MS,
    );
    let use: UsageRecord | undefined;
    if (!call.isError)
      for (let index = this.#open.length - 1; index >= 0; index -= 1) {
        const search = this.#open[index] as OpenSearch;
        if (!search.hits.has(call.tool)) continue;
        if (!search.credited.has(call.tool)) {
          search.credited.add(call.tool);
          use = { terms: [...search.terms], tool: call.tool };
        }
        break;
      }
    for (const search of this.#open) search.callsLeft -= 1;
    this.#open = this.#open.filter((search) => search.callsLeft > 0);
    return use;
  }
}

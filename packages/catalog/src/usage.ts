import { splitMultiplexedName, TARGET_NAME_RULE } from '@heretek/internal';
import { invalidUsage } from './errors.js';

/** Most requests remembered per tool; the oldest is forgotten first. */
export const MAX_USES_PER_TOOL = 100;
/** Most requests remembered in one catalog; the oldest is forgotten first. */
export const MAX_USES = 20_000;
/** Most search terms kept of one request. */
export const MAX_TERMS_PER_USE = 64;

/** One learned use: the search terms of a request, and the tool called after it. */
export type UsageRecord = {
  /** Qualified name of the tool that was called. */
  tool: string;
  /** The request's search terms, as `ToolCatalog.searchTerms` gives them. */
  terms: string[];
};

type ToolUsage = {
  /** Remembered requests, oldest first. */
  requests: string[][];
  /** Term counts over the remembered requests. */
  counts: Map<string, number>;
};

/** The learned usage of one catalog: per tool, the terms of the requests after which it was called (capped). */
export class UsageStore {
  readonly #tools = new Map<string, ToolUsage>();
  /** term -> tool -> count, over every remembered request. */
  readonly #postings = new Map<string, Map<string, number>>();
  /** term -> number of remembered requests that contain it. */
  readonly #requestFrequency = new Map<string, number>();
  /** term -> the one string kept for it. */
  readonly #interned = new Map<string, string>();
  /** Tools in the order their requests were recorded (one entry per request). */
  #order: string[] = [];
  #orderStart = 0;
  #size = 0;
  #version = 0;
  /** term -> the version at which its posting last changed. */
  readonly #termVersions = new Map<string, number>();

  get size(): number {
    return this.#size;
  }

  get toolCount(): number {
    return this.#tools.size;
  }

  /** Remembers one request for `tool`, forgetting the oldest beyond the caps. */
  add(tool: string, terms: readonly string[]): void {
    // One string per distinct term, shared by every request that has it.
    const kept = terms
      .slice(0, MAX_TERMS_PER_USE)
      .map((term) => this.#interned.get(term) ?? term);
    let usage = this.#tools.get(tool);
    if (!usage) {
      usage = { requests: [], counts: new Map() };
      this.#tools.set(tool, usage);
    }
    usage.requests.push(kept);
    this.#apply(tool, usage, kept, 1);
    this.#order.push(tool);
    this.#size += 1;
    if (usage.requests.length > MAX_USES_PER_TOOL) this.#dropOldest(tool);
    while (this.#size > MAX_USES) {
      const oldest = this.#order[this.#orderStart];
      this.#orderStart += 1;
      if (oldest !== undefined && this.#tools.has(oldest))
        this.#dropOldest(oldest, false);
    }
    if (this.#orderStart > 4096 && this.#orderStart * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#orderStart);
      this.#orderStart = 0;
    }
  }

  #apply(
    tool: string,
    usage: ToolUsage,
    terms: readonly string[],
    sign: 1 | -1,
  ): void {
    this.#version += 1;
    for (const term of terms) {
      this.#termVersions.set(term, this.#version);
      const count = (usage.counts.get(term) ?? 0) + sign;
      if (count > 0) usage.counts.set(term, count);
      else usage.counts.delete(term);
      let posting = this.#postings.get(term);
      if (!posting) {
        posting = new Map();
        this.#postings.set(term, posting);
      }
      if (count > 0) posting.set(tool, count);
      else {
        posting.delete(tool);
        if (posting.size === 0) {
          this.#postings.delete(term);
          this.#termVersions.delete(term);
        }
      }
    }
    for (const term of new Set(terms)) {
      const frequency = (this.#requestFrequency.get(term) ?? 0) + sign;
      if (frequency > 0) {
        this.#requestFrequency.set(term, frequency);
        if (!this.#interned.has(term)) this.#interned.set(term, term);
      } else {
        this.#requestFrequency.delete(term);
        this.#interned.delete(term);
      }
    }
  }

  /** Forgets the oldest request of `tool` (`inOrder`: also drop it from the global order). */
  #dropOldest(tool: string, inOrder = true): void {
    const usage = this.#tools.get(tool);
    const oldest = usage?.requests.shift();
    if (!usage || !oldest) return;
    this.#apply(tool, usage, oldest, -1);
    this.#size -= 1;
    if (inOrder) {
      const at = this.#order.indexOf(tool, this.#orderStart);
      if (at >= 0) this.#order.splice(at, 1);
    }
    if (usage.requests.length === 0) this.#tools.delete(tool);
  }

  /** Forgets every request of the tools for which `drop` is true. */
  forget(drop: (tool: string) => boolean): void {
    const gone = [...this.#tools.keys()].filter(drop);
    if (gone.length === 0) return;
    const goneSet = new Set(gone);
    for (const tool of gone) {
      const usage = this.#tools.get(tool) as ToolUsage;
      for (const request of usage.requests)
        this.#apply(tool, usage, request, -1);
      this.#size -= usage.requests.length;
      this.#tools.delete(tool);
    }
    this.#order = this.#order
      .slice(this.#orderStart)
      .filter((tool) => !goneSet.has(tool));
    this.#orderStart = 0;
  }

  clear(): void {
    this.forget(() => true);
  }

  /** The version at which the posting of `term` last changed (0 when it has none). */
  termVersion(term: string): number {
    return this.#termVersions.get(term) ?? 0;
  }

  /** The tools whose requests contain `term`, with its count in each. */
  postings(term: string): ReadonlyMap<string, number> | undefined {
    return this.#postings.get(term);
  }

  requestFrequency(term: string): number {
    return this.#requestFrequency.get(term) ?? 0;
  }

  /** Every remembered request, oldest first overall, as records. */
  records(): UsageRecord[] {
    const seen = new Map<string, number>();
    const records: UsageRecord[] = [];
    for (let at = this.#orderStart; at < this.#order.length; at += 1) {
      const tool = this.#order[at] as string;
      const usage = this.#tools.get(tool);
      if (!usage) continue;
      const index = seen.get(tool) ?? 0;
      const terms = usage.requests[index];
      if (!terms) continue;
      seen.set(tool, index + 1);
      records.push({ tool, terms: [...terms] });
    }
    return records;
  }
}

/** Checks one usage record (from a file or a caller; its tool a qualified name) and returns a clean copy. */
export function checkUsageRecord(value: unknown, where: string): UsageRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidUsage(
      `${where}: a usage record must be an object {"tool","terms"}, got ${JSON.stringify(value)}.`,
    );
  }
  const record = value as Record<string, unknown>;
  if (typeof record.tool !== 'string' || record.tool === '') {
    throw invalidUsage(
      `${where}: "tool" must be a non-empty string (a qualified tool name).`,
    );
  }
  if (splitMultiplexedName(record.tool) === undefined)
    throw invalidUsage(
      `${where}: "${record.tool}" is not a qualified tool name <target>_<tool> (target: ${TARGET_NAME_RULE}).`,
    );
  if (
    !Array.isArray(record.terms) ||
    !record.terms.every((term) => typeof term === 'string')
  ) {
    throw invalidUsage(
      `${where}: "terms" must be an array of strings (the request's search terms).`,
    );
  }
  return { tool: record.tool, terms: [...(record.terms as string[])] };
}

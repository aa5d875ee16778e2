/**
 * The term dictionary of the process: every catalog and every prepared tool numbers terms
 * with it, so a tool's terms are kept as ids (4 bytes each) and a saved backend part maps
 * its own term table onto it once. Terms are never removed (a few bytes each).
 */
class TermDictionary {
  readonly #ids = new Map<string, number>();
  readonly #terms: string[] = [];
  /** Number of terms ever added. */
  get size(): number {
    return this.#terms.length;
  }
  /** Id of `term`, adding it when new. */
  intern(term: string): number {
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.#terms.length;
      this.#ids.set(term, id);
      this.#terms.push(term);
    }
    return id;
  }
  /** Id of `term`, or `undefined` when never added. */
  lookup(term: string): number | undefined {
    return this.#ids.get(term);
  }
  /** The term of an id. */
  term(id: number): string {
    return this.#terms[id] as string;
  }
}

/** The process's {@link TermDictionary}. */
export const TERMS = new TermDictionary();

const encoder = new TextEncoder();
const LONE_SURROGATE = /\p{Cs}/u;

/** FNV-1a over bytes `start` to `end`. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at += 1)
    hash = Math.imul(hash ^ (bytes[at] as number), 0x01000193);
  return hash;
}

/**
 * The term dictionary of the process: every catalog and every prepared tool numbers terms
 * with it, so a tool's terms are kept as ids (4 bytes each) and a saved backend part maps
 * its own term table onto it once. Terms are never removed (a few bytes each).
 *
 * Besides the map from strings, the dictionary keeps each term's UTF-8 bytes in an
 * open-addressing table, so a saved part's term table is mapped from its bytes without
 * making a string of each term (only terms new to the process are decoded).
 */
class TermDictionary {
  readonly #ids = new Map<string, number>();
  readonly #terms: string[] = [];
  /** UTF-8 bytes of every term, one after another: term `id` is `#starts[id]` to `#starts[id + 1]`. */
  #bytes = new Uint8Array(1 << 16);
  #starts = new Int32Array(1 << 12);
  /** Hash of each term's bytes. */
  #hashes = new Int32Array(1 << 12);
  /**
   * Open addressing over the hashes, two numbers a slot (one memory read finds both): the
   * hash and `id + 1` of the term in the slot (0 when empty).
   */
  #slots = new Int32Array(1 << 14);

  /** Number of terms ever added. */
  get size(): number {
    return this.#terms.length;
  }

  /** Id of `term`, adding it when new. */
  intern(term: string): number {
    const id = this.#ids.get(term);
    return id === undefined ? this.#add(term) : id;
  }

  /**
   * Id of the term whose UTF-8 bytes are `bytes[start]` to `bytes[end]`, adding it when new.
   * Bytes that are not valid UTF-8 stand for the string they decode to.
   */
  internBytes(bytes: Uint8Array, start: number, end: number): number {
    const hash = hashBytes(bytes, start, end);
    const length = end - start;
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const known = this.#bytes;
    const starts = this.#starts;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[2 * slot + 1] as number;
      if (stored === 0) break;
      if (slots[2 * slot] !== hash) continue;
      const id = stored - 1;
      const at = starts[id] as number;
      if ((starts[id + 1] as number) - at !== length) continue;
      let same = true;
      for (let index = 0; index < length && same; index += 1)
        same = known[at + index] === bytes[start + index];
      if (same) return id;
    }
    return this.intern(
      Buffer.from(bytes.buffer, bytes.byteOffset + start, length).toString(
        'utf8',
      ),
    );
  }

  /** Id of `term`, or `undefined` when never added. */
  lookup(term: string): number | undefined {
    return this.#ids.get(term);
  }

  /** The term of an id. */
  term(id: number): string {
    return this.#terms[id] as string;
  }

  #add(term: string): number {
    const id = this.#terms.length;
    this.#ids.set(term, id);
    this.#terms.push(term);
    if (id + 2 > this.#starts.length) {
      const starts = new Int32Array(this.#starts.length * 2);
      starts.set(this.#starts);
      this.#starts = starts;
      const hashes = new Int32Array(this.#hashes.length * 2);
      hashes.set(this.#hashes);
      this.#hashes = hashes;
    }
    const start = this.#starts[id] as number;
    if (start + term.length * 3 > this.#bytes.length) {
      const bytes = new Uint8Array(
        Math.max(2 * this.#bytes.length, start + term.length * 3),
      );
      bytes.set(this.#bytes.subarray(0, start));
      this.#bytes = bytes;
    }
    // A string with a lone surrogate is kept out of the byte table: its UTF-8 bytes (with a
    // replacement character) stand for another string.
    const written = LONE_SURROGATE.test(term)
      ? 0
      : encoder.encodeInto(term, this.#bytes.subarray(start)).written;
    this.#starts[id + 1] = start + written;
    this.#hashes[id] = hashBytes(this.#bytes, start, start + written);
    if (written === 0) return id;
    if (id + 1 > this.#slots.length >> 2) this.#rehash();
    else this.#place(id);
    return id;
  }

  /** Puts term `id` in the first free slot from its hash. */
  #place(id: number): void {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const hash = this.#hashes[id] as number;
    let slot = hash & mask;
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = id + 1;
  }

  /** Doubles the slots and places every term again. */
  #rehash(): void {
    this.#slots = new Int32Array(this.#slots.length * 2);
    for (let id = 0; id < this.#terms.length; id += 1)
      if ((this.#starts[id + 1] as number) > (this.#starts[id] as number))
        this.#place(id);
  }
}

/** The process's {@link TermDictionary}. */
export const TERMS = new TermDictionary();

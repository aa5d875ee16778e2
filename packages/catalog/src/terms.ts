const encoder = new TextEncoder();
const LONE_SURROGATE = /\p{Cs}/u;

/** FNV-1a over bytes `start` to `end`. */
export function hashBytes(
  bytes: Uint8Array,
  start: number,
  end: number,
): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at += 1)
    hash = Math.imul(hash ^ (bytes[at] as number), 0x01000193);
  return hash;
}

/** A copy of `array`, zeros after it, at least `length` long (doubling). */
export function grown(
  array: Int32Array,
  length: number,
): Int32Array<ArrayBuffer> {
  const copy = new Int32Array(Math.max(length, 2 * array.length));
  copy.set(array);
  return copy;
}

/**
 * Puts `value` (not 0) under `hash` in the first free slot from it of `slots`, an open
 * addressing table of two numbers a slot: the hash, and the value (0 when empty).
 */
export function placeInSlots(
  slots: Int32Array,
  hash: number,
  value: number,
): void {
  const mask = (slots.length >> 1) - 1;
  let slot = hash & mask;
  while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
  slots[2 * slot] = hash;
  slots[2 * slot + 1] = value;
}

/**
 * The term dictionary of the process: every catalog numbers terms with it, so a tool's terms
 * are ids and a saved catalog maps its term table onto it once. Terms are never removed.
 * Each term's UTF-8 bytes are also kept in an open-addressing table, so a saved catalog's
 * terms are mapped from their bytes; a term first met as ASCII bytes gets its string when
 * first asked for (a string the map lacks is looked for among the bytes).
 */
class TermDictionary {
  readonly #ids = new Map<string, number>();
  /** The string of each term, `undefined` until first asked for when the term came as bytes. */
  readonly #terms: (string | undefined)[] = [];
  /** Scratch room for the UTF-8 bytes of a string looked for among the bytes. */
  #scratch = new Uint8Array(256);
  /** UTF-8 bytes of every term, one after another: term `id` is `#starts[id]` to `#starts[id + 1]`. */
  #bytes = new Uint8Array(1 << 16);
  /** `#bytes` as a Buffer, to decode terms from. */
  #text = Buffer.from(this.#bytes.buffer);
  #starts = new Int32Array(1 << 12);
  /** Hash of each term's bytes. */
  #hashes = new Int32Array(1 << 12);
  /** Open addressing over the hashes, two numbers a slot (one read finds both): hash, `id + 1` (0: empty). */
  #slots = new Int32Array(1 << 14);

  get size(): number {
    return this.#terms.length;
  }

  intern(term: string): number {
    return this.lookup(term) ?? this.#add(term);
  }

  /** Id of the term of UTF-8 bytes `start` to `end` of `bytes` (invalid ones: the string they decode to), added when new. */
  internBytes(bytes: Uint8Array, start: number, end: number): number {
    const hash = hashBytes(bytes, start, end);
    const id = this.#find(bytes, start, end, hash);
    if (id !== undefined) return id;
    let ascii = true;
    for (let at = start; at < end && ascii; at += 1)
      ascii = (bytes[at] as number) < 0x80;
    if (ascii && end > start) return this.#addBytes(bytes, start, end, hash);
    return this.intern(
      Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString(
        'utf8',
      ),
    );
  }

  /** Id of the term whose UTF-8 bytes (of hash `hash`) are `bytes[start]` to `bytes[end]`, if known. */
  #find(
    bytes: Uint8Array,
    start: number,
    end: number,
    hash: number,
  ): number | undefined {
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
    return undefined;
  }

  /** Id of a term that came as bytes and is not in the map yet (then put there), if any. */
  #byString(term: string): number | undefined {
    if (this.#ids.size === this.#terms.length || LONE_SURROGATE.test(term))
      return undefined;
    if (this.#scratch.length < term.length * 3)
      this.#scratch = new Uint8Array(term.length * 3);
    const { written } = encoder.encodeInto(term, this.#scratch);
    const id = this.#find(
      this.#scratch,
      0,
      written,
      hashBytes(this.#scratch, 0, written),
    );
    if (id !== undefined) {
      this.#terms[id] = term;
      this.#ids.set(term, id);
    }
    return id;
  }

  /** Id of `term`, or `undefined` when never added. */
  lookup(term: string): number | undefined {
    return this.#ids.get(term) ?? this.#byString(term);
  }

  /** The term of an id. */
  term(id: number): string {
    const known = this.#terms[id];
    if (known !== undefined) return known;
    if (this.#text.buffer !== this.#bytes.buffer)
      this.#text = Buffer.from(this.#bytes.buffer);
    const term = this.#text.toString(
      'latin1',
      this.#starts[id] as number,
      this.#starts[id + 1] as number,
    );
    this.#terms[id] = term;
    this.#ids.set(term, id);
    return term;
  }

  /** Adds a term of ASCII bytes (of hash `hash`) without making its string. */
  #addBytes(
    bytes: Uint8Array,
    start: number,
    end: number,
    hash: number,
  ): number {
    const id = this.#terms.length;
    this.#terms.push(undefined);
    const at = this.#room(id, end - start);
    this.#bytes.set(bytes.subarray(start, end), at);
    this.#starts[id + 1] = at + end - start;
    this.#hashes[id] = hash;
    this.#placeNew(id);
    return id;
  }

  /** Makes room for `terms` more terms of `bytes` bytes at once (else a saved catalog's grows the tables often). */
  reserve(terms: number, bytes: number): void {
    const needed = this.#terms.length + terms;
    const used = this.#starts[this.#terms.length] as number;
    this.#grow(needed + 2, used, used + bytes);
    let slots = this.#slots.length;
    while (needed + 1 > slots >> 2) slots *= 2;
    if (slots > this.#slots.length) this.#rehash(slots);
  }

  /** Grows the tables for term `id` of at most `bytes` bytes; returns where its bytes go. */
  #room(id: number, bytes: number): number {
    const start = this.#starts[id] as number;
    this.#grow(id + 2, start, start + bytes);
    return start;
  }

  /** Grows the tables (by doubling) to hold `starts` term starts and `bytes` bytes, `used` of them in use. */
  #grow(starts: number, used: number, bytes: number): void {
    let length = this.#starts.length;
    while (starts > length) length *= 2;
    if (length > this.#starts.length) {
      this.#starts = grown(this.#starts, length);
      this.#hashes = grown(this.#hashes, length);
    }
    if (bytes > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.length, bytes));
      grown.set(this.#bytes.subarray(0, used));
      this.#bytes = grown;
    }
  }

  /** Places a new term `id`, rehashing when the slots are a quarter full. */
  #placeNew(id: number): void {
    if (id + 1 > this.#slots.length >> 2) this.#rehash();
    else this.#place(id);
  }

  #add(term: string): number {
    const id = this.#terms.length;
    this.#ids.set(term, id);
    this.#terms.push(term);
    const start = this.#room(id, term.length * 3);
    // A string with a lone surrogate is kept out of the byte table: its UTF-8 bytes (with a
    // replacement character) stand for another string.
    const written = LONE_SURROGATE.test(term)
      ? 0
      : encoder.encodeInto(term, this.#bytes.subarray(start)).written;
    this.#starts[id + 1] = start + written;
    this.#hashes[id] = hashBytes(this.#bytes, start, start + written);
    if (written === 0) return id;
    this.#placeNew(id);
    return id;
  }

  /** Puts term `id` in the first free slot from its hash. */
  #place(id: number): void {
    placeInSlots(this.#slots, this.#hashes[id] as number, id + 1);
  }

  /** Doubles the slots (or makes them `length`) and places every term again. */
  #rehash(length = this.#slots.length * 2): void {
    this.#slots = new Int32Array(length);
    for (let id = 0; id < this.#terms.length; id += 1)
      if ((this.#starts[id + 1] as number) > (this.#starts[id] as number))
        this.#place(id);
  }
}

/** The process's {@link TermDictionary}. */
export const TERMS = new TermDictionary();

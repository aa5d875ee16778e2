import type { NormalizedDefinition } from './definition-hash.js';
import type { PinsIndex } from './pins-file.js';
import {
  copyDigest,
  DIGEST_BYTES,
  hashText,
  writeHash,
} from './tool-hashes.js';

/**
 * What a pin keeps of its definition besides the hash: the three parts
 * hashed with the tool's name (a `PinEntry` or a `NormalizedDefinition`
 * serves as it is).
 */
export type PinBody = {
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
};

/** Slot flags. */
const PINNED = 1;
const CURRENT = 2;
const FIRST_SEEN = 4;
/**
 * The pin's line in the bytes of the file read ({@link PinTable.placeOf}) is
 * not yet checked against its hash.
 */
const UNCHECKED = 8;
/** The pin is in the pins file on disk as it is here. */
const IN_FILE = 16;

/**
 * Every tool the pin store knows, one slot each, kept flat: a hundred
 * thousand tools cost one map from name to slot, their definition hashes
 * as bytes (pinned and current), where each pin's line is in the pins file
 * read as numbers, and a reference to a definition only where one is kept. A
 * pin's definition is the current one's when both hashes are equal, so the
 * listing's object serves both; it is kept apart only when they differ, or
 * when it was read from the file.
 *
 * A table made from a pins file's index ({@link PinTable.fromIndex}) builds
 * its map the first time a tool is looked up by name, not before.
 */
export class PinTable {
  #slots = new Map<string, number>();
  #names: string[] = [];
  #flags = new Uint8Array(16);
  #pinned = new Uint8Array(16 * DIGEST_BYTES);
  #current = new Uint8Array(16 * DIGEST_BYTES);
  #starts = new Float64Array(16);
  #ends = new Float64Array(16);
  /** Definitions of pins kept apart from the current ones (see above). */
  #bodies: Array<PinBody | undefined> = [];
  #definitions: Array<NormalizedDefinition | undefined> = [];
  #pinnedCount = 0;
  /** An index whose slots are not made yet. */
  #index: PinsIndex | undefined;

  /**
   * The pins of a file's index, each with its hash and place in the file's
   * bytes, to be parsed and checked later (each one unchecked).
   */
  static fromIndex(index: PinsIndex): PinTable {
    const table = new PinTable();
    table.#index = index;
    table.#pinnedCount = index.names.length;
    return table;
  }

  /** Makes the slots of the index this table was made from, once. */
  #materialize(): void {
    const index = this.#index;
    if (index === undefined) return;
    this.#index = undefined;
    const count = index.names.length;
    this.#grow(count);
    this.#names = index.names;
    this.#pinned.set(index.digests.subarray(0, count * DIGEST_BYTES));
    this.#starts.set(index.starts);
    this.#ends.set(index.ends);
    this.#flags.fill(PINNED | UNCHECKED | IN_FILE, 0, count);
    const slots = this.#slots;
    for (let slot = 0; slot < count; slot += 1)
      slots.set(index.names[slot]!, slot);
  }

  #grow(count: number): void {
    if (count <= this.#flags.length) return;
    const size = Math.max(count, this.#flags.length * 2);
    const grown = <T extends Uint8Array | Float64Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    const digests = size * DIGEST_BYTES;
    this.#flags = grown(this.#flags, new Uint8Array(size));
    this.#pinned = grown(this.#pinned, new Uint8Array(digests));
    this.#current = grown(this.#current, new Uint8Array(digests));
    this.#starts = grown(this.#starts, new Float64Array(size));
    this.#ends = grown(this.#ends, new Float64Array(size));
  }

  get pinnedCount(): number {
    return this.#pinnedCount;
  }

  slotOf(name: string): number | undefined {
    this.#materialize();
    return this.#slots.get(name);
  }

  /** The tool's slot, made when it has none. */
  slot(name: string): number {
    this.#materialize();
    let slot = this.#slots.get(name);
    if (slot === undefined) {
      slot = this.#names.length;
      this.#grow(slot + 1);
      this.#names.push(name);
      this.#slots.set(name, slot);
    }
    return slot;
  }

  nameOf(slot: number): string {
    return this.#names[slot]!;
  }

  /** Every slot with a pin, in the order they were made. */
  *pinnedSlots(): Generator<number> {
    this.#materialize();
    const flags = this.#flags;
    for (let slot = 0; slot < this.#names.length; slot += 1)
      if ((flags[slot]! & PINNED) !== 0) yield slot;
  }

  /** Every slot with a current definition, in the order they were made. */
  *currentSlots(): Generator<number> {
    this.#materialize();
    const flags = this.#flags;
    for (let slot = 0; slot < this.#names.length; slot += 1)
      if ((flags[slot]! & CURRENT) !== 0) yield slot;
  }

  isPinned(slot: number): boolean {
    return (this.#flags[slot]! & PINNED) !== 0;
  }

  /** The pin's hash as `sha256:<hex>`. */
  pinnedHash(slot: number): string {
    return hashText(this.#pinned, slot * DIGEST_BYTES);
  }

  /** Whether the pin's hash is the 32 bytes at `offset` of `digest` (compared in place). */
  pinnedIs(slot: number, digest: Uint8Array, offset = 0): boolean {
    const pinned = this.#pinned;
    const at = slot * DIGEST_BYTES;
    for (let byte = 0; byte < DIGEST_BYTES; byte += 1)
      if (pinned[at + byte] !== digest[offset + byte]) return false;
    return true;
  }

  /** Whether the tool has a pin and a current definition of the same hash. */
  matchesPin(slot: number): boolean {
    return (
      (this.#flags[slot]! & (PINNED | CURRENT)) === (PINNED | CURRENT) &&
      this.pinnedIs(slot, this.#current, slot * DIGEST_BYTES)
    );
  }

  /**
   * Pins the tool: its hash (`sha256:<hex>`, or 32 bytes at `offset`) and
   * its definition when it is not the current one. The pin is not in the
   * file until {@link markInFile}.
   */
  pin(
    slot: number,
    hash: string | { digest: Uint8Array; offset: number },
    body: PinBody | undefined,
  ): void {
    const at = slot * DIGEST_BYTES;
    if (typeof hash === 'string') writeHash(hash, this.#pinned, at);
    else copyDigest(hash.digest, hash.offset, this.#pinned, at);
    if (!this.isPinned(slot)) this.#pinnedCount += 1;
    this.#flags[slot] = (this.#flags[slot]! & ~(UNCHECKED | IN_FILE)) | PINNED;
    this.#bodies[slot] = body;
  }

  /** Pins the tool as the current definition is (trust on first use, or accepted). */
  pinCurrent(slot: number): void {
    this.pin(
      slot,
      { digest: this.#current, offset: slot * DIGEST_BYTES },
      undefined,
    );
  }

  /** Copies the pin of `slot` in `from` (another table, its definition held) to `slot` here. */
  copyPin(slot: number, from: PinTable, fromSlot: number): void {
    this.pin(
      slot,
      { digest: from.#pinned, offset: fromSlot * DIGEST_BYTES },
      from.body(fromSlot),
    );
  }

  /**
   * The pinned definition: the one kept apart, else the current one when
   * the hashes are equal; `undefined` when neither (it is then in the file).
   */
  body(slot: number): PinBody | undefined {
    return (
      this.#bodies[slot] ??
      (this.matchesPin(slot) ? this.#definitions[slot] : undefined)
    );
  }

  /** Keeps (or drops, with `undefined`) the pin's definition apart from the current one. */
  keepBody(slot: number, body: PinBody | undefined): void {
    this.#bodies[slot] = body;
  }

  isUnchecked(slot: number): boolean {
    return (this.#flags[slot]! & UNCHECKED) !== 0;
  }

  markChecked(slot: number): void {
    this.#flags[slot]! &= ~UNCHECKED;
  }

  isInFile(slot: number): boolean {
    return (this.#flags[slot]! & IN_FILE) !== 0;
  }

  markInFile(slot: number): void {
    this.#flags[slot]! |= IN_FILE;
  }

  /** The pin's name, hash and line (bytes `start` to `end`) in the file read. */
  placeOf(slot: number) {
    const [start, end] = [this.#starts[slot]!, this.#ends[slot]!];
    return { name: this.nameOf(slot), hash: this.pinnedHash(slot), start, end };
  }

  hasCurrent(slot: number): boolean {
    return (this.#flags[slot]! & CURRENT) !== 0;
  }

  /** The current (last observed or restored) definition. */
  current(slot: number): NormalizedDefinition | undefined {
    return this.#definitions[slot];
  }

  /** The current definition's hash as `sha256:<hex>`. */
  currentHash(slot: number): string | undefined {
    return this.hasCurrent(slot)
      ? hashText(this.#current, slot * DIGEST_BYTES)
      : undefined;
  }

  /** Copies the current definition's 32-byte hash to `offset` of `to`. */
  copyCurrentHash(slot: number, to: Uint8Array, offset: number): void {
    copyDigest(this.#current, slot * DIGEST_BYTES, to, offset);
  }

  /**
   * Records the current definition and its hash (32 bytes, or the pin's
   * own with `'pinned'`). A pin that took its definition from the current
   * one keeps it apart first when the hash changes.
   */
  setCurrent(
    slot: number,
    definition: NormalizedDefinition,
    digest: Uint8Array | 'pinned',
  ): void {
    const at = slot * DIGEST_BYTES;
    if (this.#bodies[slot] === undefined && this.matchesPin(slot))
      this.#bodies[slot] = this.#definitions[slot];
    if (digest === 'pinned') copyDigest(this.#pinned, at, this.#current, at);
    else copyDigest(digest, 0, this.#current, at);
    this.#definitions[slot] = definition;
    this.#flags[slot]! |= CURRENT;
    // The current definition now serves as the pin's when the hashes are equal.
    if (this.matchesPin(slot) && !this.isUnchecked(slot))
      this.#bodies[slot] = undefined;
  }

  /** Copies the current definition of `slot` in `from` (another table), and whether it was first seen, to `slot` here. */
  copyCurrent(slot: number, from: PinTable, fromSlot: number): void {
    const definition = from.current(fromSlot);
    if (definition === undefined) return;
    this.setCurrent(
      slot,
      definition,
      from.#current.subarray(
        fromSlot * DIGEST_BYTES,
        (fromSlot + 1) * DIGEST_BYTES,
      ),
    );
    this.setFirstSeen(slot, from.isFirstSeen(fromSlot));
  }

  /** Forgets the current definition (the pin stays). */
  clearCurrent(slot: number): void {
    if (this.#bodies[slot] === undefined && this.matchesPin(slot))
      this.#bodies[slot] = this.#definitions[slot];
    this.#definitions[slot] = undefined;
    this.#flags[slot]! &= ~(CURRENT | FIRST_SEEN);
  }

  isFirstSeen(slot: number): boolean {
    return (this.#flags[slot]! & FIRST_SEEN) !== 0;
  }

  setFirstSeen(slot: number, seen: boolean): void {
    if (seen) this.#flags[slot]! |= FIRST_SEEN;
    else this.#flags[slot]! &= ~FIRST_SEEN;
  }
}

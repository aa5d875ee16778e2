import { Buffer } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { writeAll } from './state-file.js';

/** Where a pin's text is in the pins file copied from: bytes `start` to `end`. */
export type PinPlace = { start: number; end: number };

/** Bytes read from the old file and written to the new one at a time. */
const COPY_CHUNK = 1 << 20;
/** Small pieces (new entries, separators) gathered before one `writev`. */
const GATHER_PIECES = 512;
const GATHER_BYTES = 1 << 18;
/** Entries walked between two yields to other work when no write yields. */
const ENTRIES_PER_TURN = 5000;

const SEPARATOR = Buffer.from(',\n');
const QUOTE = 0x22;
const CLOSE = 0x7d;

const yieldToOthers = () =>
  new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The entries of a pins file written in order into `out`, copying each run
 * of entries unchanged since the file `source` (stamp `stamp`) from it in
 * chunks, and serializing the others: memory for a chunk and the new
 * entries, whatever the file's size. Resolves with where each entry went,
 * for {@link placeEntries} to record once the file is in place.
 */
export async function copyEntries(options: {
  out: FileHandle;
  /** The file copied from, when any entry's place is in it. */
  source?: FileHandle;
  /** Every entry's name, in the file's (sorted) order. */
  names: readonly string[];
  /**
   * Where the entry's text is in `source`, when it is there and unchanged
   * (the object may be reused for the next entry: it is read at once).
   */
  placeOf: (name: string) => PinPlace | undefined;
  /** The entry's text when it is not copied; `undefined` leaves it out. */
  serialize: (name: string) => Buffer | undefined;
  /** Bytes before the first entry. */
  head: Buffer;
  /** Bytes after the last entry. */
  tail: Buffer;
}): Promise<Placement> {
  const { out, source, names, placeOf, serialize } = options;
  const output = new Output(out, source);
  const placement = new Placement();
  output.push(options.head);
  let wrote = false;
  /** The run of copied entries not yet written: its bytes in `source`, its first entry. */
  let run: { from: number; to: number; first: number } | undefined;
  const flushRun = async (last: number) => {
    if (run === undefined) return;
    placement.run(run.first, last, output.length - run.from);
    await output.copy(run.from, run.to);
    run = undefined;
  };
  for (let index = 0; index < names.length; index += 1) {
    if (index % ENTRIES_PER_TURN === ENTRIES_PER_TURN - 1)
      await yieldToOthers();
    const name = names[index]!;
    const place = placeOf(name);
    if (place !== undefined && source !== undefined) {
      // Follows the run's last entry in the old file: the run grows.
      if (run !== undefined && place.start === run.to + SEPARATOR.length) {
        run.to = place.end;
        continue;
      }
      await flushRun(index - 1);
      if (wrote) output.push(SEPARATOR);
      wrote = true;
      run = { from: place.start, to: place.end, first: index };
      continue;
    }
    const text = serialize(name);
    if (text === undefined) continue;
    await flushRun(index - 1);
    if (wrote) output.push(SEPARATOR);
    wrote = true;
    placement.entry(index, output.length, output.length + text.length);
    output.push(text);
    await output.flushIfFull();
  }
  await flushRun(names.length - 1);
  output.push(options.tail);
  await output.flush();
  return placement;
}

/**
 * Where the entries went: runs of copied entries (by index in the names,
 * each moved by the same number of bytes) and serialized entries, as flat
 * lists of numbers (no object per entry).
 */
export class Placement {
  /** first, last, shift: per run of copied entries. */
  readonly runs: number[] = [];
  /** index, start, end: per serialized entry. */
  readonly entries: number[] = [];
  run(first: number, last: number, shift: number): void {
    this.runs.push(first, last, shift);
  }
  entry(index: number, start: number, end: number): void {
    this.entries.push(index, start, end);
  }
}

/**
 * Records each entry's new place in the file written: a copied entry is
 * moved by the bytes its run moved (`move`), a serialized one is placed
 * where it went (`place`).
 */
export function placeEntries(options: {
  placement: Placement;
  names: readonly string[];
  move: (name: string, shift: number) => void;
  place: (name: string, start: number, end: number) => void;
}): void {
  const { placement, names } = options;
  const { runs, entries } = placement;
  for (let at = 0; at < runs.length; at += 3) {
    const shift = runs[at + 2]!;
    for (let index = runs[at]!; index <= runs[at + 1]!; index += 1)
      options.move(names[index]!, shift);
  }
  for (let at = 0; at < entries.length; at += 3)
    options.place(names[entries[at]!]!, entries[at + 1]!, entries[at + 2]!);
}

/** The new file's bytes as they are produced: small pieces gathered, ranges of the old file copied. */
class Output {
  /** Bytes produced so far. */
  length = 0;
  readonly #out: FileHandle;
  readonly #source: FileHandle | undefined;
  #pieces: Uint8Array[] = [];
  #gathered = 0;
  #chunk: Buffer | undefined;
  constructor(out: FileHandle, source: FileHandle | undefined) {
    this.#out = out;
    this.#source = source;
  }
  push(bytes: Uint8Array): void {
    this.#pieces.push(bytes);
    this.#gathered += bytes.length;
    this.length += bytes.length;
  }
  async flushIfFull(): Promise<void> {
    if (this.#pieces.length >= GATHER_PIECES || this.#gathered >= GATHER_BYTES)
      await this.flush();
  }
  async flush(): Promise<void> {
    const pieces = this.#pieces;
    this.#pieces = [];
    this.#gathered = 0;
    await writeAll(this.#out, pieces);
  }
  /** Copies bytes `from` to `to` of the old file, a chunk at a time. */
  async copy(from: number, to: number): Promise<void> {
    await this.flush();
    const source = this.#source;
    if (source === undefined)
      throw new Error('no pins file to copy entries from');
    const chunk = (this.#chunk ??= Buffer.allocUnsafe(COPY_CHUNK));
    for (let at = from; at < to;) {
      const want = Math.min(chunk.length, to - at);
      const { bytesRead } = await source.read(chunk, 0, want, at);
      // The stamp says the file is the one the places were taken from; the
      // run must still start and end like entries.
      if (
        bytesRead === 0 ||
        (at === from && chunk[4] !== QUOTE) ||
        (at + bytesRead === to && chunk[bytesRead - 1] !== CLOSE)
      )
        throw new Error(
          `the pins file changed at bytes ${from}-${to} while it was copied; nothing was written`,
        );
      await writeAll(this.#out, [chunk.subarray(0, bytesRead)]);
      at += bytesRead;
    }
    this.length += to - from;
  }
}

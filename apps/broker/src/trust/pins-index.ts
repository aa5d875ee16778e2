import { Buffer } from 'node:buffer';
import { sha256Tag } from '@heretek/internal';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { EarlyReads } from './early-reads.js';
import { DIGEST_BYTES, HASH_PREFIX, writeHash } from './tool-hashes.js';

/**
 * Reading a pins file's index: where each pinned tool's entry is and its
 * hash, found without parsing the file. Kept apart from the pin store (no
 * schema library, no definition hashing) so that a worker thread can load it alone and
 * index a large file beside the rest of start-up.
 */

/** Version of the pins file format this module reads and writes. */
export const PINS_FILE_VERSION = 1;

/** The stamp of a file as read or written: inode, size and modification time. */
export function stampOf(stats: {
  mtimeMs: number;
  size: number;
  ino: number;
}): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/**
 * Where each pinned tool's text is in a pins file written in the layout of
 * {@link serializePinsFile} (every pins file this module writes), found
 * without parsing the file: an entry is a line `    "<name>": {` (indented
 * four spaces, which no line inside an entry is) through the line `    }`;
 * entries follow one another (`    },` then the next one's first line), and
 * an entry's hash is its line `      "hash": "sha256:…"` (indented six spaces,
 * as only the entry's own fields are). The file is searched for these lines
 * only (a native search each), not read line by line. `undefined` for any
 * other layout (the file is then parsed whole). What it finds is only an
 * index: each entry is parsed and checked against its hash later.
 */
export function indexPinsFile(
  bytes: Buffer,
  /** Takes each entry found, in order; false for a name given before, which stops the index. */
  add: (name: string, hash: string, start: number, end: number) => boolean,
): { readOnly: boolean } | undefined {
  const header =
    /^\{\n(?: {2}"readOnly": (true|false),\n)? {2}"tools": \{\n/.exec(
      bytes.toString('latin1', 0, 64),
    );
  if (header === null || !bytes.subarray(-FOOTER.length).equals(FOOTER))
    return undefined;
  // Where the footer starts: the last entry's "    }" ends there.
  const last = bytes.length - FOOTER.length;
  for (let start = header[0].length; ;) {
    const lineEnd = bytes.indexOf(NEWLINE, start);
    if (lineEnd === -1 || lineEnd > last || !indentedBy(bytes, start, 4))
      return undefined;
    const name = keyOf(bytes, start + 4, lineEnd);
    if (name === undefined) return undefined;
    const close = bytes.indexOf(NEXT_ENTRY, lineEnd);
    const more = close !== -1 && close < last;
    // Just after the entry's closing brace.
    const end = more ? close + CLOSING.length : last;
    // The last entry is followed by the footer alone: no entry starts in it.
    if (
      !more &&
      (!bytes.subarray(last - CLOSING.length, last).equals(CLOSING) ||
        bytes.subarray(lineEnd, last).includes(ENTRY_LINE))
    )
      return undefined;
    const hashLine = bytes.indexOf(HASH_LINE, lineEnd);
    const from = hashLine + HASH_LINE.length;
    if (hashLine === -1 || from + 72 > end || bytes[from + 71] !== QUOTE)
      return undefined;
    // "sha256:" and 64 characters: the check of each entry tells whether they are hex.
    if (HASH_PREFIX_BYTES.compare(bytes, from, from + HASH_PREFIX.length) !== 0)
      return undefined;
    if (!add(name, bytes.toString('latin1', from, from + 71), start, end))
      return undefined;
    if (!more) break;
    // The next entry's first line, after "    }," and its newline.
    start = close + CLOSING.length + 2;
  }
  return { readOnly: header[1] === 'true' };
}

/** One entry of a pins file found by {@link indexPinsFile}: its name, hash and byte range. */
export type IndexedEntry = {
  name: string;
  hash: string;
  start: number;
  end: number;
};

const FOOTER = Buffer.from(`\n  },\n  "version": ${PINS_FILE_VERSION}\n}\n`);
/** An entry's last line, from the newline before it. */
const CLOSING = Buffer.from('\n    }');
/** An entry's last line and the next one's first line up to its name. */
const NEXT_ENTRY = Buffer.from('\n    },\n    "');
const HASH_PREFIX_BYTES = Buffer.from(HASH_PREFIX);
/** An entry's first line up to its name, from the newline before it. */
const ENTRY_LINE = Buffer.from('\n    "');
/** An entry's hash line up to the hash, from the newline before it. */
const HASH_LINE = Buffer.from('\n      "hash": "');
const NEWLINE = 0x0a;
const SPACE = 0x20;
/** `"`, the first byte of an entry's name after its indentation. */
export const QUOTE = 0x22;
/** `}`, the last byte of an entry. */
export const CLOSE = 0x7d;

/** Whether the line at `at` starts with `count` spaces. */
function indentedBy(bytes: Buffer, at: number, count: number): boolean {
  for (let index = at; index < at + count; index += 1)
    if (bytes[index] !== SPACE) return false;
  return true;
}

/** The name of an entry's first line (`"<name>": {` from `from` to `to`), if it is one. */
function keyOf(bytes: Buffer, from: number, to: number): string | undefined {
  const text = bytes.toString('utf8', from, to);
  if (bytes[from] !== QUOTE || !text.endsWith('": {')) return undefined;
  // Without an escape, the name is the text between the quotes.
  if (!text.includes('\\')) {
    const name = text.slice(1, -4);
    return name.includes('"') ? undefined : name;
  }
  try {
    const name: unknown = JSON.parse(text.slice(0, -3));
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every entry {@link indexPinsFile} found, in file order, in a form a worker
 * thread hands over cheaply: the names, the hashes one after the other as
 * bytes (32 each: the hex digits of `sha256:<hex>` decoded; the check of
 * each entry compares its text with them), and each entry's byte range.
 */
export type PinsIndex = {
  readOnly: boolean;
  names: string[];
  digests: Uint8Array;
  starts: Float64Array;
  ends: Float64Array;
};

/** The pins file's bytes, stamp and digest, and its index when it is in the layout this module writes. */
export type ReadPins = {
  bytes: Buffer;
  stamp: string;
  /** {@link pinsDigest} of `bytes`. */
  digest: string;
  index: PinsIndex | undefined;
};

/**
 * The SHA-256 of a pins file's bytes (`sha256:<hex>`): the index cache
 * records it with the backends whose tools all matched those pins, and a
 * restart that reads the same bytes admits them without comparing each tool.
 */
export function pinsDigest(bytes: Uint8Array): string {
  return sha256Tag(bytes);
}

/** {@link indexPinsFile} of `bytes` as a {@link PinsIndex}; `undefined` for another layout or a name given twice. */
export function pinsIndexOf(bytes: Buffer): PinsIndex | undefined {
  const names: string[] = [];
  let digests = Buffer.alloc(1024 * DIGEST_BYTES);
  const starts: number[] = [];
  const ends: number[] = [];
  const seen = new Set<string>();
  const found = indexPinsFile(bytes, (name, hash, start, end) => {
    if (seen.has(name)) return false;
    seen.add(name);
    const at = names.length * DIGEST_BYTES;
    if (at + DIGEST_BYTES > digests.length) {
      const grown = Buffer.alloc(digests.length * 2);
      grown.set(digests);
      digests = grown;
    }
    // A hash that is not hex leaves zeros: the entry's check fails on it.
    writeHash(hash, digests, at);
    names.push(name);
    starts.push(start);
    ends.push(end);
    return true;
  });
  if (found === undefined) return undefined;
  return {
    readOnly: found.readOnly,
    names,
    // Its own ArrayBuffer, exactly this long: a worker transfers it.
    digests: new Uint8Array(digests.subarray(0, names.length * DIGEST_BYTES)),
    starts: Float64Array.from(starts),
    ends: Float64Array.from(ends),
  };
}

/**
 * {@link readPins} in one blocking read, for a worker thread (no round trip
 * through the thread pool per 512 KiB). Throws as `openSync` does.
 */
export function readPinsSync(file: string): ReadPins {
  const fd = openSync(file, 'r');
  try {
    const stamp = stampOf(fstatSync(fd));
    const bytes = readFileSync(fd);
    return {
      bytes,
      stamp,
      digest: pinsDigest(bytes),
      index: pinsIndexOf(bytes),
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the pins file (its stamp taken from the handle it is read through)
 * and indexes it. Rejects as `open` does (a missing file is `ENOENT`).
 */
export async function readPins(file: string): Promise<ReadPins> {
  const handle = await open(file, 'r');
  let bytes: Buffer;
  let stamp: string;
  try {
    stamp = stampOf(await handle.stat());
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  return { bytes, stamp, digest: pinsDigest(bytes), index: pinsIndexOf(bytes) };
}

/** What the worker of `pins-index-worker.ts` posts. */
type WorkerAnswer =
  | {
      ok: true;
      buffer: ArrayBuffer;
      stamp: string;
      digest: string;
      index: PinsIndex | undefined;
    }
  | { ok: false; code: string | undefined; message: string };

/**
 * {@link readPins} in a worker thread (the script at `worker`, the built
 * `pins-index-worker.js`), so that indexing a large file takes no time of
 * this thread beyond taking over the result. Rejects as {@link readPins}
 * does (with the error's `code`), or when the worker fails.
 */
export function readPinsInWorker(file: string, worker: URL): Promise<ReadPins> {
  return new Promise<ReadPins>((resolve, reject) => {
    const thread = new Worker(worker, { workerData: { file } });
    thread.once('message', (answer: WorkerAnswer) => {
      if (answer.ok)
        resolve({
          bytes: Buffer.from(answer.buffer),
          stamp: answer.stamp,
          digest: answer.digest,
          index: answer.index,
        });
      else
        reject(
          Object.assign(
            new Error(answer.message),
            answer.code === undefined ? {} : { code: answer.code },
          ),
        );
    });
    thread.once('error', reject);
    // After an answer this changes nothing.
    thread.once('exit', (code) =>
      reject(new Error(`the pins file's reader thread exited (${code})`)),
    );
  });
}

/** Pins files at least this large are read and indexed in a worker thread when one is given. */
export const WORKER_MIN_BYTES = 1 << 22;

/** Reads started before the broker's configuration was read. */
const earlyReads = new EarlyReads<ReadPins>();

/**
 * Starts {@link readPinsInWorker} of `file` now, for the store that opens
 * that file later ({@link takeEarlyRead}).
 */
export function readPinsEarly(file: string, worker: URL): void {
  earlyReads.start(file, readPinsInWorker(file, worker));
}

/** The read {@link readPinsEarly} started of `file` (an absolute path), once. */
export function takeEarlyRead(file: string): Promise<ReadPins> | undefined {
  return earlyReads.take(file);
}

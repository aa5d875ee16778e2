import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, stat, type FileHandle } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { z } from 'zod';
import { errorText } from '../error-text.js';
import { issueLines } from '../issue-text.js';
import {
  definitionDigest,
  definitionHash,
  describeChange,
  diffDefinitions,
  isChanged,
  normalizeDefinition,
  type DefinitionChange,
  type NormalizedDefinition,
  type ToolDefinition,
} from './definition-hash.js';
import {
  CLOSE,
  PINS_FILE_VERSION,
  indexPinsFile,
  QUOTE,
  readPins,
  readPinsInWorker,
  stampOf,
  takeEarlyRead,
  WORKER_MIN_BYTES,
  type IndexedEntry,
  type ReadPins,
} from './pins-index.js';
import { heretekStateDir } from './state-dir.js';
import {
  copyEntries,
  placeEntries,
  type PinPlace,
  type Placement,
} from './pins-copy.js';
import { fileIdOf, PinTable, type PinBody } from './pin-table.js';
import { isMissing, isRecord, writeFileAtomic } from './state-file.js';
import { DIGEST_BYTES, type ToolHashes } from './tool-hashes.js';
import { TrustError } from './trust-error.js';

export { PINS_FILE_VERSION, indexPinsFile };

/**
 * One pinned tool in the pins file: the definition hash and the definition it
 * was computed from (so a change can be shown).
 */
export type PinEntry = {
  /** {@link definitionHash} of the pinned definition. */
  hash: string;
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
};

/**
 * The pins file: `{ "version": 1, "readOnly"?: true, "tools": { "<qualified
 * name>": PinEntry } }`, written with sorted keys at every level and two-space
 * indentation so it diffs well under review. `readOnly: true` marks a reviewed
 * (committed) lock: the broker never pins into it on its own; only an explicit
 * `--pin` updates it.
 */
export type PinsFile = {
  version: typeof PINS_FILE_VERSION;
  readOnly?: boolean;
  tools: Record<string, PinEntry>;
};

/** Why a store does not write on its own. */
export type ReadOnlyReason =
  /** The caller asked for it. */
  | 'option'
  /** The file says `"readOnly": true`. */
  | 'file'
  /** The file exists and cannot be written. */
  | 'unwritable';

/** Where a tool stands against its pin. */
export type PinStatus =
  /** Matches its pin. */
  | { state: 'pinned' }
  /** First seen in this process and pinned now (trust on first use). */
  | { state: 'new' }
  /** Not in a read-only pins file: nobody has accepted it. */
  | { state: 'unpinned' }
  /** Differs from its pin. */
  | {
      state: 'changed';
      change: DefinitionChange;
      pinned: NormalizedDefinition;
    };

/** One tool accepted (or to be accepted) by {@link PinStore.accept}. */
export type AcceptedPin = {
  name: string;
  /** `new` for a tool without a pin, else what changed. */
  change: DefinitionChange | 'new';
  /** Lines for a person: what changed (see `describeChange`). */
  lines: string[];
};

/** What {@link PinStore.observe} found. */
export type ObserveResult = {
  /** Tools pinned now because they were seen for the first time. */
  pinned: string[];
  /** Tools whose definition differs from their pin. */
  changed: string[];
  /** Tools absent from a read-only pins file. */
  unpinned: string[];
  /** Why new pins could not be saved, when they could not (they are kept in memory). */
  writeError?: string;
};

/** `heretek/pins.json` under the state directory (see `heretekStateDir`). */
export function defaultPinsFilePath(
  options: { env?: NodeJS.ProcessEnv; home?: string } = {},
): string {
  return path.join(heretekStateDir(options), 'pins.json');
}

const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;
const HASH_TEXT = 'a string "sha256:<64 lowercase hex digits>"';

const pinEntrySchema = z.object(
  {
    hash: z
      .string({ error: HASH_TEXT })
      .regex(HASH_PATTERN, { error: HASH_TEXT }),
    description: z.string({ error: 'a string' }),
    inputSchema: z.unknown(),
    annotations: z.record(z.string(), z.unknown(), {
      error: 'an object',
    }),
  },
  {
    error:
      'an object with "hash", "description", "inputSchema" and "annotations"',
  },
);

const pinsFileSchema = z.object(
  {
    version: z.literal(PINS_FILE_VERSION, {
      error: `${PINS_FILE_VERSION} (the only pins file version)`,
    }),
    readOnly: z.boolean({ error: 'true or false' }).optional(),
    tools: z.record(z.string(), pinEntrySchema, {
      error: 'an object of pinned tools by qualified name',
    }),
  },
  { error: 'a JSON object' },
);

function invalidPinsFile(file: string, why: string): TrustError {
  return new TrustError({
    code: 'PINS_FILE_INVALID',
    message: `Pins file ${file}: ${why}. It was left untouched: fix or remove it (removing it re-pins every tool on first use), or point HERETEK_PINS_FILE elsewhere.`,
  });
}

function hashMismatch(name: string): string {
  return `entry "${name}": its hash does not match its definition (edited by hand?); restore the entry, or remove it and the tool is pinned again at its next listing`;
}

/** The entry as the pins file may hold it, checked against its own hash, or why not. */
function checkedEntry(name: string, entry: PinEntry): PinEntry | string {
  const pin: PinEntry = {
    hash: entry.hash,
    description: entry.description,
    inputSchema: entry.inputSchema,
    annotations: entry.annotations,
  };
  return definitionHash({ name, ...pin }) === pin.hash
    ? pin
    : hashMismatch(name);
}

function parsePinsFile(text: string, file: string): PinsFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalidPinsFile(file, `not JSON (${errorText(error)})`);
  }
  const parsed = pinsFileSchema.safeParse(data);
  if (!parsed.success) {
    throw invalidPinsFile(
      file,
      issueLines({
        issues: parsed.error.issues.slice(0, 5),
        input: data,
        root: 'the file',
      }).join('; '),
    );
  }
  const tools: Record<string, PinEntry> = {};
  for (const [name, entry] of Object.entries(parsed.data.tools)) {
    const pin = checkedEntry(name, entry);
    if (typeof pin === 'string') throw invalidPinsFile(file, pin);
    tools[name] = pin;
  }
  return {
    version: PINS_FILE_VERSION,
    ...(parsed.data.readOnly === true ? { readOnly: true } : {}),
    tools,
  };
}

/**
 * Parses one entry found by {@link indexPinsFile}: what the whole file's
 * parse would say of it, its hash the one the index read. The entry, or why
 * it cannot be trusted. Its definition is not hashed here: see
 * {@link checkedEntry}.
 */
function parseIndexedEntry(
  bytes: Buffer,
  indexed: IndexedEntry,
): PinEntry | string {
  let data: unknown;
  try {
    data = JSON.parse(
      `{${bytes.toString('utf8', indexed.start, indexed.end)}}`,
    );
  } catch (error) {
    return `entry "${indexed.name}" is not JSON (${errorText(error)})`;
  }
  const entry = isRecord(data) ? data[indexed.name] : undefined;
  const parsed = pinEntrySchema.safeParse(entry);
  if (!parsed.success || parsed.data.hash !== indexed.hash)
    return `entry "${indexed.name}" is not a pin entry`;
  return {
    hash: parsed.data.hash,
    description: parsed.data.description,
    inputSchema: parsed.data.inputSchema,
    annotations: parsed.data.annotations,
  };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

/** The pins file's text: sorted keys, two-space indentation, final newline. */
export function serializePinsFile(file: PinsFile): string {
  return `${JSON.stringify(sortKeys(file), null, 2)}\n`;
}

/** Pinned tools serialized or checked between two yields to other work. */
const ENTRIES_PER_SLICE = 500;

const yieldToOthers = () =>
  new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Where the text of a value two levels deep in `JSON.stringify([[value]],
 * null, 2)` starts (its first line indented by four spaces, like every
 * other) and how far from the end it stops.
 */
const NESTED_OPEN = '[\n  [\n    '.length;
const NESTED_CLOSE = '\n  ]\n]'.length;

/**
 * One entry's text in the pins file's layout: `    "<name>": {` through
 * `    }`. The value is serialized two levels deep, where `JSON.stringify`
 * indents it as the file does, and cut out of that text: no second string
 * rewritten line by line.
 */
function entryText(name: string, entry: PinEntry): string {
  const text = JSON.stringify([[sortKeys(entry)]], null, 2);
  return `    ${JSON.stringify(name)}: ${text.slice(NESTED_OPEN, text.length - NESTED_CLOSE)}`;
}

/** The parts of a pin entry kept in memory (its hash is kept as bytes). */
function bodyOf(entry: PinBody): PinBody {
  return {
    description: entry.description,
    inputSchema: entry.inputSchema,
    annotations: entry.annotations,
  };
}

/** The definition of `name` whose parts are `body`'s (a pin's, to compare or restore). */
function definitionOf(name: string, body: PinBody): NormalizedDefinition {
  return { name, ...bodyOf(body) };
}

/** A pin entry of `hash` and the parts of `body` (never anything else `body` holds). */
function entryWith(hash: string, body: PinBody): PinEntry {
  return { hash, ...bodyOf(body) };
}

/** The pins of a parsed pins file, each checked already. */
function tableOf(file: PinsFile): PinTable {
  const table = new PinTable();
  for (const [name, entry] of Object.entries(file.tools))
    table.pin(table.slot(name), entry.hash, bodyOf(entry));
  return table;
}

/** The pins file as read: its pins, its mark, its stamp, and the check of its entries. */
type LoadedPins = {
  pins: PinTable;
  readOnly: boolean;
  stamp: string | undefined;
  /** The file's bytes while entries are still to be checked. */
  bytes: Buffer | undefined;
  /** `pinsDigest` of the file's bytes (`undefined` without a file). */
  digest: string | undefined;
};

/**
 * Parses and checks one indexed pin's text in the file against its hash,
 * keeping the checked entry (unless the current definition, of the same
 * hash, serves as it); the problem's text when it fails. A pin already
 * checked, or not read from the file's index, passes.
 */
function checkIndexedPin(
  table: PinTable,
  slot: number,
  bytes: Buffer,
): string | undefined {
  if (!table.isUnchecked(slot)) return undefined;
  const name = table.nameOf(slot);
  const parsed = parseIndexedEntry(bytes, {
    name,
    hash: table.pinnedHash(slot),
    start: table.startOf(slot),
    end: table.endOf(slot),
  });
  const entry =
    typeof parsed === 'string' ? parsed : checkedEntry(name, parsed);
  if (typeof entry === 'string') return entry;
  table.markChecked(slot);
  table.keepBody(slot, table.matchesPin(slot) ? undefined : bodyOf(entry));
  return undefined;
}

/**
 * The pinned tool definitions (issue: rug pulls). A tool seen for the first
 * time is pinned (trust on first use) and written at once; a tool whose
 * definition differs from its pin is reported `changed` until a person
 * accepts it (`--pin [tool]` -> {@link PinStore.accept}).
 *
 * Writes are atomic (a temporary file in the same directory, then a rename)
 * and the file is created with mode 0600 in a 0700 directory. Before writing,
 * the file is read again and merged, so two brokers pinning different new
 * tools keep both (the first pin of a tool wins). In read-only mode
 * ({@link ReadOnlyReason}) nothing is written on its own.
 */
export class PinStore {
  /** The pins file. */
  readonly path: string;
  readonly #log: (line: string) => void;
  readonly #readOnlyOption: boolean;
  #readOnlyReason: ReadOnlyReason | undefined;
  #fileReadOnly = false;
  /** Every tool known: its pin, current definition and place in the file. */
  #pins = new PinTable();
  /** The file's bytes while some pins read from it are not parsed and checked yet. */
  #bytes: Buffer | undefined;
  /** The check of the pins read from the file: done, running, or to start when first asked for. */
  #verified: Promise<void> | (() => Promise<void>) = Promise.resolve();
  /** Why the whole file's check failed, once it has. */
  #failure: unknown;
  #stamp: string | undefined;
  #writing: Promise<unknown> = Promise.resolve();
  /** The queued (not yet started) write of new pins, which later ones join. */
  #queuedAdd: { names: string[]; run: Promise<void> } | undefined;
  /** How long the last write took and when it ended (`performance.now()`). */
  #lastWrite: { took: number; ended: number } | undefined;
  /** Ends the wait of a queued write for a quiet moment, while it waits. */
  #endWait: (() => void) | undefined;
  /** Set by {@link flush}: writes no longer wait. */
  #flushing = false;
  /** The pins' names in the file this store last wrote (its stamp), in order. */
  #fileNames: { stamp: string; names: string[] } | undefined;
  #warnedWrite = false;
  /** `pinsDigest` of the pins file of `stamp`, as read or read back. */
  #fileDigest: { stamp: string; digest: string } | undefined;

  private constructor(options: {
    path: string;
    readOnly: boolean;
    log: (line: string) => void;
  }) {
    this.path = options.path;
    this.#readOnlyOption = options.readOnly;
    this.#log = options.log;
  }

  /**
   * Reads the pins file (a missing file is an empty store). Throws
   * `TrustError` `PINS_FILE_INVALID` for a file it cannot trust; the file is
   * then never overwritten. With `verify: 'later'`, a file in the layout this
   * module writes is only indexed (each tool's name and hash, without parsing
   * the file) and the store opens at once; its entries are parsed and checked
   * in the background, and {@link verified} says how that ended.
   */
  static async open(options: {
    /** The pins file (e.g. {@link defaultPinsFilePath}). */
    path: string;
    /** Never write on its own (a committed lock). */
    readOnly?: boolean;
    /** When each entry is checked against its hash: before `open` resolves (default), or after. */
    verify?: 'now' | 'later';
    /** Diagnostic sink (stderr in the broker). */
    log?: (line: string) => void;
    /**
     * The built `pins-index-worker.js`: a large file is then read and
     * indexed in a worker thread, leaving this thread to other start-up work.
     */
    indexWorker?: URL;
  }): Promise<PinStore> {
    const store = new PinStore({
      path: path.resolve(options.path),
      readOnly: options.readOnly === true,
      log: options.log ?? (() => {}),
    });
    await store.#load(options.verify ?? 'now', options.indexWorker);
    return store;
  }

  /**
   * Resolves once every pin read from the file has been parsed and checked
   * against its hash; rejects with `TrustError` `PINS_FILE_INVALID` when one
   * cannot be trusted (the store then never writes). Already settled unless
   * opened with `verify: 'later'`, where the check starts when this is first
   * read (a write reads it too).
   */
  get verified(): Promise<void> {
    if (typeof this.#verified === 'function') {
      this.#verified = this.#verified();
      this.#verified.catch(() => {});
    }
    return this.#verified;
  }

  /**
   * Checks one pin against its hash now, unless that is done (a call relies
   * on it before the whole file's check may be over). Throws `TrustError`
   * `PINS_FILE_INVALID` when it cannot be trusted, or when the whole file's
   * check has failed.
   */
  checkPin(name: string): void {
    this.verified.catch((error: unknown) => {
      this.#failure ??= error;
    });
    if (this.#failure !== undefined) throw this.#failure;
    const bytes = this.#bytes;
    if (bytes === undefined) return;
    const slot = this.#pins.slotOf(name);
    if (
      slot === undefined ||
      !this.#pins.isPinned(slot) ||
      this.#pins.fileOf(slot) !== fileIdOf(this.#stamp)
    )
      return;
    const problem = checkIndexedPin(this.#pins, slot, bytes);
    if (problem !== undefined) throw invalidPinsFile(this.path, problem);
  }

  /**
   * Whether the pins file, as this store read it and unchanged since, has
   * `digest`: one an index cache recorded of a pins file that held exactly
   * the pins of a store whose entries were all checked (see
   * {@link fileDigest}). Byte for byte that file, its entries need no check
   * of their own: {@link verified} resolves at once, and each one is still
   * checked on its own when a call relies on it ({@link checkPin}). False for
   * any other digest, once this store has written, or once the check has
   * failed; the check then runs as usual.
   */
  knownDigest(digest: string): boolean {
    const known = this.#fileDigest;
    if (
      known === undefined ||
      known.digest !== digest ||
      known.stamp !== this.#stamp ||
      this.#failure !== undefined
    )
      return false;
    if (typeof this.#verified === 'function') {
      this.#verified = Promise.resolve();
      this.#log(
        `pins: ${this.path} is the file the index cache was written with; its entries are not checked again`,
      );
    }
    return true;
  }

  /**
   * The pins file's `pinsDigest` once every write asked for so far has
   * ended, when the file then holds exactly the pins in memory and its
   * entries have passed their check, with what `inspect` returns in the
   * same turn as that was confirmed (so that it describes those pins);
   * `undefined` when a write is waiting or failed, the check failed,
   * another process changed the file, or there is none. A file this store
   * wrote is read back to be hashed, a megabyte at a time.
   */
  async fileDigest<T>(
    inspect: () => T,
  ): Promise<{ digest: string; inspected: T } | undefined> {
    await this.#writing;
    try {
      await this.verified;
    } catch {
      return undefined;
    }
    const stamp = this.#stamp;
    if (stamp === undefined) return undefined;
    const digest = await this.#digestOf(stamp);
    if (
      digest === undefined ||
      this.#stamp !== stamp ||
      this.#queuedAdd !== undefined ||
      !this.#allInFile(stamp)
    )
      return undefined;
    this.#fileDigest = { stamp, digest };
    return { digest, inspected: inspect() };
  }

  /** Whether every pin in memory is in the file of `stamp` as it is there. */
  #allInFile(stamp: string): boolean {
    const file = fileIdOf(stamp);
    for (const slot of this.#pins.pinnedSlots())
      if (this.#pins.fileOf(slot) !== file) return false;
    return true;
  }

  /**
   * `pinsDigest` of the pins file when it is still the one of `stamp` (read
   * only when not known yet).
   */
  async #digestOf(stamp: string): Promise<string | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch {
      return undefined;
    }
    try {
      if (stampOf(await handle.stat()) !== stamp) return undefined;
      if (this.#fileDigest?.stamp === stamp) return this.#fileDigest.digest;
      const hash = createHash('sha256');
      const chunk = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        hash.update(chunk.subarray(0, bytesRead));
      }
      return `sha256:${hash.digest('hex')}`;
    } catch {
      return undefined;
    } finally {
      await handle.close();
    }
  }

  /** Why the store does not write on its own, or `undefined` when it does. */
  get readOnlyReason(): ReadOnlyReason | undefined {
    return this.#readOnlyReason;
  }

  /** How many tools have a pin (in the file, or in memory when it could not be saved). */
  get pinnedCount(): number {
    return this.#pins.pinnedCount;
  }

  /** True when nothing is written on its own. */
  get readOnly(): boolean {
    return this.#readOnlyReason !== undefined;
  }

  async #load(verify: 'now' | 'later', worker?: URL): Promise<void> {
    const loaded = await this.#read(worker);
    if (verify === 'now' && loaded.bytes !== undefined) {
      await this.#check(loaded, loaded.bytes);
      loaded.bytes = undefined;
    }
    // The current definitions (and first sightings) stay across a reload.
    const previous = this.#pins;
    for (const slot of previous.currentSlots())
      loaded.pins.copyCurrent(
        loaded.pins.slot(previous.nameOf(slot)),
        previous,
        slot,
      );
    this.#pins = loaded.pins;
    this.#failure = undefined;
    this.#fileReadOnly = loaded.readOnly;
    this.#stamp = loaded.stamp;
    this.#bytes = loaded.bytes;
    this.#fileDigest =
      loaded.stamp === undefined || loaded.digest === undefined
        ? undefined
        : { stamp: loaded.stamp, digest: loaded.digest };
    await this.#decideReadOnly(loaded.stamp !== undefined);
    const bytes = loaded.bytes;
    if (bytes === undefined) {
      this.#verified = Promise.resolve();
      return;
    }
    this.#verified = () =>
      this.#check(loaded, bytes).finally(() => {
        if (this.#bytes === bytes) this.#bytes = undefined;
      });
  }

  /**
   * Reads the file: indexed when it is in this module's layout (its entries
   * still to be checked, see {@link #check}), else parsed and checked whole.
   * With `worker` (the built `pins-index-worker.js`), a file of
   * {@link WORKER_MIN_BYTES} or more is read and indexed in a worker thread.
   */
  async #read(worker?: URL): Promise<LoadedPins> {
    let read: ReadPins;
    try {
      // A read started before the configuration was read, if any.
      const early = worker === undefined ? undefined : takeEarlyRead(this.path);
      read =
        early !== undefined
          ? await early
          : worker !== undefined &&
              (await stat(this.path)).size >= WORKER_MIN_BYTES
            ? await readPinsInWorker(this.path, worker)
            : await readPins(this.path);
    } catch (error) {
      if (!isMissing(error)) {
        throw new TrustError({
          code: 'PINS_FILE_INVALID',
          message: `Pins file ${this.path} cannot be read (${errorText(error)}). Fix its permissions or point HERETEK_PINS_FILE elsewhere.`,
          cause: error,
        });
      }
      return {
        pins: new PinTable(),
        readOnly: false,
        stamp: undefined,
        bytes: undefined,
        digest: undefined,
      };
    }
    const { bytes, stamp, digest, index } = read;
    if (index === undefined) {
      const file = parsePinsFile(bytes.toString('utf8'), this.path);
      return {
        pins: tableOf(file),
        readOnly: file.readOnly === true,
        stamp,
        bytes: undefined,
        digest,
      };
    }
    return {
      pins: PinTable.fromIndex(index, stamp),
      readOnly: index.readOnly,
      stamp,
      bytes,
      digest,
    };
  }

  /**
   * Parses and checks each indexed pin of `loaded` a slice at a time. An
   * entry that fails is judged by parsing the whole file, as a file in
   * another layout is: its error is thrown, or (a layout the index misread)
   * its pins replace the indexed ones.
   */
  async #check(loaded: LoadedPins, bytes: Buffer): Promise<void> {
    const table = loaded.pins;
    let index = 0;
    for (const slot of table.pinnedSlots()) {
      index += 1;
      if (index % ENTRIES_PER_SLICE === 0) await yieldToOthers();
      if (checkIndexedPin(table, slot, bytes) === undefined) continue;
      const file = parsePinsFile(bytes.toString('utf8'), this.path);
      const stale = fileIdOf(loaded.stamp);
      for (const other of table.pinnedSlots())
        if (
          table.fileOf(other) === stale &&
          !Object.hasOwn(file.tools, table.nameOf(other))
        )
          table.unpin(other);
      for (const [parsedName, parsedEntry] of Object.entries(file.tools))
        table.pin(
          table.slot(parsedName),
          parsedEntry.hash,
          bodyOf(parsedEntry),
        );
      return;
    }
  }

  /**
   * The pin's entry, parsing it from the file's bytes when not done yet (its
   * hash is checked by {@link verified}'s check, which calls wait for).
   */
  #entry(name: string): PinBody | undefined {
    const slot = this.#pins.slotOf(name);
    return slot === undefined ? undefined : this.#body(slot);
  }

  /** {@link #entry} of a slot. */
  #body(slot: number): PinBody | undefined {
    const table = this.#pins;
    if (!table.isPinned(slot)) return undefined;
    const body = table.body(slot);
    if (body !== undefined) return body;
    const bytes = this.#bytes;
    if (bytes === undefined || table.fileOf(slot) !== fileIdOf(this.#stamp))
      return undefined;
    const entry = parseIndexedEntry(bytes, {
      name: table.nameOf(slot),
      hash: table.pinnedHash(slot),
      start: table.startOf(slot),
      end: table.endOf(slot),
    });
    // An entry that fails is left to the check of the whole file to report.
    if (typeof entry === 'string') return undefined;
    // Still unchecked: the check parses it again from the file.
    const kept = bodyOf(entry);
    if (!table.isUnchecked(slot)) table.keepBody(slot, kept);
    return kept;
  }

  /** Whether the tool pinned in `slot` is `new`, `pinned`, `changed` or not pinned (without the change's details). */
  #stateOf(slot: number): PinStatus['state'] {
    const table = this.#pins;
    if (!table.isPinned(slot)) return 'unpinned';
    if (table.matchesPin(slot))
      return table.isFirstSeen(slot) ? 'new' : 'pinned';
    return 'changed';
  }

  async #decideReadOnly(exists: boolean): Promise<void> {
    if (this.#readOnlyOption) {
      this.#readOnlyReason = 'option';
    } else if (this.#fileReadOnly) {
      this.#readOnlyReason = 'file';
    } else if (exists) {
      try {
        await access(this.path, constants.W_OK);
        this.#readOnlyReason = undefined;
      } catch {
        this.#readOnlyReason = 'unwritable';
      }
    } else {
      this.#readOnlyReason = undefined;
    }
  }

  /**
   * Re-reads the file when another process changed it (e.g. `--pin` while
   * this broker runs), so an accepted change takes effect without a restart.
   * A file that became invalid is logged and the pins in memory are kept.
   */
  async refresh(): Promise<void> {
    let stamp: string | undefined;
    try {
      stamp = stampOf(await stat(this.path));
    } catch (error) {
      if (!isMissing(error)) return;
    }
    if (stamp === this.#stamp) return;
    try {
      await this.#load('now');
    } catch (error) {
      this.#log(`pins: keeping the pins in memory: ${errorText(error)}`);
    }
  }

  /**
   * Records the definitions a discovery listed (qualified names) and pins the
   * ones never seen before, unless the store is read-only. Call it with each
   * backend's listing, before its tools are served.
   */
  async observe(listing: Iterable<ToolDefinition>): Promise<ObserveResult> {
    const table = this.#pins;
    const slots: number[] = [];
    const fresh = new Set<number>();
    for (const definition of listing) {
      const normalized = normalizeDefinition(definition);
      const slot = table.slot(normalized.name);
      table.setCurrent(slot, normalized, definitionDigest(normalized));
      slots.push(slot);
      if (!table.isPinned(slot)) fresh.add(slot);
    }
    const result: ObserveResult = { pinned: [], changed: [], unpinned: [] };
    if (fresh.size > 0 && !this.readOnly) {
      const names: string[] = [];
      for (const slot of fresh) {
        table.pinCurrent(slot);
        table.setFirstSeen(slot, true);
        names.push(table.nameOf(slot));
      }
      try {
        await this.#write({ add: names });
      } catch (error) {
        result.writeError = (error as Error).message;
        if (!this.#warnedWrite) {
          this.#warnedWrite = true;
          this.#log(
            `pins: cannot save new pins to ${this.path} (${result.writeError}); they are kept for this run only`,
          );
        }
      }
    }
    for (const slot of slots) {
      // Forgotten meanwhile (its backend listed again without it).
      if (!table.hasCurrent(slot)) continue;
      const state = this.#stateOf(slot);
      const name = table.nameOf(slot);
      if (state === 'new' && fresh.has(slot)) result.pinned.push(name);
      if (state === 'changed') result.changed.push(name);
      if (state === 'unpinned') result.unpinned.push(name);
    }
    return result;
  }

  /**
   * Whether every tool of `hashes` has a pin and was pinned with the
   * definition hash given for it (compared a tool at a time, in order).
   */
  matches(hashes: ToolHashes): boolean {
    const table = this.#pins;
    const { names, digests } = hashes;
    for (let index = 0; index < names.length; index += 1) {
      const slot = table.slotOf(names[index]!);
      if (
        slot === undefined ||
        !table.isPinned(slot) ||
        !table.pinnedIs(slot, digests, index * DIGEST_BYTES)
      )
        return false;
    }
    return true;
  }

  /** The definition hash a tool was pinned with, if it has a pin. */
  pinnedHash(name: string): string | undefined {
    const slot = this.#pins.slotOf(name);
    return slot !== undefined && this.#pins.isPinned(slot)
      ? this.#pins.pinnedHash(slot)
      : undefined;
  }

  /** {@link definitionHash} of a tool's current (last observed or restored) definition. */
  currentHash(name: string): string | undefined {
    const slot = this.#pins.slotOf(name);
    return slot === undefined ? undefined : this.#pins.currentHash(slot);
  }

  /**
   * The current definition hashes of `names` (each must have one; others
   * are left out) as {@link ToolHashes}: bytes copied, no string made.
   */
  currentHashes(names: Iterable<string>): ToolHashes {
    const table = this.#pins;
    const slots: number[] = [];
    const kept: string[] = [];
    for (const name of names) {
      const slot = table.slotOf(name);
      if (slot === undefined || !table.hasCurrent(slot)) continue;
      slots.push(slot);
      kept.push(name);
    }
    const digests = new Uint8Array(slots.length * DIGEST_BYTES);
    for (const [index, slot] of slots.entries())
      table.copyCurrentHash(slot, digests, index * DIGEST_BYTES);
    return { names: kept, digests };
  }

  /**
   * Records tools served from the index cache, whose recorded definition
   * hash equals their pin's, as listed with their pinned definitions, until
   * their backend is listed again ({@link observe}). Returns the pinned
   * definitions (tools without a pin, or whose pin cannot be read, are
   * skipped).
   */
  restore(names: Iterable<string>): NormalizedDefinition[] {
    const table = this.#pins;
    const restored: NormalizedDefinition[] = [];
    for (const name of names) {
      const slot = table.slotOf(name);
      const pin = slot === undefined ? undefined : this.#body(slot);
      if (slot === undefined || pin === undefined) continue;
      const definition = definitionOf(table.nameOf(slot), pin);
      table.setCurrent(slot, definition, 'pinned');
      restored.push(definition);
    }
    return restored;
  }

  /**
   * Forgets the current definitions of tools a backend no longer lists (their
   * pins stay in the file, so a tool that comes back is compared again).
   */
  forget(names: Iterable<string>): void {
    for (const name of names) {
      const slot = this.#pins.slotOf(name);
      if (slot !== undefined) this.#pins.clearCurrent(slot);
    }
  }

  /** The tool's standing against its pin, or `undefined` for a tool never observed. */
  status(name: string): PinStatus | undefined {
    const table = this.#pins;
    const slot = table.slotOf(name);
    const current = slot === undefined ? undefined : table.current(slot);
    if (slot === undefined || current === undefined) return undefined;
    const state = this.#stateOf(slot);
    if (state !== 'changed') return { state };
    // A pin whose entry cannot be read shows as a pin of nothing (the check
    // of the whole file reports it).
    const pin = this.#body(slot) ?? {
      description: '',
      inputSchema: {},
      annotations: {},
    };
    const pinned = definitionOf(name, pin);
    const change = diffDefinitions(pinned, current);
    return { state: 'changed', change, pinned };
  }

  /** Lines showing how the tool differs from its pin (empty when it does not). */
  changeLines(name: string): string[] {
    const slot = this.#pins.slotOf(name);
    const current = slot === undefined ? undefined : this.#pins.current(slot);
    const pin = this.#entry(name);
    if (current === undefined || pin === undefined) return [];
    return describeChange(definitionOf(name, pin), current);
  }

  /** The names of the tools with a current definition. */
  #currentNames(): string[] {
    const names: string[] = [];
    for (const slot of this.#pins.currentSlots())
      names.push(this.#pins.nameOf(slot));
    return names;
  }
  /**
   * What {@link accept} would accept, without writing: every observed tool
   * that is changed or unpinned (or only `tool`). The CLI shows it first.
   */
  pending(options: { tool?: string } = {}): AcceptedPin[] {
    const names =
      options.tool === undefined ? this.#currentNames().sort() : [options.tool];
    const result: AcceptedPin[] = [];
    for (const name of names) {
      const status = this.status(name);
      if (status === undefined) {
        throw new TrustError({
          code: 'PIN_UNKNOWN_TOOL',
          message: `No tool named "${name}" was listed by the backends; check the name (the qualified <target>_<tool> name) and that its backend answered.`,
        });
      }
      if (status.state === 'unpinned') {
        result.push({
          name,
          change: 'new',
          lines: ['not pinned yet'],
        });
      } else if (status.state === 'changed' && isChanged(status.change)) {
        result.push({
          name,
          change: status.change,
          lines: this.changeLines(name),
        });
      }
    }
    return result;
  }

  /**
   * Accepts the current definitions (every observed tool, or only `tool`) as
   * the new pins, writes the file and returns what changed. Allowed on a file
   * marked `"readOnly": true` (this is how a committed lock is updated, and
   * the file stays marked); throws `PINS_READ_ONLY` when the store was opened
   * read-only or the file cannot be written, `PIN_UNKNOWN_TOOL` for a tool
   * never observed.
   */
  async accept(options: { tool?: string } = {}): Promise<AcceptedPin[]> {
    if (
      this.#readOnlyReason === 'option' ||
      this.#readOnlyReason === 'unwritable'
    ) {
      throw new TrustError({
        code: 'PINS_READ_ONLY',
        message: `Pins file ${this.path} is read-only (${this.#readOnlyReason === 'option' ? 'opened read-only' : 'not writable'}); nothing was accepted. Accept with a writable copy and commit it.`,
      });
    }
    const accepted = this.pending(options);
    const names =
      options.tool === undefined ? this.#currentNames() : [options.tool];
    const table = this.#pins;
    for (const name of names) {
      const slot = table.slotOf(name);
      if (slot === undefined) continue;
      if (table.hasCurrent(slot)) table.pinCurrent(slot);
      table.setFirstSeen(slot, false);
    }
    try {
      await this.#write({ replace: names });
    } catch (error) {
      throw new TrustError({
        code: 'PINS_WRITE_FAILED',
        message: `Pins file ${this.path} could not be written (${errorText(error)}); nothing was accepted on disk.`,
        cause: error,
      });
    }
    return accepted;
  }

  /**
   * Serializes writes; merges with the file on disk first. New pins that
   * arrive while a write runs join one queued write (a thousand backends
   * listed at once write the file a few times, not a thousand).
   */
  #write(change: { add?: string[]; replace?: string[] }): Promise<void> {
    const queued = this.#queuedAdd;
    if (change.replace === undefined && queued !== undefined) {
      queued.names.push(...(change.add ?? []));
      return queued.run;
    }
    const batch = { names: [...(change.add ?? [])], run: Promise.resolve() };
    const run = this.#writing.then(async () => {
      // New pins wait a while after the last write (longer after a longer
      // one), gathering the pins of the listings that arrive meanwhile into
      // one write: a discovery of a thousand backends writes a large file a
      // few times, not back to back. An accepted change is written at once.
      if (change.replace === undefined) await this.#quietAfterWrite();
      if (this.#queuedAdd === batch) this.#queuedAdd = undefined;
      return this.#writeNow(
        change.replace === undefined ? { add: batch.names } : change,
      );
    });
    batch.run = run;
    if (change.replace === undefined) this.#queuedAdd = batch;
    this.#writing = run.catch(() => {});
    return run;
  }

  /** Waits until the last write has been over for {@link WRITE_GAP_FACTOR} times its length (at most {@link MAX_WRITE_GAP_MS}). */
  async #quietAfterWrite(): Promise<void> {
    const last = this.#lastWrite;
    if (last === undefined || this.#flushing) return;
    const gap = Math.min(MAX_WRITE_GAP_MS, WRITE_GAP_FACTOR * last.took);
    const wait = last.ended + gap - performance.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#endWait = done;
    });
    this.#endWait = undefined;
  }

  /**
   * Writes the pins waiting for a quiet moment at once, and every later
   * one as it comes (on shutdown); resolves once every write asked for so
   * far has ended (never rejects: a failed write is reported to its
   * caller).
   */
  flush(): Promise<void> {
    this.#flushing = true;
    this.#endWait?.();
    return this.#writing.then(() => {});
  }

  /**
   * Writes the pins merged with the file on disk. A pin whose text is in the
   * file read (unchanged since, by its stamp) is copied from it; only new and
   * changed pins are serialized, so pinning one tool among a hundred
   * thousand costs a copy of the file, not its serialization. When the file
   * is the one this store last wrote or read, the unchanged entries are
   * copied from it in chunks (never read whole), and each one's place is
   * moved where it is.
   */
  async #writeNow(change: {
    add?: string[];
    replace?: string[];
  }): Promise<void> {
    // Never write over a file whose entries are still being checked, or failed.
    await this.verified;
    const started = performance.now();
    try {
      const ours = await this.#openOurs();
      if (ours !== undefined) {
        try {
          await this.#writeCopying(ours.handle, ours.stamp);
        } finally {
          await ours.handle.close();
        }
        return;
      }
      this.#fileNames = undefined;
      await this.#writeMerged(change);
    } finally {
      const ended = performance.now();
      this.#lastWrite = { took: ended - started, ended };
    }
  }

  /**
   * The pins file opened for reading when it is still the one this store
   * last wrote or read (same inode, size and modification time), with that
   * stamp; `undefined` otherwise.
   */
  async #openOurs(): Promise<
    { handle: FileHandle; stamp: string } | undefined
  > {
    const stamp = this.#stamp;
    if (stamp === undefined) return undefined;
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      if (stampOf(await handle.stat()) === stamp) return { handle, stamp };
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    return undefined;
  }

  /**
   * Every pin's name in the file's order (sorted): the names of the file
   * last written, merged with those of the pins not in it (new or accepted
   * since), so only those are sorted.
   */
  #sortedNames(stamp: string): string[] {
    const known = this.#fileNames;
    const table = this.#pins;
    const file = fileIdOf(stamp);
    const extra: string[] = [];
    for (const slot of table.pinnedSlots())
      if (known?.stamp !== stamp || table.fileOf(slot) !== file)
        extra.push(table.nameOf(slot));
    extra.sort();
    if (known?.stamp !== stamp) return extra;
    const { names } = known;
    const merged: string[] = [];
    let i = 0;
    let j = 0;
    while (i < names.length || j < extra.length) {
      const left = names[i];
      const right = extra[j];
      if (right === undefined || (left !== undefined && left < right)) {
        merged.push(left!);
        i += 1;
      } else {
        // An accepted pin is in both: once.
        if (left === right) i += 1;
        merged.push(right);
        j += 1;
      }
    }
    return merged;
  }

  /** Writes every pin in memory, copying the unchanged ones from `source`, the file stamped `stamp`. */
  async #writeCopying(source: FileHandle, stamp: string): Promise<void> {
    const names = this.#sortedNames(stamp);
    if (names.length === 0) {
      await this.#writeEmpty(this.#fileReadOnly);
      return;
    }
    const table = this.#pins;
    const from = fileIdOf(stamp);
    let placement: Placement | undefined;
    const stats = await writeFileAtomic(this.path, async (out) => {
      placement = await copyEntries({
        out,
        source,
        names,
        placeOf: placeIn(table, from),
        serialize: (name) => {
          const slot = table.slotOf(name);
          const body = slot === undefined ? undefined : this.#body(slot);
          return slot === undefined || body === undefined
            ? undefined
            : Buffer.from(
                entryText(name, entryWith(table.pinnedHash(slot), body)),
              );
        },
        head: fileHead(this.#fileReadOnly),
        tail: FILE_TAIL,
      });
    });
    const written = stampOf(stats);
    const to = fileIdOf(written);
    placeEntries({
      placement: placement!,
      names,
      move: (name, shift) => {
        const slot = table.slotOf(name);
        if (slot !== undefined) table.move(slot, from, to, shift);
      },
      place: (name, start, end) => {
        const slot = table.slotOf(name);
        if (slot !== undefined) table.place(slot, to, start, end);
      },
    });
    this.#stamp = written;
    this.#fileNames = { stamp: written, names };
  }

  /** Writes a pins file without pins. */
  async #writeEmpty(readOnly: boolean): Promise<void> {
    const stats = await writeFileAtomic(
      this.path,
      serializePinsFile({
        version: PINS_FILE_VERSION,
        ...(readOnly ? { readOnly: true } : {}),
        tools: {},
      }),
    );
    this.#stamp = stampOf(stats);
  }

  /**
   * Writes the pins merged with the file on disk as another process left it
   * (or without one): its pins, and this change's.
   */
  async #writeMerged(change: {
    add?: string[];
    replace?: string[];
  }): Promise<void> {
    const onDisk = await this.#readForMerge();
    const mine = this.#pins;
    const theirs = onDisk.pins;
    // Which table's pin of each tool is written: the file's, unless this
    // change pins the tool here (a tool another process pinned first keeps
    // its pin, taken here too).
    const tools = new Map<string, PinTable>();
    for (const slot of theirs.pinnedSlots())
      tools.set(theirs.nameOf(slot), theirs);
    for (const name of change.add ?? []) {
      const existing = theirs.slotOf(name);
      const slot = mine.slotOf(name);
      if (existing !== undefined && theirs.isPinned(existing) && !onDisk.ours) {
        // Another process pinned it first: its pin wins.
        const at = mine.slot(name);
        mine.copyPin(at, theirs, existing);
        mine.setFirstSeen(at, false);
        tools.set(name, mine);
        continue;
      }
      if (slot !== undefined && mine.isPinned(slot)) tools.set(name, mine);
    }
    for (const name of change.replace ?? []) {
      const slot = mine.slotOf(name);
      if (slot !== undefined && mine.isPinned(slot)) tools.set(name, mine);
    }
    for (const [name, table] of tools) {
      if (table === mine) continue;
      const slot = mine.slot(name);
      if (mine.isPinned(slot)) continue;
      mine.copyPin(slot, theirs, theirs.slotOf(name)!);
      tools.set(name, mine);
    }
    const names = [...tools.keys()].sort();
    if (names.length === 0) {
      await this.#writeEmpty(onDisk.readOnly);
      return;
    }
    // Written as it is serialized, a few hundred entries at a time: a
    // first write of a hundred thousand new pins never holds them all.
    let placement: Placement | undefined;
    const stats = await writeFileAtomic(this.path, async (out) => {
      placement = await copyEntries({
        out,
        names,
        placeOf: () => undefined,
        serialize: (name) => this.#entryBytes(name, tools.get(name)!, onDisk),
        head: fileHead(onDisk.readOnly),
        tail: FILE_TAIL,
      });
    });
    const stamp = stampOf(stats);
    const to = fileIdOf(stamp);
    placeEntries({
      placement: placement!,
      names,
      move: () => {},
      place: (name, start, end) => {
        const table = tools.get(name)!;
        const slot = table.slotOf(name);
        if (slot !== undefined) table.place(slot, to, start, end);
      },
    });
    this.#stamp = stamp;
  }

  /** A pin's text for a write: copied from the file read when it is there, else serialized. */
  #entryBytes(
    name: string,
    table: PinTable,
    onDisk: { bytes: Buffer | undefined; stamp: string | undefined },
  ): Buffer | undefined {
    const slot = table.slotOf(name);
    if (slot === undefined) return undefined;
    if (
      onDisk.bytes !== undefined &&
      onDisk.stamp !== undefined &&
      table.fileOf(slot) === fileIdOf(onDisk.stamp)
    ) {
      const text = onDisk.bytes.subarray(
        table.startOf(slot),
        table.endOf(slot),
      );
      // The stamp says the file is the one the range was taken from; the
      // range must still look like an entry.
      if (text[4] === QUOTE && text[text.length - 1] === CLOSE) return text;
    }
    const body = table === this.#pins ? this.#body(slot) : table.body(slot);
    return body === undefined
      ? undefined
      : Buffer.from(entryText(name, entryWith(table.pinnedHash(slot), body)));
  }

  /**
   * The pins file as it is on disk, for a write to merge with, and its
   * bytes. When nobody changed it since this store last read or wrote it
   * (same inode, size and modification time), its pins are the ones in
   * memory (`ours`), and its entries are not checked again.
   */
  async #readForMerge(): Promise<{
    pins: PinTable;
    ours: boolean;
    readOnly: boolean;
    bytes: Buffer | undefined;
    stamp: string | undefined;
  }> {
    let stamp: string | undefined;
    try {
      stamp = stampOf(await stat(this.path));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    if (stamp === undefined)
      return {
        pins: new PinTable(),
        ours: false,
        readOnly: false,
        bytes: undefined,
        stamp,
      };
    if (stamp === this.#stamp) {
      const handle = await open(this.path, 'r');
      try {
        if (stampOf(await handle.stat()) === stamp)
          return {
            pins: this.#pins,
            ours: true,
            readOnly: this.#fileReadOnly,
            bytes: await handle.readFile(),
            stamp,
          };
      } finally {
        await handle.close();
      }
    }
    const loaded = await this.#read();
    if (loaded.bytes !== undefined) await this.#check(loaded, loaded.bytes);
    return { ...loaded, ours: false };
  }
}

/**
 * Where each tool's pin text is in the file `file` ({@link fileIdOf}), for
 * {@link copyEntries}: one object, filled for each tool asked about.
 */
function placeIn(
  table: PinTable,
  file: number,
): (name: string) => PinPlace | undefined {
  const place = { start: 0, end: 0 };
  return (name) => {
    const slot = table.slotOf(name);
    if (slot === undefined || table.fileOf(slot) !== file) return undefined;
    place.start = table.startOf(slot);
    place.end = table.endOf(slot);
    return place;
  };
}

/** The pins file's bytes before its first entry. */
const fileHead = (readOnly: boolean) =>
  Buffer.from(`{\n${readOnly ? '  "readOnly": true,\n' : ''}  "tools": {\n`);
/** The pins file's bytes after its last entry. */
const FILE_TAIL = Buffer.from(`\n  },\n  "version": ${PINS_FILE_VERSION}\n}\n`);
/** A write of new pins waits this many times the last write's length after it ... */
const WRITE_GAP_FACTOR = 2;
/** ... and at most this long. */
const MAX_WRITE_GAP_MS = 1000;

import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { errorText } from '../error-text.js';
import { issueLines } from '../issue-text.js';
import {
  definitionHash,
  describeChange,
  diffDefinitions,
  isChanged,
  normalizeDefinition,
  type DefinitionChange,
  type NormalizedDefinition,
  type ToolDefinition,
} from './definition-hash.js';
import { heretekStateDir } from './state-dir.js';
import {
  isMissing,
  isRecord,
  readStateFile,
  writeFileAtomic,
} from './state-file.js';
import { TrustError } from './trust-error.js';

/** Version of the pins file format this module reads and writes. */
export const PINS_FILE_VERSION = 1;

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

function parsePinsFile(text: string, file: string): PinsFile {
  const invalid = (why: string) =>
    new TrustError({
      code: 'PINS_FILE_INVALID',
      message: `Pins file ${file}: ${why}. It was left untouched: fix or remove it (removing it re-pins every tool on first use), or point HERETEK_PINS_FILE elsewhere.`,
    });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON (${errorText(error)})`);
  }
  const parsed = pinsFileSchema.safeParse(data);
  if (!parsed.success) {
    throw invalid(
      issueLines({
        issues: parsed.error.issues.slice(0, 5),
        input: data,
        root: 'the file',
      }).join('; '),
    );
  }
  const tools: Record<string, PinEntry> = {};
  for (const [name, entry] of Object.entries(parsed.data.tools)) {
    const pin: PinEntry = {
      hash: entry.hash,
      description: entry.description,
      inputSchema: entry.inputSchema,
      annotations: entry.annotations,
    };
    if (definitionHash({ name, ...pin }) !== pin.hash) {
      throw invalid(
        `entry "${name}": its hash does not match its definition (edited by hand?); restore the entry, or remove it and the tool is pinned again at its next listing`,
      );
    }
    tools[name] = pin;
  }
  return {
    version: PINS_FILE_VERSION,
    ...(parsed.data.readOnly === true ? { readOnly: true } : {}),
    tools,
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

/** Pinned tools serialized between two yields to other work. */
const ENTRIES_PER_SLICE = 500;

/** A name an object orders before the others (an array index): the sliced writer leaves such files to {@link serializePinsFile}. */
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * The same text as {@link serializePinsFile}, built a slice of tools at a
 * time (one `JSON.stringify` a slice) with a yield to other work between
 * slices, so writing the pins of a hundred thousand tools never holds the
 * event loop for long.
 */
export async function serializePinsFileAsync(file: PinsFile): Promise<string> {
  const parts: string[] = [];
  for await (const part of pinsFileText({
    ...(file.readOnly === undefined ? {} : { readOnly: file.readOnly }),
    tools: new Map(Object.entries(file.tools)),
  }))
    parts.push(part);
  return parts.join('');
}

/** The pins file's text in pieces (see {@link serializePinsFileAsync}), to write as they come. */
async function* pinsFileText(file: {
  readOnly?: boolean;
  tools: ReadonlyMap<string, PinEntry>;
}): AsyncGenerator<string> {
  const names = [...file.tools.keys()].sort();
  if (names.length === 0 || names.some((name) => ARRAY_INDEX.test(name))) {
    yield serializePinsFile({
      version: PINS_FILE_VERSION,
      ...(file.readOnly === undefined ? {} : { readOnly: file.readOnly }),
      tools: Object.fromEntries(file.tools),
    });
    return;
  }
  yield file.readOnly === undefined
    ? '{\n  "tools": {\n'
    : `{\n  "readOnly": ${JSON.stringify(file.readOnly)},\n  "tools": {\n`;
  // Each slice is written as `{ "tools": { ... } }` at the file's own
  // indentation; the wrapper's first and last lines are cut off.
  const head = '{\n  "tools": {\n'.length;
  const tail = '\n  }\n}'.length;
  for (let start = 0; start < names.length; start += ENTRIES_PER_SLICE) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const slice: Record<string, unknown> = {};
    for (const name of names.slice(start, start + ENTRIES_PER_SLICE))
      slice[name] = sortKeys(file.tools.get(name));
    const text = JSON.stringify({ tools: slice }, null, 2);
    yield `${text.slice(head, text.length - tail)}${start + ENTRIES_PER_SLICE < names.length ? ',\n' : '\n'}`;
  }
  yield `  },\n  "version": ${PINS_FILE_VERSION}\n}\n`;
}

/** The longest a write of new pins waits after the one before (see `PinStore.#spaced`). */
const MAX_WRITE_SPACING_MS = 3_000;

function entryOf(definition: NormalizedDefinition, hash?: string): PinEntry {
  return {
    hash: hash ?? definitionHash(definition),
    description: definition.description,
    inputSchema: definition.inputSchema,
    annotations: definition.annotations,
  };
}

function stampOf(stats: { mtimeMs: number; size: number; ino: number }) {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
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
  #pins = new Map<string, PinEntry>();
  #current = new Map<string, NormalizedDefinition>();
  /** {@link definitionHash} of each current definition, computed once per listing. */
  #currentHash = new Map<string, string>();
  /** Tools pinned by this process (for the `new` status). */
  #firstSeen = new Set<string>();
  #stamp: string | undefined;
  #writing: Promise<unknown> = Promise.resolve();
  /** The queued (not yet started) write of new pins, which later ones join. */
  #queuedAdd: { names: string[]; run: Promise<void> } | undefined;
  #warnedWrite = false;
  /** When the last write ended and how long it took (`performance.now()` ms). */
  #lastWrite = { end: 0, ms: 0 };

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
   * then never overwritten.
   */
  static async open(options: {
    /** The pins file (e.g. {@link defaultPinsFilePath}). */
    path: string;
    /** Never write on its own (a committed lock). */
    readOnly?: boolean;
    /** Diagnostic sink (stderr in the broker). */
    log?: (line: string) => void;
  }): Promise<PinStore> {
    const store = new PinStore({
      path: path.resolve(options.path),
      readOnly: options.readOnly === true,
      log: options.log ?? (() => {}),
    });
    await store.#load();
    return store;
  }

  /** Why the store does not write on its own, or `undefined` when it does. */
  get readOnlyReason(): ReadOnlyReason | undefined {
    return this.#readOnlyReason;
  }

  /** How many tools have a pin (in the file, or in memory when it could not be saved). */
  get pinnedCount(): number {
    return this.#pins.size;
  }

  /** True when nothing is written on its own. */
  get readOnly(): boolean {
    return this.#readOnlyReason !== undefined;
  }

  async #load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) {
        throw new TrustError({
          code: 'PINS_FILE_INVALID',
          message: `Pins file ${this.path} cannot be read (${errorText(error)}). Fix its permissions or point HERETEK_PINS_FILE elsewhere.`,
          cause: error,
        });
      }
      this.#pins = new Map();
      this.#fileReadOnly = false;
      this.#stamp = undefined;
      await this.#decideReadOnly(false);
      return;
    }
    const file = parsePinsFile(text, this.path);
    this.#pins = new Map(Object.entries(file.tools));
    this.#fileReadOnly = file.readOnly === true;
    this.#stamp = stampOf(await stat(this.path));
    await this.#decideReadOnly(true);
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
      await this.#load();
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
    const definitions = [...listing];
    const result: ObserveResult = { pinned: [], changed: [], unpinned: [] };
    const fresh = new Set<string>();
    for (const definition of definitions) {
      const normalized = normalizeDefinition(definition);
      const hash = definitionHash(normalized);
      this.#current.set(normalized.name, normalized);
      this.#currentHash.set(normalized.name, hash);
      const pin = this.#pins.get(normalized.name);
      if (pin === undefined) fresh.add(normalized.name);
      // The same definition (same hash): keep one copy of it, the listing's,
      // not a second one read from the file.
      else if (pin.hash === hash && pin.inputSchema !== normalized.inputSchema)
        this.#pins.set(normalized.name, entryOf(normalized, hash));
    }
    if (fresh.size > 0 && !this.readOnly) {
      for (const name of fresh) {
        const current = this.#current.get(name);
        if (current !== undefined) {
          this.#pins.set(name, entryOf(current, this.#currentHash.get(name)));
        }
        this.#firstSeen.add(name);
      }
      try {
        await this.#write({ add: [...fresh] });
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
    for (const definition of definitions) {
      const name = definition.name;
      const status = this.status(name);
      if (status === undefined) continue;
      if (status.state === 'new' && fresh.has(name)) {
        result.pinned.push(name);
      }
      if (status.state === 'changed') result.changed.push(name);
      if (status.state === 'unpinned') result.unpinned.push(name);
    }
    return result;
  }

  /** The definition hash a tool was pinned with, if it has a pin. */
  pinnedHash(name: string): string | undefined {
    return this.#pins.get(name)?.hash;
  }

  /** {@link definitionHash} of a tool's current (last observed or restored) definition. */
  currentHash(name: string): string | undefined {
    return this.#currentHash.get(name);
  }

  /**
   * Records tools served from the index cache, whose recorded definition
   * hash equals their pin's, as listed with their pinned definitions, until
   * their backend is listed again ({@link observe}). Returns the pinned
   * definitions (tools without a pin are skipped).
   */
  restore(names: Iterable<string>): NormalizedDefinition[] {
    const restored: NormalizedDefinition[] = [];
    for (const name of names) {
      const pin = this.#pins.get(name);
      if (pin === undefined) continue;
      const definition: NormalizedDefinition = {
        name,
        description: pin.description,
        inputSchema: pin.inputSchema,
        annotations: pin.annotations,
      };
      this.#current.set(name, definition);
      this.#currentHash.set(name, pin.hash);
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
      this.#current.delete(name);
      this.#currentHash.delete(name);
      this.#firstSeen.delete(name);
    }
  }

  /** The tool's standing against its pin, or `undefined` for a tool never observed. */
  status(name: string): PinStatus | undefined {
    const current = this.#current.get(name);
    if (current === undefined) return undefined;
    const pin = this.#pins.get(name);
    if (pin === undefined) return { state: 'unpinned' };
    const hash = this.#currentHash.get(name) ?? definitionHash(current);
    if (pin.hash === hash) {
      return this.#firstSeen.has(name) ? { state: 'new' } : { state: 'pinned' };
    }
    const pinned: NormalizedDefinition = { name, ...pin };
    const change = diffDefinitions(pinned, current);
    return { state: 'changed', change, pinned };
  }

  /** Lines showing how the tool differs from its pin (empty when it does not). */
  changeLines(name: string): string[] {
    const current = this.#current.get(name);
    const pin = this.#pins.get(name);
    if (current === undefined || pin === undefined) return [];
    return describeChange({ name, ...pin }, current);
  }

  /**
   * What {@link accept} would accept, without writing: every observed tool
   * that is changed or unpinned (or only `tool`). The CLI shows it first.
   */
  pending(options: { tool?: string } = {}): AcceptedPin[] {
    const names =
      options.tool === undefined
        ? [...this.#current.keys()].sort()
        : [options.tool];
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
      options.tool === undefined ? [...this.#current.keys()] : [options.tool];
    for (const name of names) {
      const current = this.#current.get(name);
      if (current !== undefined) {
        this.#pins.set(name, entryOf(current, this.#currentHash.get(name)));
      }
      this.#firstSeen.delete(name);
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
      if (change.replace === undefined) await this.#spaced();
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

  /**
   * Waits, before a write of new pins, until twice as long as the last
   * write took has passed since it ended (at most {@link MAX_WRITE_SPACING_MS}):
   * new pins that arrive meanwhile join the same write, so pinning a
   * hundred thousand tools writes a large file a few times, not back to
   * back, while a small file is written at once.
   */
  async #spaced(): Promise<void> {
    const wait = Math.min(
      this.#lastWrite.end + 2 * this.#lastWrite.ms - performance.now(),
      MAX_WRITE_SPACING_MS,
    );
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  async #writeNow(change: {
    add?: string[];
    replace?: string[];
  }): Promise<void> {
    const started = performance.now();
    try {
      await this.#writeMerged(change);
    } finally {
      const end = performance.now();
      this.#lastWrite = { end, ms: end - started };
    }
  }

  async #writeMerged(change: {
    add?: string[];
    replace?: string[];
  }): Promise<void> {
    const onDisk = await this.#readForMerge();
    // Nobody else changed the file: it holds the pins in memory, which are
    // written as they are.
    let tools: ReadonlyMap<string, PinEntry> = this.#pins;
    if (onDisk.tools !== undefined) {
      const merged = new Map(Object.entries(onDisk.tools));
      for (const name of change.add ?? []) {
        const existing = merged.get(name);
        if (existing !== undefined) {
          // Another process pinned it first: its pin wins.
          this.#pins.set(name, existing);
          this.#firstSeen.delete(name);
          continue;
        }
        const pin = this.#pins.get(name);
        if (pin !== undefined) merged.set(name, pin);
      }
      for (const name of change.replace ?? []) {
        const pin = this.#pins.get(name);
        if (pin !== undefined) merged.set(name, pin);
      }
      for (const [name, pin] of merged)
        if (!this.#pins.has(name)) this.#pins.set(name, pin);
      tools = merged;
    }
    await writeFileAtomic(
      this.path,
      pinsFileText({ ...(onDisk.readOnly ? { readOnly: true } : {}), tools }),
    );
    this.#stamp = stampOf(await stat(this.path));
  }

  /**
   * The pins file as it is on disk, for a write to merge with. When nobody
   * changed it since this store last read or wrote it (same inode, size and
   * modification time), that is the pins in memory: `tools` is then left
   * out, and the file is not read and checked again.
   */
  async #readForMerge(): Promise<{
    readOnly: boolean;
    tools?: Record<string, PinEntry>;
  }> {
    let stamp: string | undefined;
    try {
      stamp = stampOf(await stat(this.path));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    if (stamp !== undefined && stamp === this.#stamp)
      return { readOnly: this.#fileReadOnly };
    const text = await readStateFile(this.path);
    if (text === undefined) return { readOnly: false, tools: {} };
    const file = parsePinsFile(text, this.path);
    return { readOnly: file.readOnly === true, tools: file.tools };
  }
}

import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, stat, type FileHandle } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { errorText } from '../error-text.js';
import {
  definitionDigest,
  describeChange,
  diffDefinitions,
  isChanged,
  normalizeDefinition,
  type DefinitionChange,
  type NormalizedDefinition,
  type ToolDefinition,
} from './definition-hash.js';
import {
  checkPinLine,
  hashOfLine,
  headerLine,
  invalidPinsFile,
  nameOf,
  pinLine,
  pinTarget,
  readPinsFile,
  stampOf,
  type PinsFile,
  type ReadPins,
} from './pins-file.js';
import { PinTable, type PinBody } from './pin-table.js';
import { isMissing, writeAll, writeFileAtomic } from './state-file.js';
import { DIGEST_BYTES, type ToolHashes } from './tool-hashes.js';
import { TrustError } from './trust-error.js';

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
  /** First seen in this process on a backend not known before, and pinned now (trust on first use). */
  | { state: 'pinned-now' }
  /**
   * Listed by a backend that is known (the pins file pins some of its tools)
   * and not pinned: it appeared, or was renamed, after the backend was first
   * pinned. Held, not pinned, until a person accepts it (`--pin`).
   */
  | { state: 'new' }
  /** Not in a read-only pins file: nobody has accepted it. */
  | { state: 'unpinned' }
  /**
   * Called by a name its backend has not listed to this process, without a
   * pin, on a known backend or outside a read-only pins file: nobody has
   * accepted it (see {@link PinStore.unlisted}).
   */
  | { state: 'unlisted' }
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
  /** Tools pinned now because their backend was seen for the first time. */
  pinned: string[];
  /** Tools new on a known backend: held, not pinned, until accepted. */
  new: string[];
  /** Tools whose definition differs from their pin. */
  changed: string[];
  /** Tools absent from a read-only pins file. */
  unpinned: string[];
  /** Why new pins could not be saved, when they could not (they are kept in memory). */
  writeError?: string;
};

/** Pinned tools checked, or written, between two yields to other work. */
const ENTRIES_PER_SLICE = 500;

const yieldToOthers = () =>
  new Promise<void>((resolve) => setImmediate(resolve));

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

/** The pins of a file in the former layout, each checked already (none counts as in the file: each is written again). */
function tableOf(file: PinsFile): PinTable {
  const table = new PinTable();
  for (const [name, entry] of Object.entries(file.tools))
    table.pin(table.slot(name), entry.hash, bodyOf(entry));
  return table;
}

/**
 * Parses and checks one pin's line in the file read against its hash,
 * keeping the checked entry (unless the current definition, of the same
 * hash, serves as it); the problem's text when it fails. A pin already
 * checked, or not read from the file, passes.
 */
function checkLine(
  table: PinTable,
  slot: number,
  bytes: Buffer,
): string | undefined {
  if (!table.isUnchecked(slot)) return undefined;
  const entry = checkPinLine(bytes, table.placeOf(slot));
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
 * and the file is created with mode 0600 in a 0700 directory. A write copies
 * the lines of the file on disk and adds the pins not in it, so two brokers
 * pinning different new tools keep both (the first pin of a tool wins; an
 * accepted change replaces its line). A file another process changed is read
 * and checked again first: a file this store cannot trust is never written
 * over. In read-only mode ({@link ReadOnlyReason}) nothing is written on its
 * own.
 */
export class PinStore {
  readonly path: string;
  readonly #log: (line: string) => void;
  readonly #readOnlyOption: boolean;
  #readOnlyReason: ReadOnlyReason | undefined;
  #fileReadOnly = false;
  /** Every tool known: its pin, current definition and place in the file read. */
  #pins = new PinTable();
  /** The file's bytes as read, where the pins not parsed yet are. */
  #bytes: Buffer | undefined;
  /** The check of the pins read from the file: done, running, or to start when first asked for. */
  #verified: Promise<void> | (() => Promise<void>) = Promise.resolve();
  /** Why the whole file's check failed, once it has. */
  #failure: unknown;
  /** The stamp of the file on disk as this store last read or wrote it. */
  #stamp: string | undefined;
  #writing: Promise<unknown> = Promise.resolve();
  /** The queued (not yet started) write of new pins, which later ones join. */
  #queuedAdd: Promise<void> | undefined;
  /**
   * Tools accepted and not written yet: every write puts their pins over
   * the file's lines, so a write queued before the accept cannot put the
   * old pin back.
   */
  readonly #accepted = new Set<string>();
  /** How long the last write took and when it ended (`performance.now()`). */
  #lastWrite: { took: number; ended: number } | undefined;
  /** Ends the wait of a queued write for a quiet moment, while it waits. */
  #endWait: (() => void) | undefined;
  /** Set by {@link flush}: writes no longer wait. */
  #flushing = false;
  #warnedWrite = false;
  /** The file read is in the former layout: the next write writes every pin. */
  #formerLayout = false;
  /** SHA-256 of the pins file of {@link #stamp}, as read or written. */
  #digest: string | undefined;
  /** {@link #knownTargets}, made when first needed after each read of the file. */
  #targets: Set<string> | undefined;

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
   * then never overwritten. With `verify: 'later'`, each pin's name and hash
   * are read and the store opens at once; each pin's line is parsed and
   * checked in the background, and {@link verified} says how that ended. A
   * file in the former layout (one JSON document) is read whole, checked,
   * and written again in the current one unless the store is read-only.
   */
  static async open(options: {
    /** The pins file (`HERETEK_PINS_FILE`). */
    path: string;
    /** Never write on its own (a committed lock). */
    readOnly?: boolean | undefined;
    /** When each entry is checked against its hash: before `open` resolves (default), or after. */
    verify?: 'now' | 'later' | undefined;
    /** Diagnostic sink (stderr in the broker). */
    log?: (line: string) => void;
  }): Promise<PinStore> {
    const store = new PinStore({
      path: path.resolve(options.path),
      readOnly: options.readOnly === true,
      log: options.log ?? (() => {}),
    });
    await store.#load(options.verify ?? 'now');
    if (store.#formerLayout) await store.#migrate();
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
    const slot = this.#pins.slotOf(name);
    if (bytes === undefined || slot === undefined) return;
    const problem = checkLine(this.#pins, slot, bytes);
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
    if (this.#digest !== digest || this.#failure !== undefined) return false;
    if (typeof this.#verified === 'function') {
      this.#verified = Promise.resolve();
      this.#log(
        `pins: ${this.path} is the file the index cache was written with; its entries are not checked again`,
      );
    }
    return true;
  }

  /**
   * The pins file's SHA-256 once every write asked for so far has ended,
   * when the file then holds exactly the pins in memory and its entries
   * have passed their check, with what `inspect` returns in the same turn
   * as that was confirmed (so that it describes those pins); `undefined`
   * when a write is waiting or failed, the check failed, another process
   * changed the file, or there is none.
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
    let stamp: string;
    try {
      stamp = stampOf(await stat(this.path));
    } catch {
      return undefined;
    }
    // The stamp and digest change together, so the digest is this file's.
    const digest = this.#digest;
    if (
      digest === undefined ||
      stamp !== this.#stamp ||
      this.#queuedAdd !== undefined
    )
      return undefined;
    // Every pin in memory must be in the file on disk as it is here.
    for (const slot of this.#pins.pinnedSlots())
      if (!this.#pins.isInFile(slot)) return undefined;
    return { digest, inspected: inspect() };
  }

  get readOnlyReason(): ReadOnlyReason | undefined {
    return this.#readOnlyReason;
  }

  /** How many tools have a pin (in the file, or in memory when it could not be saved). */
  get pinnedCount(): number {
    return this.#pins.pinnedCount;
  }

  get readOnly(): boolean {
    return this.#readOnlyReason !== undefined;
  }

  async #load(verify: 'now' | 'later'): Promise<void> {
    const read = await this.#read();
    const index =
      read !== undefined && 'index' in read ? read.index : undefined;
    const former =
      read !== undefined && 'formerLayout' in read
        ? read.formerLayout
        : undefined;
    const pins =
      index !== undefined
        ? PinTable.fromIndex(index)
        : former !== undefined
          ? tableOf(former)
          : new PinTable();
    const bytes = index === undefined ? undefined : read?.bytes;
    if (verify === 'now' && bytes !== undefined) await this.#check(pins, bytes);
    // The current definitions (and first sightings) stay across a reload.
    const previous = this.#pins;
    for (const slot of previous.currentSlots())
      pins.copyCurrent(pins.slot(previous.nameOf(slot)), previous, slot);
    this.#pins = pins;
    this.#targets = undefined;
    this.#failure = undefined;
    this.#fileReadOnly = index?.readOnly ?? former?.readOnly === true;
    this.#stamp = read?.stamp;
    this.#bytes = bytes;
    this.#digest = read?.digest;
    await this.#decideReadOnly(read !== undefined);
    this.#formerLayout = former !== undefined;
    this.#verified =
      bytes === undefined || verify === 'now'
        ? Promise.resolve()
        : () => this.#check(pins, bytes);
  }

  /** Writes a file read in the former layout again in the current one, unless read-only. */
  async #migrate(): Promise<void> {
    if (this.readOnly) {
      this.#log(
        `pins: ${this.path} is in the former layout (one JSON document) and read-only here; it is read whole at each start until --pin writes it in the current one`,
      );
      return;
    }
    try {
      await this.#write('now');
      this.#log(
        `pins: ${this.path} was in the former layout (one JSON document); written again with one pin per line`,
      );
    } catch (error) {
      this.#log(
        `pins: ${this.path} is in the former layout and could not be written again (${errorText(error)}); it is read whole at each start`,
      );
    }
  }

  /** Reads the file (`undefined` when it is missing): each pin's name, hash and line, or, in the former layout, every pin parsed and checked. */
  async #read(): Promise<ReadPins | undefined> {
    try {
      return await readPinsFile(this.path);
    } catch (error) {
      if (TrustError.isInstance(error)) throw error;
      if (!isMissing(error)) {
        throw new TrustError({
          code: 'PINS_FILE_INVALID',
          message: `Pins file ${this.path} cannot be read (${errorText(error)}). Fix its permissions or point HERETEK_PINS_FILE elsewhere.`,
          cause: error,
        });
      }
      return undefined;
    }
  }

  /** Parses and checks each pin of `table` read from `bytes`, a slice at a time; throws for the first that fails. */
  async #check(table: PinTable, bytes: Buffer): Promise<void> {
    let index = 0;
    for (const slot of table.pinnedSlots()) {
      index += 1;
      if (index % ENTRIES_PER_SLICE === 0) await yieldToOthers();
      const problem = checkLine(table, slot, bytes);
      if (problem !== undefined) throw invalidPinsFile(this.path, problem);
    }
  }

  /**
   * The pin's entry, parsing and checking it from the file's bytes when not
   * done yet (an entry that fails is left to the check of the whole file to
   * report, which calls wait for).
   */
  #body(slot: number): PinBody | undefined {
    const table = this.#pins;
    if (!table.isPinned(slot)) return undefined;
    if (this.#bytes !== undefined) checkLine(table, slot, this.#bytes);
    return table.body(slot);
  }

  /**
   * Whether the tool in `slot` is `pinned`, `pinned-now`, `changed`, or
   * without a pin: `new` (held) in a store that writes, `unpinned` in a
   * read-only one (without the change's details).
   */
  #stateOf(slot: number): PinStatus['state'] {
    const table = this.#pins;
    if (!table.isPinned(slot)) return this.readOnly ? 'unpinned' : 'new';
    if (table.matchesPin(slot))
      return table.isFirstSeen(slot) ? 'pinned-now' : 'pinned';
    return 'changed';
  }

  /** The targets the pins (in the file, or made here) belong to: the known backends. */
  #knownTargets(): Set<string> {
    if (this.#targets === undefined) {
      const targets = new Set<string>();
      for (const slot of this.#pins.pinnedSlots())
        targets.add(pinTarget(this.#pins.nameOf(slot)));
      this.#targets = targets;
    }
    return this.#targets;
  }

  async #decideReadOnly(exists: boolean): Promise<void> {
    const unwritable = () =>
      access(this.path, constants.W_OK).then(
        () => false,
        () => true,
      );
    this.#readOnlyReason = this.#readOnlyOption
      ? 'option'
      : this.#fileReadOnly
        ? 'file'
        : exists && (await unwritable())
          ? 'unwritable'
          : undefined;
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
      return;
    }
    if (this.#formerLayout) await this.#migrate();
  }

  /**
   * Records the definitions a discovery listed (qualified names) and pins the
   * ones without a pin whose backend is not known yet (trust on first use of
   * a backend's first listing), unless the store is read-only; a tool without
   * a pin on a known backend is held as `new`. Call it with each backend's
   * listing, before its tools are served.
   */
  async observe(listing: Iterable<ToolDefinition>): Promise<ObserveResult> {
    const table = this.#pins;
    const known = this.#knownTargets();
    const slots: number[] = [];
    const fresh = new Set<number>();
    for (const definition of listing) {
      const normalized = normalizeDefinition(definition);
      const slot = table.slot(normalized.name);
      table.setCurrent(slot, normalized, definitionDigest(normalized));
      slots.push(slot);
      if (!table.isPinned(slot) && !known.has(pinTarget(normalized.name)))
        fresh.add(slot);
    }
    const result: ObserveResult = {
      pinned: [],
      new: [],
      changed: [],
      unpinned: [],
    };
    if (fresh.size > 0 && !this.readOnly) {
      for (const slot of fresh) {
        table.pinCurrent(slot);
        table.setFirstSeen(slot, true);
        known.add(pinTarget(table.nameOf(slot)));
      }
      try {
        await this.#write();
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
      if (state === 'pinned-now' && fresh.has(slot)) result.pinned.push(name);
      if (state === 'new') result.new.push(name);
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

  /**
   * For a name without a listed definition: `{ state: 'unlisted' }` when it
   * has no pin and belongs to a known backend, or the file is read-only (a
   * tool added after the listing, called before the broker lists it again);
   * `undefined` for a pinned tool or one of a backend never pinned.
   */
  unlisted(name: string): PinStatus | undefined {
    const slot = this.#pins.slotOf(name);
    if (slot !== undefined && this.#pins.isPinned(slot)) return undefined;
    return this.readOnly || this.#knownTargets().has(pinTarget(name))
      ? { state: 'unlisted' }
      : undefined;
  }

  /** Lines showing how the tool differs from its pin (empty when it does not). */
  changeLines(name: string): string[] {
    const slot = this.#pins.slotOf(name);
    const current = slot === undefined ? undefined : this.#pins.current(slot);
    const pin = slot === undefined ? undefined : this.#body(slot);
    if (current === undefined || pin === undefined) return [];
    return describeChange(definitionOf(name, pin), current);
  }

  /** Lines for a person about a tool held as new: why, and its definition. */
  #newLines(name: string): string[] {
    // Only asked of an observed tool: it has a slot and a current definition.
    const current = this.#pins.current(this.#pins.slotOf(name)!)!;
    return [
      `new on backend "${pinTarget(name)}", whose other tools were pinned before`,
      `description: ${JSON.stringify(current.description)}`,
      `input schema: ${JSON.stringify(current.inputSchema)}`,
      `annotations: ${JSON.stringify(current.annotations)}`,
    ];
  }

  /**
   * The observed tools an acceptance is about: `tool` alone, every tool of
   * `target`, or every observed tool.
   */
  #selected(options: { tool?: string; target?: string }): string[] {
    if (options.tool !== undefined) return [options.tool];
    const names: string[] = [];
    for (const slot of this.#pins.currentSlots()) {
      const name = this.#pins.nameOf(slot);
      if (options.target === undefined || pinTarget(name) === options.target)
        names.push(name);
    }
    return names.sort();
  }

  /**
   * What {@link accept} would accept, without writing: every observed tool
   * that is changed, new or unpinned (or only `tool`, or only the tools of
   * `target`). The CLI shows it first.
   */
  pending(options: { tool?: string; target?: string } = {}): AcceptedPin[] {
    const names = this.#selected(options);
    const result: AcceptedPin[] = [];
    for (const name of names) {
      const status = this.status(name);
      if (status === undefined) {
        throw new TrustError({
          code: 'PIN_UNKNOWN_TOOL',
          message: `No tool named "${name}" was listed by the backends; check the name (a qualified <target>_<tool> name, or a target to accept all of its tools) and that its backend answered.`,
        });
      }
      if (status.state === 'unpinned' || status.state === 'new') {
        result.push({
          name,
          change: 'new',
          lines:
            status.state === 'new' ? this.#newLines(name) : ['not pinned yet'],
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
  async accept(
    options: { tool?: string; target?: string } = {},
  ): Promise<AcceptedPin[]> {
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
    const names = this.#selected(options);
    const table = this.#pins;
    for (const name of names) {
      const slot = table.slotOf(name);
      if (slot === undefined) continue;
      // A pin that already matches stays as it is in the file.
      if (table.hasCurrent(slot) && !table.matchesPin(slot)) {
        table.pinCurrent(slot);
        this.#accepted.add(name);
        this.#targets?.add(pinTarget(name));
      }
      table.setFirstSeen(slot, false);
    }
    try {
      await this.#write('now');
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
  #write(when: 'now' | 'quiet' = 'quiet'): Promise<void> {
    const queued = this.#queuedAdd;
    if (when === 'quiet' && queued !== undefined) return queued;
    const run = this.#writing.then(async () => {
      // New pins wait a while after the last write (longer after a longer
      // one), gathering the pins of the listings that arrive meanwhile into
      // one write: a discovery of a thousand backends writes a large file a
      // few times, not back to back. An accepted change is written at once.
      if (when === 'quiet') await this.#quietAfterWrite();
      if (this.#queuedAdd === run) this.#queuedAdd = undefined;
      return this.#writeNow();
    });
    if (when === 'quiet') this.#queuedAdd = run;
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
      const timer = setTimeout(resolve, wait);
      this.#endWait = () => {
        clearTimeout(timer);
        resolve();
      };
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
   * Writes the pins: the lines of the file on disk, with the pins not in
   * it added in order (the file's line wins over a new pin of the same
   * tool, which takes it: the first pin wins; an accepted one replaces
   * it). Pins are copied as lines, never parsed or
   * serialized again; only the pins not in the file are serialized. A file
   * another process changed is read and checked first.
   */
  async #writeNow(): Promise<void> {
    // Never write over a file whose entries are still being checked, or failed.
    await this.verified;
    const started = performance.now();
    try {
      let source = await this.#openOurs();
      if (source === 'changed') {
        await this.#reloadKeepingNew();
        source = await this.#openOurs();
        if (source === 'changed')
          throw new Error('the pins file changed while it was read');
      }
      try {
        // A file in the former layout is written whole, nothing copied.
        await this.#writeLines(this.#formerLayout ? undefined : source);
      } finally {
        await source?.close();
      }
    } finally {
      const ended = performance.now();
      this.#lastWrite = { took: ended - started, ended };
    }
  }

  /**
   * The pins file opened for reading when it is the one this store last
   * read or wrote (same inode, size and modification time); `undefined`
   * when there is none and never was; `'changed'` otherwise.
   */
  async #openOurs(): Promise<FileHandle | undefined | 'changed'> {
    const handle = await open(this.path, 'r').catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    const stamp = await handle?.stat().then(stampOf, async (error: unknown) => {
      await handle.close();
      throw error;
    });
    if (stamp === this.#stamp) return handle;
    await handle?.close();
    return 'changed';
  }

  /**
   * Reads and checks the file another process changed, keeping the pins
   * made here and not yet in the file (new ones, and accepted ones).
   */
  async #reloadKeepingNew(): Promise<void> {
    const previous = this.#pins;
    await this.#load('now');
    const table = this.#pins;
    // Read after the reload, so pins made while the file was read are kept.
    for (const from of previous.pinnedSlots()) {
      if (previous.isInFile(from)) continue;
      const name = previous.nameOf(from);
      const slot = table.slot(name);
      // Pinned there first: that pin wins, unless this one was accepted.
      if (table.isPinned(slot) && !this.#accepted.has(name)) {
        table.setFirstSeen(slot, false);
        continue;
      }
      table.copyPin(slot, previous, from);
    }
  }

  /**
   * Writes the header, then the lines of `source` (the file on disk as this
   * store knows it) merged in name order with the pins not in it.
   */
  async #writeLines(source: FileHandle | undefined): Promise<void> {
    const table = this.#pins;
    const added: number[] = [];
    for (const slot of table.pinnedSlots())
      if (!table.isInFile(slot)) added.push(slot);
    const names = added.map((slot) => table.nameOf(slot));
    added.sort((a, b) => compare(table.nameOf(a), table.nameOf(b)));
    names.sort(compare);
    const hashes = added.map((slot) => table.pinnedHash(slot));
    const hash = createHash('sha256');
    const stats = await writeFileAtomic(this.path, async (handle) => {
      const out = new Gathered(handle, hash);
      out.push(Buffer.from(headerLine(this.#fileReadOnly)));
      let next = 0;
      /** Writes the new pins before `name` (every one left without it). */
      const addBefore = async (name?: string) => {
        for (; next < added.length; next += 1) {
          if (name !== undefined && names[next]! >= name) return;
          this.#pushPin(out, added[next]!);
          if (next % ENTRIES_PER_SLICE === ENTRIES_PER_SLICE - 1)
            await out.flush();
        }
      };
      if (source !== undefined)
        for await (const line of linesOf(source)) {
          const name = nameOf(line, 0, line.length);
          if (name === undefined)
            throw new Error('the pins file changed while it was copied');
          await addBefore(name);
          if (names[next] === name) {
            const slot = added[next++]!;
            if (this.#accepted.has(name)) {
              this.#pushPin(out, slot);
              continue;
            }
            this.#takeLine(slot, line);
          }
          out.push(line);
          out.push(LINE_BREAK);
          await out.flushIfFull();
        }
      await addBefore();
      await out.flush();
    });
    // A pin changed during the write (accepted meanwhile) is written by the next one.
    for (const [index, slot] of added.entries())
      if (table.isPinned(slot) && table.pinnedHash(slot) === hashes[index]) {
        table.markInFile(slot);
        this.#accepted.delete(table.nameOf(slot));
      }
    this.#formerLayout = false;
    this.#stamp = stampOf(stats);
    this.#digest = `sha256:${hash.digest('hex')}`;
  }

  /** Adds the line of the pin in `slot` (none for a pin whose definition cannot be read). */
  #pushPin(out: Gathered, slot: number): void {
    const table = this.#pins;
    const body = this.#body(slot);
    if (body === undefined) return;
    const entry = { hash: table.pinnedHash(slot), ...bodyOf(body) };
    out.push(Buffer.from(pinLine(table.nameOf(slot), entry)));
  }

  /**
   * A new pin of a tool the file already pins (another process pinned it
   * first): the file's pin wins, and is taken here.
   */
  #takeLine(slot: number, line: Buffer): void {
    const table = this.#pins;
    const theirs = checkPinLine(line, {
      name: table.nameOf(slot),
      hash: hashOfLine(line),
      start: 0,
      end: line.length,
    });
    if (typeof theirs === 'string') throw new Error(theirs);
    table.setFirstSeen(slot, false);
    if (theirs.hash === table.pinnedHash(slot)) return;
    table.pin(slot, theirs.hash, bodyOf(theirs));
  }
}

/** Code-unit order, the order of the file's lines. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const LINE_BREAK = Buffer.from('\n');
/** Bytes read from the file copied at a time. */
const READ_CHUNK = 1 << 20;
/** Bytes gathered before one `writev`. */
const GATHER_BYTES = 1 << 18;

/** The pin lines of a pins file (its header skipped), without their line breaks, read a chunk at a time. */
async function* linesOf(handle: FileHandle): AsyncGenerator<Buffer> {
  let rest = Buffer.alloc(0);
  let header = true;
  for (let position = 0; ;) {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const bytes =
      rest.length === 0
        ? chunk.subarray(0, bytesRead)
        : Buffer.concat([rest, chunk.subarray(0, bytesRead)]);
    let start = 0;
    for (
      let end = bytes.indexOf(0x0a);
      end !== -1;
      end = bytes.indexOf(0x0a, start)
    ) {
      if (!header) yield bytes.subarray(start, end);
      header = false;
      start = end + 1;
    }
    rest = Buffer.from(bytes.subarray(start));
  }
}

/** Pieces of the file being written, gathered into few writes and hashed as they go. */
class Gathered {
  readonly #out: FileHandle;
  readonly #hash: Hash;
  #pieces: Uint8Array[] = [];
  #bytes = 0;
  constructor(out: FileHandle, hash: Hash) {
    this.#out = out;
    this.#hash = hash;
  }
  push(piece: Uint8Array): void {
    this.#pieces.push(piece);
    this.#bytes += piece.length;
    this.#hash.update(piece);
  }
  async flushIfFull(): Promise<void> {
    if (this.#bytes >= GATHER_BYTES) await this.flush();
  }
  async flush(): Promise<void> {
    const pieces = this.#pieces;
    this.#pieces = [];
    this.#bytes = 0;
    await writeAll(this.#out, pieces);
  }
}
/** A write of new pins waits this many times the last write's length after it ... */
const WRITE_GAP_FACTOR = 2;
/** ... and at most this long. */
const MAX_WRITE_GAP_MS = 1000;

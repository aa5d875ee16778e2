import { access, constants, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { errorText } from '../error-text.js';
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
import {
  invalidPinsFile,
  pinTarget,
  readPinLine,
  readPins,
  withPinsFile,
  writePins,
  type FilePin,
} from './pins-file.js';
import { FileQueue, stampOf } from './state-file.js';
import { DIGEST_BYTES, hashText, writeHash } from './tool-hashes.js';
import type { ToolHashes } from './tool-hashes.js';
import { TrustError } from './trust-error.js';

/** Why a store does not write on its own: asked to, the file is marked `"readOnly": true`, or it cannot be written. */
export type ReadOnlyReason = 'option' | 'file' | 'unwritable';

/** Where a tool stands: it matches its pin (`pinned-now`: pinned on first use by this process), or is held: `new` on a known backend, `unpinned` (absent from a read-only pins file), `unlisted` (called before its backend lists it: {@link PinStore.unlisted}), `flagged` (never pinned on first use: its description trips an injection rule), or `changed`. */
export type PinStatus =
  | { state: 'pinned' | 'pinned-now' }
  | { state: 'held'; reason: 'new' | 'unpinned' | 'unlisted' | 'flagged' }
  | {
      state: 'held';
      reason: 'changed';
      change: DefinitionChange;
      pinned: NormalizedDefinition;
    };

/** One tool accepted (or to be accepted) by {@link PinStore.accept}: `new` when it has no pin, else what changed, and lines for a person. */
export type AcceptedPin = {
  name: string;
  change: DefinitionChange | 'new';
  lines: string[];
};

/** What {@link PinStore.observe} found, by tool name, and why new pins could not be saved (they are kept in memory). */
export type ObserveResult = Record<
  'pinned' | 'new' | 'changed' | 'unpinned',
  string[]
> & { writeError?: string };

/** The pins file as a store last read or wrote it (`stamp` `undefined`: none); replaced whole, never changed but for its two memos. */
type FileView = {
  readonly stamp: string | undefined;
  readonly digest: string | undefined;
  readonly readOnly: boolean;
  readonly unwritable: boolean;
  readonly pins: ReadonlyMap<string, FilePin>;
  /** The targets of its pins: the known backends. */
  readonly targets: ReadonlySet<string>;
  /** The check of its pins' lines (started when first asked for), and why it failed. */
  check?: Promise<void>;
  failure?: unknown;
};

/** A pin made here, not yet written: accepted (it replaces the file's), else made on first use (a pin the file has wins). */
type MadePin = FilePin & { readonly accepted: boolean };

/** A tool as its backend last listed it (or restored from its pin); `firstSeen`: pinned on first use by this process. */
type Listed = {
  readonly definition: NormalizedDefinition;
  readonly hash: string;
  readonly firstSeen: boolean;
  /** Held from a pin on first use (its description is flagged). */
  readonly flagged?: boolean;
};

/** Everything a store knows, in one place, changed in synchronous steps only: the file view is replaced whole, a pin is made or replaced, a written pin leaves `made` only if it is still the same object. A file operation never touches `made` or `listed`, so what is made while one waits is kept. */
type State = {
  file: FileView;
  /** Pins made here and not yet written, by target, then name. */
  readonly made: Map<string, Map<string, MadePin>>;
  readonly listed: Map<string, Listed>;
  /** A failed write of new pins has been logged. */
  warned?: boolean;
};

/** The pinned tool definitions (issue: rug pulls). A tool seen for the first time is pinned (trust on first use) and written; a tool whose definition differs from its pin is held as `changed` until a person accepts it (`--pin [tool]` -> {@link PinStore.accept}). Every read and write of the file goes through one queue. A write is atomic and copies the lines of the file on disk, adding the pins made here: two brokers pinning different new tools keep both (the first pin of a tool wins; an accepted change replaces its line). A file another process changed is read and checked first: a file this store cannot trust is never written over. A read-only store ({@link ReadOnlyReason}) writes nothing on its own. */
export class PinStore {
  readonly path: string;
  readonly #readOnly: boolean;
  readonly #log: (line: string) => void;
  readonly #queue = new FileQueue();
  readonly #state: State;

  private constructor(file: string, view: FileView, options: OpenOptions) {
    this.path = file;
    this.#readOnly = options.readOnly === true;
    this.#log = options.log ?? (() => {});
    this.#state = { file: view, made: new Map(), listed: new Map() };
  }

  /** Reads the pins file (none: empty); `PINS_FILE_INVALID` for a file it cannot trust. */
  static async open(options: OpenOptions): Promise<PinStore> {
    const file = path.resolve(options.path);
    const verify = options.verify ?? 'now';
    const view = await withPinsFile(file, (h) => viewOf(file, h, verify));
    return new PinStore(file, view, options);
  }

  /** Every pin read checked against its hash (started when first read); rejects as {@link open} does, and the store never writes. */
  get verified(): Promise<void> {
    const view = this.#state.file;
    if (view.check === undefined) {
      view.check = checkPins(this.path, view);
      view.check.catch((error: unknown) => (view.failure = error));
    }
    return view.check;
  }

  /** Checks one pin now (a call relies on it); throws as {@link verified} rejects, for it or the whole file. */
  checkPin(name: string): void {
    const view = this.#state.file;
    void this.verified;
    if (view.failure !== undefined) throw view.failure;
    const pin = view.pins.get(name);
    const body = pin && readPinLine(name, pin);
    if (typeof body === 'string') throw invalidPinsFile(this.path, body);
  }

  /** Whether the file as read, unchanged since, has `digest`: one an index cache recorded of a file whose pins were all checked ({@link fileDigest}). Its pins then need no check ({@link verified} resolves at once; {@link checkPin} still checks each one a call relies on). */
  knownDigest(digest: string): boolean {
    const view = this.#state.file;
    if (view.digest !== digest || view.failure !== undefined) return false;
    if (view.check === undefined) {
      view.check = Promise.resolve();
      this.#log(
        `pins: ${this.path} is the file the index cache was written with; its entries are not checked again`,
      );
    }
    return true;
  }

  /** The file's SHA-256 once every file operation asked for has ended, if the file then holds exactly the pins in memory, checked, with what `inspect` returns in the same turn; `undefined` when a write is waiting or failed, the check failed, another process changed the file, or there is none. */
  async fileDigest<T>(
    inspect: () => T,
  ): Promise<{ digest: string; inspected: T } | undefined> {
    await this.#queue.idle();
    try {
      await this.verified;
      const stamp = stampOf(await stat(this.path));
      const { file, made } = this.#state;
      if (file.digest === undefined || stamp !== file.stamp || made.size > 0)
        return undefined;
      return { digest: file.digest, inspected: inspect() };
    } catch {
      return undefined;
    }
  }

  get readOnlyReason(): ReadOnlyReason | undefined {
    const { file } = this.#state;
    if (this.#readOnly) return 'option';
    if (file.readOnly) return 'file';
    return file.unwritable ? 'unwritable' : undefined;
  }

  /** How many tools have a pin (in the file, or in memory when it could not be saved). */
  get pinnedCount(): number {
    const { pins } = this.#state.file;
    const made = [...this.#state.made.values()].flatMap((m) => [...m.keys()]);
    return pins.size + made.filter((name) => !pins.has(name)).length;
  }

  /** Reads the file again if another process changed it (`--pin`); an invalid one is logged, the pins in memory kept. */
  refresh(): Promise<void> {
    return this.#queue.run(() =>
      withPinsFile(this.path, (handle) => this.#reread(handle)).catch(
        (error: unknown) =>
          this.#log(`pins: keeping the pins in memory: ${errorText(error)}`),
      ),
    );
  }

  /** Records a backend's listing (qualified names) and pins the tools without a pin whose backend is not known yet (trust on first use) unless read-only; resolves once they are written. A tool without a pin on a known backend is held as `new`; one `flagged` says is held as `flagged` and never pinned on first use. */
  async observe(
    listing: Iterable<ToolDefinition>,
    flagged: (name: string) => boolean = () => false,
  ): Promise<ObserveResult> {
    const { listed } = this.#state;
    const names: string[] = [];
    const fresh = new Set<string>();
    for (const tool of listing) {
      const definition = normalizeDefinition(tool);
      const { name } = definition;
      const hash = definitionHash(definition);
      const firstSeen = listed.get(name)?.firstSeen ?? false;
      const held = flagged(name);
      listed.set(name, { definition, hash, firstSeen, flagged: held });
      names.push(name);
      if (!held && !this.#pinOf(name) && !this.#known(pinTarget(name)))
        fresh.add(name);
    }
    const result: ObserveResult = {
      pinned: [],
      new: [],
      changed: [],
      unpinned: [],
    };
    if (fresh.size > 0 && this.readOnlyReason === undefined) {
      for (const name of fresh) this.#make(name, false);
      try {
        await this.#queue.gather(() => this.#write());
      } catch (error) {
        result.writeError = (error as Error).message;
        if (!this.#state.warned)
          this.#log(
            `pins: cannot save new pins to ${this.path} (${result.writeError}); they are kept for this run only`,
          );
        this.#state.warned = true;
      }
    }
    for (const name of names) {
      const status = this.status(name);
      if (status?.state === 'pinned-now' && fresh.has(name))
        result.pinned.push(name);
      if (status?.state === 'held' && status.reason in result)
        result[status.reason as 'new'].push(name);
    }
    return result;
  }

  /** Whether every tool of `hashes` has a pin of the definition hash given for it. */
  matches(hashes: ToolHashes): boolean {
    return hashes.names.every(
      (name, i) =>
        this.#pinOf(name)?.hash === hashText(hashes.digests, i * DIGEST_BYTES),
    );
  }

  pinnedHash(name: string): string | undefined {
    return this.#pinOf(name)?.hash;
  }

  /** The definition hash of a tool's current (last observed or restored) definition. */
  currentHash(name: string): string | undefined {
    return this.#state.listed.get(name)?.hash;
  }

  /** The current definition hashes of `names` (those without one left out). */
  currentHashes(names: Iterable<string>): ToolHashes {
    const { listed } = this.#state;
    const kept = [...names].filter((name) => listed.has(name));
    const digests = new Uint8Array(kept.length * DIGEST_BYTES);
    kept.forEach((name, i) =>
      writeHash(listed.get(name)!.hash, digests, i * DIGEST_BYTES),
    );
    return { names: kept, digests };
  }

  /** Records tools served from the index cache as listed with their pinned definitions, until listed again; returns those. */
  restore(names: Iterable<string>): NormalizedDefinition[] {
    const restored: NormalizedDefinition[] = [];
    for (const name of names) {
      const pin = this.#pinOf(name);
      const body = pin && readPinLine(name, pin);
      if (pin === undefined || typeof body !== 'object') continue;
      const definition = { name, ...body };
      const listed = { definition, hash: pin.hash, firstSeen: false };
      this.#state.listed.set(name, listed);
      restored.push(definition);
    }
    return restored;
  }

  /** Forgets the definitions of tools a backend no longer lists (their pins stay). */
  forget(names: Iterable<string>): void {
    for (const name of names) this.#state.listed.delete(name);
  }

  /** The tool's standing against its pin, or `undefined` for a tool never observed. */
  status(name: string): PinStatus | undefined {
    const listed = this.#state.listed.get(name);
    const pin = this.#pinOf(name);
    if (listed === undefined) return undefined;
    if (pin === undefined) {
      const unpinned = this.readOnlyReason ? 'unpinned' : 'new';
      return { state: 'held', reason: listed.flagged ? 'flagged' : unpinned };
    }
    if (pin.hash === listed.hash)
      return { state: listed.firstSeen ? 'pinned-now' : 'pinned' };
    // A pin whose line cannot be trusted shows as a pin of nothing (the
    // check of the whole file reports it).
    const body = readPinLine(name, pin);
    const pinned =
      typeof body === 'object'
        ? { name, ...body }
        : normalizeDefinition({ name });
    const change = diffDefinitions(pinned, listed.definition);
    return { state: 'held', reason: 'changed', change, pinned };
  }

  /** For a name without a listed definition: held as `unlisted` when it has no pin and its backend is known, or the file is read-only (a tool added after the listing, called before the broker lists it again). */
  unlisted(name: string): PinStatus | undefined {
    if (this.#pinOf(name) !== undefined) return undefined;
    return this.readOnlyReason || this.#known(pinTarget(name))
      ? { state: 'held', reason: 'unlisted' }
      : undefined;
  }

  /** What {@link accept} would accept, without writing: every observed tool held as changed, new or unpinned (or only `tool`, or only the tools of `target`). The CLI shows it first. */
  pending(options: Selection = {}): AcceptedPin[] {
    const result: AcceptedPin[] = [];
    for (const name of this.#selected(options)) {
      const status = this.status(name);
      if (status === undefined)
        throw new TrustError({
          code: 'PIN_UNKNOWN_TOOL',
          message: `No tool named "${name}" was listed by the backends; check the name (a qualified <target>_<tool> name, or a target to accept all of its tools) and that its backend answered.`,
        });
      if (status.state !== 'held') continue;
      const now = this.#state.listed.get(name)!.definition;
      if (status.reason !== 'changed')
        result.push({
          name,
          change: 'new',
          lines:
            status.reason === 'new' || status.reason === 'flagged'
              ? [
                  status.reason === 'new'
                    ? `new on backend "${pinTarget(name)}", whose other tools were pinned before`
                    : 'its description is flagged as an injection: read it before accepting',
                  `description: ${JSON.stringify(now.description)}`,
                  `input schema: ${JSON.stringify(now.inputSchema)}`,
                  `annotations: ${JSON.stringify(now.annotations)}`,
                ]
              : ['not pinned yet'],
        });
      else if (isChanged(status.change))
        result.push({
          name,
          change: status.change,
          lines: describeChange(status.pinned, now),
        });
    }
    return result;
  }

  /** The selected tools pinned on first use by this process (`--pin` names them). */
  firstSeen(options: Selection = {}): string[] {
    const seen = (name: string) => this.status(name)?.state === 'pinned-now';
    return this.#selected(options).filter(seen);
  }

  /** Accepts the current definitions (every observed tool, `tool`, or the tools of `target`) as their pins, writes them and returns what changed. Allowed on a file marked `"readOnly": true` (how a committed lock is updated; it stays marked); throws `PINS_READ_ONLY` when opened read-only or the file cannot be written, `PIN_UNKNOWN_TOOL` for a tool never observed. */
  async accept(options: Selection = {}): Promise<AcceptedPin[]> {
    const reason = this.readOnlyReason;
    if (reason === 'option' || reason === 'unwritable')
      throw new TrustError({
        code: 'PINS_READ_ONLY',
        message: `Pins file ${this.path} is read-only (${reason === 'option' ? 'opened read-only' : 'not writable'}); nothing was accepted. Accept with a writable copy and commit it.`,
      });
    const accepted = this.pending(options);
    const { listed } = this.#state;
    for (const name of this.#selected(options)) {
      // Listed: pending() threw for a tool that is not.
      const tool = listed.get(name)!;
      // A pin that already matches stays as it is in the file.
      if (this.#pinOf(name)?.hash !== tool.hash) this.#make(name, true);
      else listed.set(name, { ...tool, firstSeen: false });
    }
    try {
      await this.#queue.run(() => this.#write());
    } catch (error) {
      throw new TrustError({
        code: 'PINS_WRITE_FAILED',
        message: `Pins file ${this.path} could not be written (${errorText(error)}); nothing was accepted on disk.`,
        cause: error,
      });
    }
    return accepted;
  }

  /** Writes the pins waiting for a quiet moment at once, and later ones as they come (shutdown); resolves when idle. */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  /** The tool's pin: one accepted here, else the file's, else one made here on first use. */
  #pinOf(name: string): FilePin | undefined {
    const made = this.#state.made.get(pinTarget(name))?.get(name);
    return made?.accepted ? made : (this.#state.file.pins.get(name) ?? made);
  }

  /** Pins the tool's listed definition: accepted, or on first use. */
  #make(name: string, accepted: boolean): void {
    const { made, listed } = this.#state;
    const { definition, hash } = listed.get(name)!;
    const pins = made.get(pinTarget(name)) ?? new Map<string, MadePin>();
    // One literal, not a spread plus a property: V8 gives each object made by
    // `{ ...pin, accepted }` a hidden class of its own (about 270 bytes a pin).
    pins.set(name, {
      hash,
      body: definition,
      start: 0,
      end: 0,
      checked: true,
      accepted,
    });
    made.set(pinTarget(name), pins);
    listed.set(name, { definition, hash, firstSeen: !accepted });
  }

  #known(target: string): boolean {
    return this.#state.file.targets.has(target) || this.#state.made.has(target);
  }

  #selected({ tool, target }: Selection): string[] {
    if (tool !== undefined) return [tool];
    const names = [...this.#state.listed.keys()];
    return names.filter((name) => !target || pinTarget(name) === target).sort();
  }

  /** Reads the file through `handle` again if it is not the one this store last read or wrote. */
  async #reread(handle: FileHandle | undefined): Promise<void> {
    const stamp = handle && stampOf(await handle.stat());
    if (stamp !== this.#state.file.stamp)
      this.#state.file = await viewOf(this.path, handle, 'now');
  }

  /** Writes the pins made here: the file's lines copied, the pins made here added (an accepted pin replaces its line; a pin the file has wins over one made on first use), after reading again, through the same handle, a file another process changed. Then, in one step, the view becomes the file written and each pin written leaves `made`, unless it was replaced meanwhile. */
  async #write(): Promise<void> {
    // Never write over a file whose entries are still being checked, or failed.
    await this.verified;
    await withPinsFile(this.path, async (source) => {
      await this.#reread(source);
      const { file, made, listed } = this.#state;
      const snapshot = [...made.values()].flatMap((pins) => [...pins]);
      const added = snapshot.filter(
        ([name, pin]) => pin.accepted || !file.pins.has(name),
      );
      if (added.length > 0) {
        const pins = new Map<string, FilePin>(file.pins);
        const targets = new Set(file.targets);
        for (const [name, pin] of added) {
          pins.set(name, pin);
          targets.add(pinTarget(name));
        }
        const stamp = await writePins(this.path, file.readOnly, pins);
        this.#state.file = { ...file, ...stamp, pins, targets };
      }
      const written = this.#state.file;
      for (const [name, pin] of snapshot) {
        const pins = made.get(pinTarget(name));
        if (pins?.get(name) !== pin) continue;
        pins.delete(name);
        if (pins.size === 0) made.delete(pinTarget(name));
        // Pinned in the file first (by another process): that pin won.
        const tool = listed.get(name);
        if (written.pins.get(name) !== pin && tool?.firstSeen)
          listed.set(name, { ...tool, firstSeen: false });
      }
    });
  }
}

type OpenOptions = {
  /** The pins file (`HERETEK_PINS_FILE`). */
  path: string;
  /** Never write on its own (a committed lock). */
  readOnly?: boolean | undefined;
  /** When each pin is checked against its hash: before `open` resolves (default), or from {@link PinStore.verified} on. */
  verify?: 'now' | 'later' | undefined;
  /** Diagnostic sink (stderr in the broker). */
  log?: (line: string) => void;
};

/** The tools an acceptance is about: `tool` alone, every observed tool of `target`, or every observed tool. */
type Selection = { tool?: string; target?: string };

/** The view of what `handle` reads (none: an empty file), its pins checked before this resolves with `'now'`. */
async function viewOf(
  file: string,
  handle: FileHandle | undefined,
  verify: 'now' | 'later',
): Promise<FileView> {
  const read = handle
    ? await readPins(file, handle)
    : { stamp: undefined, digest: undefined, readOnly: false, pins: new Map() };
  const view: FileView = {
    ...read,
    unwritable:
      handle !== undefined &&
      (await access(file, constants.W_OK).catch(() => true)) === true,
    targets: new Set([...read.pins.keys()].map(pinTarget)),
  };
  if (verify === 'now') await (view.check = checkPins(file, view));
  return view;
}

/** Checks each pin read, 500 between yields to other work; rejects for the first that fails. */
async function checkPins(file: string, view: FileView): Promise<void> {
  let count = 0;
  for (const [name, pin] of view.pins) {
    if (pin.checked) continue;
    if (++count % 500 === 0)
      await new Promise((resolve) => setImmediate(resolve));
    const body = readPinLine(name, pin);
    if (typeof body === 'string') throw invalidPinsFile(file, body);
  }
}

import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { GatewayTool } from './types.js';
import { describeSavedBackend, type Backend } from '@heretek/catalog';
import { errorText } from './error-text.js';
import { isMissing, isRecord, writeFileAtomic } from './trust/state-file.js';
import { DIGEST_BYTES, type ToolHashes } from './trust/tool-hashes.js';

/** Version of the index cache file layout this module reads and writes. */
export const INDEX_CACHE_VERSION = 4;

/** One backend's part of the index cache. */
export type CachedListing = {
  /** {@link listingHash} of the listing the part was built from. */
  hash: string;
  /**
   * The catalog's compact saved part (`ToolCatalog.saveBackend`, keyed by
   * `hash`), checked whole by `restoreBackends` on load; a view of the
   * file's bytes.
   */
  part: Uint8Array;
  /**
   * Each tool's definition hash when the trust layer reviewed the listing: a
   * restarted broker serves the part only if every one equals its pin.
   */
  definitions?: ToolHashes;
};

/** A listing as the trust layer let it through, with its tools' definition hashes when it pins. */
export type Reviewed = {
  tools: readonly GatewayTool[];
  definitions?: ToolHashes;
};

/** Which cached backends may be served at start (their tools match the pins), and what to do once one is. */
export type CachedAdmission = {
  admitted: ReadonlySet<string>;
  /** Called for each admitted target once its part is in the catalog. */
  served: (target: string) => void;
};

const SHA256 = /^sha256:[0-9a-f]{64}$/;

/*
 * Layout (little-endian):
 *   0   8 bytes  MAGIC
 *   8   u32      INDEX_CACHE_VERSION
 *   12  u32      header length in bytes (a multiple of 8)
 *   16  32 bytes SHA-256 of bytes [48, end of the digest table)
 *   48           header: UTF-8 JSON ({@link Header}), padded with spaces
 *                digest table: 32 bytes per tool with a definition hash, by
 *                target in header order, each target's in its names' order
 *                each target's saved catalog part at a multiple of 8 (zero
 *                bytes between), where its header entry says; each part
 *                carries its own digest, checked by the catalog
 */
const MAGIC = Buffer.from([0x89, 0x48, 0x54, 0x4b, 0x4c, 0x53, 0x54, 0x0a]); // \x89HTKLST\n
const DIGEST_AT = 16;
const HEADER_AT = 48;
const ALIGN = 8;

/** One target's entry in the header. */
type HeaderTarget = {
  target: string;
  /** The listing hash. */
  hash: string;
  /** Offset and length of the saved part in the file. */
  part: [number, number];
  /** Qualified names of its tools' definition hashes, when recorded. */
  names?: readonly string[];
};

type Header = { targets: HeaderTarget[] };

/** Parts exported (on write) or checked (on load) between two yields to other work. */
const TARGETS_PER_SLICE = 25;

const yieldToOthers = () =>
  new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The hash that keys a backend's part of the cache: SHA-256 of the listing
 * exactly as the gateway returned it (names, descriptions, schemas,
 * annotations, in order). An unchanged backend lists the same bytes again, so
 * its part is kept; any change replaces it.
 */
export function listingHash(tools: readonly unknown[]): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(tools)).digest('hex')}`;
}

/**
 * The key a backend's part is saved under: its listing hash, and with
 * recorded definition hashes a digest of those (names and hashes), so that
 * the part is restored only beside exactly the definitions that were checked
 * against the pins with it (the catalog's part names its tools; the cache's
 * table names the tools whose hashes are compared).
 */
export function partKey(listing: Pick<CachedListing, 'hash' | 'definitions'>) {
  const { hash, definitions } = listing;
  if (definitions === undefined) return hash;
  const digest = createHash('sha256')
    .update(JSON.stringify(definitions.names))
    .update(definitions.digests)
    .digest('hex');
  return `${hash} definitions:${digest}`;
}

/**
 * Whether a part was saved for this target, listing hash, definition hashes,
 * backend and profile, from its header (a part whose header cannot be read is left to
 * the catalog's check, which refuses it).
 */
function builtFor(listing: CachedListing, target: string, backend: Backend) {
  let info;
  try {
    info = describeSavedBackend(listing.part);
  } catch {
    return true;
  }
  return (
    info.target === target &&
    info.key === partKey(listing) &&
    info.backends.every((name) => name === backend.backend) &&
    info.profiles.every((profile) => profile === backend.profile)
  );
}

/** What is wrong with a header target entry (`index` in the list), if anything. */
function targetProblem(entry: unknown, index: number): string | undefined {
  const where = `header target [${index}]`;
  if (!isRecord(entry)) return `${where} is not an object`;
  const { target, hash, part, names } = entry;
  if (typeof target !== 'string' || target === '')
    return `${where}: "target" must be a non-empty string`;
  if (typeof hash !== 'string' || !SHA256.test(hash))
    return `${where} ("${target}"): "hash" must be a "sha256:<hex>" string`;
  if (
    !Array.isArray(part) ||
    part.length !== 2 ||
    !part.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  )
    return `${where} ("${target}"): "part" must be [offset, length]`;
  if (
    names !== undefined &&
    !(Array.isArray(names) && names.every((name) => typeof name === 'string'))
  )
    return `${where} ("${target}"): "names" must be an array of strings`;
  return undefined;
}

/**
 * The built index's parts, kept in the state folder beside the pins and
 * usage files (`HERETEK_INDEX_CACHE_FILE`), in one binary file: a header
 * naming each backend with the hash of its last listing, where its catalog
 * part lies and its tools' names; a table of their definition hashes as
 * bytes; and each backend's saved catalog part (entries and analyzed terms,
 * as bytes). A restarted broker reads it in one read, takes every part as a
 * view of the file's bytes, and restores them in one build before the first
 * listing answers, so every tool is searchable at once; rediscovery then
 * replaces the backends whose listing changed. A file that cannot be read as
 * this version's cache is ignored with one log line and written afresh after
 * discovery; it is never trusted in part.
 */
export class IndexCache {
  readonly file: string;
  readonly #log: (line: string) => void;
  #warnedWrite = false;
  #writing: Promise<void> = Promise.resolve();
  /** The file's bytes, once asked for (see {@link prefetch}). */
  #bytes: Promise<Buffer | undefined> | undefined;

  constructor(options: { file: string; log: (line: string) => void }) {
    this.file = options.file;
    this.#log = options.log;
  }

  /** Logs, in one line, that the file is not used and why. */
  ignored(reason: string): void {
    this.#log(
      `index cache: ${this.file} ignored (${reason}); building the index from discovery and writing it again`,
    );
  }

  /**
   * Starts reading the file (once), so that the read runs beside other
   * start-up work; {@link load} uses these bytes.
   */
  prefetch(): void {
    this.#bytes ??= readFile(this.file).then(
      (bytes) => bytes,
      (error: unknown) => {
        if (!isMissing(error))
          this.ignored(`not readable: ${errorText(error)}`);
        return undefined;
      },
    );
  }

  /**
   * The cached parts of the configured backends whose backend and profile
   * are still the same (others are stale and dropped: discovery lists them).
   * Empty when there is no file, and empty with one log line when the file is
   * not a cache this broker can read. Each part is a view of the file's
   * bytes, which are read once.
   */
  async load(
    backends: ReadonlyMap<string, Backend>,
  ): Promise<Map<string, CachedListing>> {
    this.prefetch();
    const bytes = await this.#bytes;
    // The bytes are not kept here: the parts served keep what they view.
    this.#bytes = undefined;
    if (bytes === undefined) return new Map();
    const loaded = this.#read(bytes);
    if (typeof loaded === 'string') {
      this.ignored(loaded);
      return new Map();
    }
    let index = 0;
    for (const [target, listing] of loaded) {
      index += 1;
      if (index % TARGETS_PER_SLICE === 0) await yieldToOthers();
      const backend = backends.get(target);
      if (backend === undefined || !builtFor(listing, target, backend))
        loaded.delete(target);
    }
    return loaded;
  }

  /** Every target's cached listing, or what is wrong with the file. */
  #read(bytes: Buffer): Map<string, CachedListing> | string {
    if (bytes.length < HEADER_AT || !bytes.subarray(0, 8).equals(MAGIC)) {
      const version = /^\{"version":(\d+)\}/.exec(
        bytes.toString('latin1', 0, 32),
      )?.[1];
      return version === undefined
        ? 'not an index cache file'
        : `format version ${version}, this broker reads ${INDEX_CACHE_VERSION}`;
    }
    const version = bytes.readUInt32LE(8);
    if (version !== INDEX_CACHE_VERSION)
      return `format version ${version}, this broker reads ${INDEX_CACHE_VERSION}`;
    const headerLength = bytes.readUInt32LE(12);
    const digestsAt = HEADER_AT + headerLength;
    if (headerLength % ALIGN !== 0 || digestsAt > bytes.length)
      return 'cut short in its header';
    let header: unknown;
    try {
      header = JSON.parse(bytes.toString('utf8', HEADER_AT, digestsAt));
    } catch (error) {
      return `its header is not JSON: ${errorText(error)}`;
    }
    const targets = isRecord(header) ? header.targets : undefined;
    if (!Array.isArray(targets))
      return 'its header has no "targets" array of backends';
    let digestsEnd = digestsAt;
    for (const [index, entry] of targets.entries()) {
      const problem = targetProblem(entry, index);
      if (problem !== undefined) return problem;
      digestsEnd += ((entry as HeaderTarget).names?.length ?? 0) * DIGEST_BYTES;
    }
    if (digestsEnd > bytes.length) return 'cut short in its digest table';
    const digest = createHash('sha256')
      .update(bytes.subarray(HEADER_AT, digestsEnd))
      .digest();
    if (!digest.equals(bytes.subarray(DIGEST_AT, DIGEST_AT + 32)))
      return 'its header or digest table does not match its digest (changed after it was written)';
    const loaded = new Map<string, CachedListing>();
    let digestAt = digestsAt;
    for (const { target, hash, part, names } of targets as HeaderTarget[]) {
      const [offset, length] = part;
      if (offset < digestsEnd || offset + length > bytes.length)
        return `the part of "${target}" is cut short or outside the file`;
      if (loaded.has(target)) return `target "${target}" appears twice`;
      let definitions: ToolHashes | undefined;
      if (names !== undefined) {
        const size = names.length * DIGEST_BYTES;
        definitions = {
          names,
          digests: bytes.subarray(digestAt, digestAt + size),
        };
        digestAt += size;
      }
      loaded.set(target, {
        hash,
        part: bytes.subarray(offset, offset + length),
        ...(definitions === undefined ? {} : { definitions }),
      });
    }
    return loaded;
  }

  /**
   * Writes the cache (atomically, mode 0600), taking a slice of backends at a
   * time (`listings` may be a generator that exports each part as it is
   * asked for). A failure is logged once and never stops the broker: the
   * next start rebuilds from discovery.
   */
  save(listings: Iterable<[string, CachedListing]>): Promise<void> {
    const run = this.#writing.then(async () => {
      const targets: HeaderTarget[] = [];
      const parts: Uint8Array[] = [];
      const digests: Uint8Array[] = [];
      for (const [target, { hash, part, definitions }] of listings) {
        targets.push({
          target,
          hash,
          part: [0, part.byteLength],
          ...(definitions === undefined ? {} : { names: definitions.names }),
        });
        parts.push(part);
        if (definitions !== undefined) digests.push(definitions.digests);
        if (targets.length % TARGETS_PER_SLICE === 0) await yieldToOthers();
      }
      try {
        await writeFileAtomic(this.file, pieces(targets, parts, digests));
      } catch (error) {
        if (this.#warnedWrite) return;
        this.#warnedWrite = true;
        this.#log(
          `index cache: cannot write ${this.file} (${errorText(error)}); the next start discovers every backend again`,
        );
      }
    });
    this.#writing = run;
    return run;
  }
}

/** Zero bytes that bring `length` to the next multiple of {@link ALIGN}. */
function padding(length: number): Uint8Array {
  return new Uint8Array((ALIGN - (length % ALIGN)) % ALIGN);
}

/** The file's pieces, in order: fixed fields, header, digest table, parts. */
function pieces(
  targets: HeaderTarget[],
  parts: readonly Uint8Array[],
  digests: readonly Uint8Array[],
): Uint8Array[] {
  const digestBytes = digests.reduce((sum, d) => sum + d.byteLength, 0);
  // The parts' offsets are in the header, whose length depends on them: lay
  // out with room for the widest offsets, then pad the header to that room.
  const room = (text: string) => Math.ceil(Buffer.byteLength(text) / ALIGN);
  const draft = JSON.stringify({ targets } satisfies Header);
  const widest = String(Number.MAX_SAFE_INTEGER).length;
  const headerLength =
    room(draft) * ALIGN + ALIGN * Math.ceil((targets.length * widest) / ALIGN);
  let at = HEADER_AT + headerLength + digestBytes;
  const placed: Uint8Array[] = [];
  for (const [index, part] of parts.entries()) {
    const gap = padding(at);
    at += gap.length;
    targets[index]!.part = [at, part.byteLength];
    placed.push(gap, part);
    at += part.byteLength;
  }
  const header = Buffer.alloc(headerLength, 0x20);
  header.write(JSON.stringify({ targets } satisfies Header), 'utf8');
  const fixed = Buffer.alloc(HEADER_AT);
  MAGIC.copy(fixed, 0);
  fixed.writeUInt32LE(INDEX_CACHE_VERSION, 8);
  fixed.writeUInt32LE(headerLength, 12);
  const hash = createHash('sha256').update(header);
  for (const digest of digests) hash.update(digest);
  hash.digest().copy(fixed, DIGEST_AT);
  return [fixed, header, ...digests, ...placed];
}

import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { sha256Tag } from '@heretek/internal';
import type { GatewayTool } from './types.js';
import {
  describeSavedCatalog,
  type Backend,
  type SavedCatalogStream,
  type SavedCatalogTarget,
} from '@heretek/catalog';
import { errorText } from './error-text.js';
import {
  isMissing,
  isRecord,
  removeStaleTemporaryFiles,
  writeAll,
  writeFileAtomic,
} from './trust/state-file.js';
import { DIGEST_BYTES, type ToolHashes } from './trust/tool-hashes.js';

/** Version of the index cache file layout this module reads and writes. */
export const INDEX_CACHE_VERSION = 5;

/** What keys one backend's tools in the index cache. */
export type CachedListing = {
  /** {@link listingHash} of the listing its tools were built from. */
  hash: string;
  /**
   * Each tool's definition hash when the trust layer reviewed the listing: a
   * restarted broker serves the backend from the cache only if every one
   * equals its pin.
   */
  definitions?: ToolHashes;
};

/** The index cache as read: each backend's key, and the catalog's saved form of them all. */
export type LoadedCache = {
  /** The backends still configured as they were saved, by target. */
  listings: Map<string, CachedListing>;
  /**
   * The catalog's saved form (`ToolCatalog.saveCatalog`, each target under
   * its {@link partKey}), checked whole by `restoreCatalog`; a view of the
   * file's bytes.
   */
  catalog: Uint8Array;
};

/** A listing as the trust layer let it through, with its tools' definition hashes when it pins. */
export type Reviewed = {
  tools: readonly GatewayTool[];
  definitions?: ToolHashes;
};

/**
 * The pins file's digest when it holds exactly the pins the trust layer
 * has, and the targets of `listings` whose tools all match those pins (see
 * `PinStore.fileDigest`); `undefined` when that cannot be said now.
 */
export type PinsCovering = (
  listings: ReadonlyMap<string, CachedListing>,
) => Promise<{ digest: string; inspected: ReadonlySet<string> } | undefined>;

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
 *                the catalog's saved form at a multiple of 8 (zero bytes
 *                before it), where the header says; it carries its own
 *                digest, checked by the catalog
 */
const MAGIC = Buffer.from([0x89, 0x48, 0x54, 0x4b, 0x4c, 0x53, 0x54, 0x0a]); // \x89HTKLST\n
const DIGEST_AT = 16;
const HEADER_AT = 48;
const ALIGN = 8;

/** One target's entry in the header. */
type HeaderTarget = {
  target: string;
  hash: string;
  /** Qualified names of its tools' definition hashes, when recorded. */
  names?: readonly string[];
  /** Every one of them matched its pin in the pins file of the header's `pins` digest. */
  pinned?: true;
};

type Header = {
  targets: HeaderTarget[];
  /** The pins file's digest when the cache was written (see {@link PinsCovering}). */
  pins?: string;
  /** Offset and length of the catalog's saved form in the file. */
  catalog: [number, number];
};

/**
 * The hash that keys a backend's part of the cache: SHA-256 of the listing
 * exactly as the gateway returned it (names, descriptions, schemas,
 * annotations, in order). An unchanged backend lists the same bytes again, so
 * its part is kept; any change replaces it.
 */
export function listingHash(tools: readonly unknown[]): string {
  return sha256Tag(JSON.stringify(tools));
}

/**
 * The key a backend's tools are saved under in the catalog's saved form: its
 * listing hash, and with recorded definition hashes a digest of those (names
 * and hashes), so that its tools are restored only beside exactly the
 * definitions that were checked against the pins with them.
 */
export function partKey(listing: CachedListing): string {
  const { hash, definitions } = listing;
  if (definitions === undefined) return hash;
  const digest = createHash('sha256')
    .update(JSON.stringify(definitions.names))
    .update(definitions.digests)
    .digest('hex');
  return `${hash} definitions:${digest}`;
}

/** What is wrong with a header target entry (`index` in the list), if anything. */
function targetProblem(entry: unknown, index: number): string | undefined {
  const where = `header target [${index}]`;
  if (!isRecord(entry)) return `${where} is not an object`;
  const { target, hash, names, pinned } = entry;
  if (typeof target !== 'string' || target === '')
    return `${where}: "target" must be a non-empty string`;
  if (typeof hash !== 'string' || !SHA256.test(hash))
    return `${where} ("${target}"): "hash" must be a "sha256:<hex>" string`;
  if (
    names !== undefined &&
    !(Array.isArray(names) && names.every((name) => typeof name === 'string'))
  )
    return `${where} ("${target}"): "names" must be an array of strings`;
  if (pinned !== undefined && (pinned !== true || names === undefined))
    return `${where} ("${target}"): "pinned" must be true, beside "names"`;
  return undefined;
}

/** Whether `value` is an [offset, length] pair. */
function isRange(value: unknown): value is [number, number] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    value.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  );
}

/**
 * The built index in one binary file in the state folder
 * (`HERETEK_INDEX_CACHE_FILE`, laid out as above). A restarted broker reads it
 * in one read and restores the catalog from a view of its bytes in one build,
 * so every tool is searchable before the first listing answers; rediscovery
 * then replaces the backends whose listing changed. A file that is not this
 * version's cache is ignored with one log line and written afresh after
 * discovery; it is never trusted in part.
 */
export class IndexCache {
  readonly file: string;
  readonly #log: (line: string) => void;
  #warnedWrite = false;
  /**
   * Resolves once the temporary files that a broker stopped during a write
   * left beside the file are removed (started when the cache is made;
   * writes wait for it).
   */
  readonly swept: Promise<void>;
  #writing: Promise<void> = Promise.resolve();
  /** The file's bytes, once asked for (see {@link prefetch}). */
  #bytes: Promise<Buffer | undefined> | undefined;
  readonly #pinsCovering: PinsCovering | undefined;

  constructor(options: {
    file: string;
    log: (line: string) => void;
    /**
     * The pins file's digest and the targets whose tools match it, recorded
     * with each write so that a restart on the same pins file admits them
     * without comparing each tool with its pin.
     */
    pinsCovering?: PinsCovering;
  }) {
    this.file = options.file;
    this.#log = options.log;
    this.#pinsCovering = options.pinsCovering;
    this.swept = removeStaleTemporaryFiles(this.file);
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
    this.#bytes ??= readWhole(this.file).catch((error: unknown) => {
      if (!isMissing(error)) this.ignored(`not readable: ${errorText(error)}`);
      return undefined;
    });
  }

  /**
   * The cached backends still configured with the same backend and profile
   * (others are stale and dropped: discovery lists them), with the catalog's
   * saved form. `undefined` when there is no file, and with one log line when
   * the file is not a cache this broker can read.
   */
  async load(backends: {
    get(target: string): Backend | undefined;
  }): Promise<LoadedCache | undefined> {
    this.prefetch();
    const bytes = await this.#bytes;
    // The bytes are not kept here: the catalog restored keeps what it views.
    this.#bytes = undefined;
    if (bytes === undefined) return undefined;
    const loaded = this.#read(bytes);
    if (typeof loaded === 'string') {
      this.ignored(loaded);
      return undefined;
    }
    let saved: SavedCatalogTarget[];
    try {
      saved = describeSavedCatalog(loaded.catalog).targets;
    } catch (error) {
      this.ignored(errorText(error));
      return undefined;
    }
    const current = new Map<string, CachedListing>();
    for (const info of saved) {
      const listing = loaded.listings.get(info.target);
      const backend = backends.get(info.target);
      // Kept when saved for this listing (and definition hashes), backend and profile.
      if (
        listing !== undefined &&
        backend !== undefined &&
        info.key === partKey(listing) &&
        info.backends.every((name) => name === backend.backend) &&
        info.profiles.every((profile) => profile === backend.profile)
      )
        current.set(info.target, listing);
    }
    return { listings: current, catalog: loaded.catalog };
  }

  /** Every target's cached listing and the catalog's bytes, or what is wrong with the file. */
  #read(bytes: Buffer): LoadedCache | string {
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
    const catalog = isRecord(header) ? header.catalog : undefined;
    const pins = isRecord(header) ? header.pins : undefined;
    if (!Array.isArray(targets) || !isRange(catalog))
      return 'its header lacks its "targets" or the place of the catalog';
    if (pins !== undefined && !(typeof pins === 'string' && SHA256.test(pins)))
      return 'its header\'s "pins" must be a "sha256:<hex>" string';
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
    const [offset, length] = catalog;
    if (offset < digestsEnd || offset + length > bytes.length)
      return 'the catalog is cut short or outside the file';
    const listings = new Map<string, CachedListing>();
    let digestAt = digestsAt;
    for (const { target, hash, names, pinned } of targets as HeaderTarget[]) {
      if (listings.has(target)) return `target "${target}" appears twice`;
      let definitions: ToolHashes | undefined;
      if (names !== undefined) {
        const size = names.length * DIGEST_BYTES;
        definitions = {
          names,
          digests: bytes.subarray(digestAt, digestAt + size),
          ...(pinned === true && pins !== undefined
            ? { pinsDigest: pins }
            : {}),
        };
        digestAt += size;
      }
      listings.set(target, {
        hash,
        ...(definitions === undefined ? {} : { definitions }),
      });
    }
    return { listings, catalog: bytes.subarray(offset, offset + length) };
  }

  /**
   * Writes the cache atomically (mode 0600): `listings`, and the catalog's
   * saved form of them for their {@link partKey}s, both taken in one turn so
   * they agree; that stream is written a piece at a time (never held whole),
   * its digest put in place last. A failure is logged once and never stops
   * the broker: the next start rebuilds from discovery.
   */
  save(
    listings: ReadonlyMap<string, CachedListing>,
    saveCatalog: (
      keys: ReadonlyMap<string, string>,
    ) => SavedCatalogStream | Promise<SavedCatalogStream>,
  ): Promise<void> {
    const run = this.#writing.then(async () => {
      await this.swept;
      const keys = new Map<string, string>();
      const taken = new Map(listings);
      for (const [target, listing] of taken) keys.set(target, partKey(listing));
      const catalog = await saveCatalog(keys);
      const covered = await this.#pinsCovering?.(taken).catch(() => undefined);
      // The targets the saved form holds (a target without tools is left out).
      const targets: HeaderTarget[] = [];
      const digests: Uint8Array[] = [];
      for (const { target } of catalog.targets) {
        const { hash, definitions } = taken.get(target)!;
        targets.push({
          target,
          hash,
          ...(definitions === undefined ? {} : { names: definitions.names }),
          ...(definitions !== undefined && covered?.inspected.has(target)
            ? { pinned: true }
            : {}),
        });
        if (definitions !== undefined) digests.push(definitions.digests);
      }
      const start = pieces(
        { targets, ...(covered === undefined ? {} : { pins: covered.digest }) },
        digests,
        catalog.byteLength,
      );
      const catalogAt = start.reduce((sum, piece) => sum + piece.length, 0);
      try {
        await writeFileAtomic(this.file, async (handle) => {
          await writeAll(handle, start);
          const chunks = catalog.chunks();
          let step = await chunks.next();
          for (; step.done !== true; step = await chunks.next())
            await writeAll(handle, [step.value]);
          await handle.write(
            step.value,
            0,
            step.value.length,
            catalogAt + catalog.digestAt,
          );
        });
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

/**
 * A file's bytes, read in as few reads as its size allows (`readFile` reads
 * 512 KiB at a time, a round trip through the thread pool each, which a busy
 * machine makes slow).
 */
async function readWhole(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.allocUnsafeSlow(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === size ? bytes : bytes.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** The file's pieces before the catalog, in order: fixed fields, header, digest table, the catalog's alignment. */
function pieces(
  head: Omit<Header, 'catalog'>,
  digests: readonly Uint8Array[],
  catalogLength: number,
): Uint8Array[] {
  const digestBytes = digests.reduce((sum, d) => sum + d.byteLength, 0);
  // The catalog's offset is in the header, whose length depends on it: lay
  // out with room for the widest offset, then pad the header to that room.
  const widest: Header = {
    ...head,
    catalog: [Number.MAX_SAFE_INTEGER, catalogLength],
  };
  const headerLength =
    Math.ceil(Buffer.byteLength(JSON.stringify(widest)) / ALIGN) * ALIGN;
  const end = HEADER_AT + headerLength + digestBytes;
  const gap = new Uint8Array((ALIGN - (end % ALIGN)) % ALIGN);
  const header = Buffer.alloc(headerLength, 0x20);
  header.write(
    JSON.stringify({
      ...head,
      catalog: [end + gap.length, catalogLength],
    } satisfies Header),
    'utf8',
  );
  const fixed = Buffer.alloc(HEADER_AT);
  MAGIC.copy(fixed, 0);
  fixed.writeUInt32LE(INDEX_CACHE_VERSION, 8);
  fixed.writeUInt32LE(headerLength, 12);
  const hash = createHash('sha256').update(header);
  for (const digest of digests) hash.update(digest);
  hash.digest().copy(fixed, DIGEST_AT);
  return [fixed, header, ...digests, gap];
}

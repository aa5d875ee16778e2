import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { sha256Tag } from '@heretek/internal';
import type { GatewayTool } from './types.js';
import type { Backend, SavedCatalogStream } from '@heretek/catalog';
import { errorText } from './error-text.js';
import { issueLines } from './issue-text.js';
import {
  isMissing,
  removeStaleTemporaryFiles,
  writeAll,
  writeFileAtomic,
} from './trust/state-file.js';
import { DIGEST_BYTES, type ToolHashes } from './trust/tool-hashes.js';

/** Version of the index cache file layout this module reads and writes. */
export const INDEX_CACHE_VERSION = 6;

/** What keys one backend's tools in the index cache. */
export type CachedListing = {
  /** {@link listingHash} of the listing its tools were built from. */
  hash: string;
  /** Each tool's definition hash when the trust layer reviewed the listing: a restart serves the backend from the cache only if every one equals its pin. */
  definitions?: ToolHashes;
};

/** A listing as the trust layer let it through, with its tools' definition hashes when it pins. */
export type Reviewed = {
  tools: readonly GatewayTool[];
  definitions?: ToolHashes;
};

/** The pins file's digest when it holds exactly the trust layer's pins, and the targets of `listings` whose tools all match them (`PinStore.fileDigest`); `undefined` when that cannot be said now. */
export type PinsCovering = (
  listings: ReadonlyMap<string, CachedListing>,
) => Promise<{ digest: string; inspected: ReadonlySet<string> } | undefined>;

/** Which cached backends may be served at start (their tools match the pins), and what to do once one is. */
export type CachedAdmission = {
  admitted: ReadonlySet<string>;
  /** Called for each admitted target once its part is in the catalog. */
  served: (target: string) => void;
};

/*
 * Layout (little-endian):
 *   0   8 bytes  MAGIC
 *   8   u32      INDEX_CACHE_VERSION
 *   12  u32      header length in bytes (a multiple of 8)
 *   16  32 bytes SHA-256 of every byte after these 48
 *   48           header: UTF-8 JSON ({@link HEADER}), padded with spaces
 *                digest table: 32 bytes per tool with a definition hash, by
 *                target in header order, each target's in its names' order
 *                zero bytes to a multiple of 8, then the catalog's saved
 *                bytes to the end (their header is the header's `catalog`)
 */
const MAGIC = Buffer.from([0x89, 0x48, 0x54, 0x4b, 0x4c, 0x53, 0x54, 0x0a]); // \x89HTKLST\n
const DIGEST_AT = 16;
const HEADER_AT = 48;
const ALIGN = 8;
/** Bytes hashed, and targets laid out, between two turns of the event loop. */
const DIGEST_STEP = 1 << 20;
const TARGET_STEP = 64;

const sha256 = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, { error: 'a "sha256:<hex>" string' });

/** The header: each target's listing hash, the pins file's digest, the catalog's header. */
const HEADER = z.object({
  targets: z.array(
    z.object({
      target: z.string().min(1),
      hash: sha256,
      /** Qualified names of its tools' definition hashes, when recorded. */
      names: z.array(z.string()).optional(),
      /** Every one of them matched its pin in the pins file of `pins`. */
      pinned: z.literal(true).optional(),
    }),
  ),
  /** The pins file's digest when the cache was written (see {@link PinsCovering}). */
  pins: sha256.optional(),
  /** The catalog's header (checked whole by the catalog); its targets are read here. */
  catalog: z.looseObject({
    targets: z.array(
      z.looseObject({
        target: z.string(),
        key: z.string(),
        backends: z.array(z.string()),
        profiles: z.array(z.string()),
      }),
    ),
  }),
});

/** The hash that keys a backend's part of the cache: SHA-256 of the listing exactly as the gateway returned it, so that any change replaces the part. */
export function listingHash(tools: readonly unknown[]): string {
  return sha256Tag(JSON.stringify(tools));
}

/**
 * The key a backend's tools are saved under in the catalog's saved form: its
 * listing hash, with a digest of its definition hashes when recorded, so its
 * tools are restored only beside the definitions checked against the pins.
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

/**
 * The built index in one binary file (`HERETEK_INDEX_CACHE_FILE`, laid out as
 * above). A restarted broker reads it in one read and restores the catalog
 * from a view of its bytes in one build, so every tool is searchable before
 * the first listing answers. A file that is not this version's cache is
 * ignored with one log line and written afresh; it is never trusted in part.
 */
export class IndexCache {
  readonly file: string;
  readonly #log: (line: string) => void;
  #warnedWrite = false;
  /** Resolves once the temporary files a broker stopped during a write left beside the file are removed (writes wait for it). */
  readonly swept: Promise<void>;
  #writing: Promise<void> = Promise.resolve();
  /** The file's bytes, once asked for (see {@link prefetch}). */
  #bytes: Promise<Buffer | undefined> | undefined;
  readonly #pinsCovering: PinsCovering | undefined;

  constructor(options: {
    file: string;
    log: (line: string) => void;
    /** Recorded with each write, so that a restart on the same pins file admits the covered targets without comparing each tool with its pin. */
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

  /** Starts reading the file (once), beside other start-up work; {@link load} uses these bytes. */
  prefetch(): void {
    this.#bytes ??= readWhole(this.file).catch((error: unknown) => {
      if (!isMissing(error)) this.ignored(`not readable: ${errorText(error)}`);
      return undefined;
    });
  }

  /**
   * The keys of the cached backends still configured with the same backend
   * and profile (others are stale and dropped: discovery lists them), and the
   * catalog's saved form (each target under its {@link partKey}, its bytes a
   * view of the file's, checked by `restoreCatalogAsync`). `undefined` when
   * there is no file, with one log line when this broker cannot read it.
   */
  async load(backends: { get(target: string): Backend | undefined }) {
    this.prefetch();
    const bytes = await this.#bytes;
    // The bytes are not kept here: the catalog restored keeps what it views.
    this.#bytes = undefined;
    if (bytes === undefined) return undefined;
    const loaded = await read(bytes);
    if (typeof loaded === 'string') {
      this.ignored(loaded);
      return undefined;
    }
    const current = new Map<string, CachedListing>();
    for (const info of loaded.header.catalog.targets) {
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

  /**
   * Writes the cache atomically (mode 0600): `listings` and the catalog's
   * saved form of them, taken in one turn so they agree, written a piece at a
   * time (never held whole). A failure is logged once, never thrown.
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
      for (const [target, listing] of taken) {
        keys.set(target, partKey(listing));
        if (keys.size % TARGET_STEP === 0) await nextTurn();
      }
      const catalog = await saveCatalog(keys);
      const covered = await this.#pinsCovering?.(taken).catch(() => undefined);
      const start = await headPieces(catalog, taken, covered);
      const hash = createHash('sha256');
      for (const piece of start.slice(1)) hash.update(piece);
      try {
        await writeFileAtomic(this.file, async (handle) => {
          await writeAll(handle, start);
          for await (const piece of catalog.chunks()) {
            hash.update(piece);
            await writeAll(handle, [piece]);
          }
          await handle.write(hash.digest(), 0, 32, DIGEST_AT);
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

/** A cache file's header and listings, with the catalog's saved form, or what is wrong with it. */
async function read(bytes: Buffer) {
  if (bytes.length < HEADER_AT || !bytes.subarray(0, 8).equals(MAGIC))
    return 'not an index cache file';
  const version = bytes.readUInt32LE(8);
  if (version !== INDEX_CACHE_VERSION)
    return `format version ${version}, this broker reads ${INDEX_CACHE_VERSION}`;
  const digestsAt = HEADER_AT + bytes.readUInt32LE(12);
  if (digestsAt > bytes.length) return 'cut short in its header';
  // Hashed a megabyte a turn, so that requests are answered meanwhile.
  const hash = createHash('sha256');
  for (let at = HEADER_AT; at < bytes.length; at += DIGEST_STEP) {
    hash.update(bytes.subarray(at, Math.min(at + DIGEST_STEP, bytes.length)));
    await nextTurn();
  }
  if (!hash.digest().equals(bytes.subarray(DIGEST_AT, HEADER_AT)))
    return 'its content does not match its digest (changed or cut short after it was written)';
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8', HEADER_AT, digestsAt));
  } catch (error) {
    return `its header is not JSON: ${errorText(error)}`;
  }
  const parsed = HEADER.safeParse(json);
  if (!parsed.success)
    return `its header is malformed: ${issueLines({ issues: parsed.error.issues, input: json, root: 'header' }).join('; ')}`;
  const header = parsed.data;
  const listings = new Map<string, CachedListing>();
  let digestAt = digestsAt;
  for (const { target, hash: listingHash, names, pinned } of header.targets) {
    if (listings.has(target)) return `target "${target}" appears twice`;
    const size = (names?.length ?? 0) * DIGEST_BYTES;
    if (digestAt + size > bytes.length) return 'cut short in its digest table';
    const definitions: ToolHashes | undefined =
      names === undefined
        ? undefined
        : {
            names,
            digests: bytes.subarray(digestAt, digestAt + size),
            ...(pinned === true && header.pins !== undefined
              ? { pinsDigest: header.pins }
              : {}),
          };
    digestAt += size;
    listings.set(target, { hash: listingHash, definitions });
  }
  const catalogAt = Math.ceil(digestAt / ALIGN) * ALIGN;
  return {
    header,
    listings,
    catalog: { header: header.catalog, bytes: bytes.subarray(catalogAt) },
  };
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

/** The file's pieces before the catalog's bytes (the digest zero, put in place last); the header is laid out a few targets a turn. */
async function headPieces(
  catalog: SavedCatalogStream,
  taken: ReadonlyMap<string, CachedListing>,
  covered: { digest: string; inspected: ReadonlySet<string> } | undefined,
): Promise<Uint8Array[]> {
  // The targets the saved form holds (a target without tools is left out).
  const targets: string[] = [];
  const digests: Uint8Array[] = [];
  for (const { target } of catalog.header.targets) {
    const { hash, definitions } = taken.get(target)!;
    targets.push(
      JSON.stringify({
        target,
        hash,
        ...(definitions && { names: definitions.names }),
        ...(definitions && covered?.inspected.has(target) && { pinned: true }),
      }),
    );
    if (definitions !== undefined) digests.push(definitions.digests);
    if (targets.length % TARGET_STEP === 0) await nextTurn();
  }
  const pins = covered === undefined ? '' : `,"pins":"${covered.digest}"`;
  const text = `{"targets":[${targets.join(',')}]${pins},"catalog":${JSON.stringify(catalog.header)}}`;
  const header = Buffer.alloc(
    Math.ceil(Buffer.byteLength(text) / ALIGN) * ALIGN,
    0x20,
  );
  header.write(text, 'utf8');
  const end = digests.reduce(
    (sum, digest) => sum + digest.byteLength,
    HEADER_AT + header.length,
  );
  const fixed = Buffer.alloc(HEADER_AT);
  MAGIC.copy(fixed, 0);
  fixed.writeUInt32LE(INDEX_CACHE_VERSION, 8);
  fixed.writeUInt32LE(header.length, 12);
  return [
    fixed,
    header,
    ...digests,
    new Uint8Array((ALIGN - (end % ALIGN)) % ALIGN),
  ];
}

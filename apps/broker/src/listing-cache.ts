import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { GatewayTool } from './types.js';
import { describeSavedBackend, type Backend } from '@heretek/catalog';
import { z } from 'zod';
import { errorText } from './error-text.js';
import { issueLines } from './issue-text.js';
import { isMissing, isRecord, writeFileAtomic } from './trust/state-file.js';

/** Version of the index cache file layout this module reads and writes. */
export const INDEX_CACHE_VERSION = 3;

/** One backend's part of the index cache. */
export type CachedListing = {
  /** {@link listingHash} of the listing the part was built from. */
  hash: string;
  /**
   * The catalog's compact saved part (`ToolCatalog.saveBackend`, keyed by
   * `hash`), checked whole by `restoreBackends` on load; its bytes as they
   * are in the file, after its line.
   */
  part: Uint8Array;
  /**
   * Each tool's definition hash (qualified name to `sha256:<hex>`, as the
   * pins file keeps it) when the trust layer reviewed the listing: a
   * restarted broker serves the part only if every one equals its pin.
   */
  definitions?: Record<string, string>;
};

/** A listing as the trust layer let it through, with its tools' definition hashes when it pins. */
export type Reviewed = {
  tools: readonly GatewayTool[];
  definitions?: Record<string, string>;
};

/** Which cached backends may be served at start (their tools match the pins), and what to do once one is. */
export type CachedAdmission = {
  admitted: ReadonlySet<string>;
  /** Called for each admitted target once its part is in the catalog. */
  served: (target: string) => void;
};

const headerSchema = z.object({
  version: z.literal(INDEX_CACHE_VERSION),
});

const sha256 = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, 'a "sha256:<hex>" string');

const lineSchema = z.object({
  target: z.string().min(1),
  hash: sha256,
  bytes: z
    .number()
    .int()
    .nonnegative('the length of the saved catalog part after the line'),
  definitions: z.record(z.string(), sha256).optional(),
});

const NEWLINE = 0x0a;
const LINE_END = Buffer.from('\n');

/** Backends whose lines are parsed (or written) between two yields to other work. */
const LINES_PER_SLICE = 25;

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
 * Whether a part was saved for this target, listing hash, backend and
 * profile, from its header (a part whose header cannot be read is left to
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
    info.key === listing.hash &&
    info.backends.every((name) => name === backend.backend) &&
    info.profiles.every((profile) => profile === backend.profile)
  );
}

/**
 * The built index's parts, kept in the state folder beside the pins and
 * usage files (`HERETEK_INDEX_CACHE_FILE`): a version line, then for each
 * backend a JSON line (the hash of the backend's last listing, its tools'
 * definition hashes, and the byte length of its part) followed by the
 * catalog's compact saved part of it (entries and analyzed terms, as bytes,
 * so loading neither decodes text nor base64) and a newline. A restarted
 * broker restores it in one build
 * before the first listing answers, so every tool is searchable at once;
 * rediscovery then replaces the backends whose listing changed. A file that cannot be read as this version's cache is ignored with
 * one log line and written afresh after discovery; it is never trusted in
 * part.
 */
export class IndexCache {
  readonly file: string;
  readonly #log: (line: string) => void;
  #warnedWrite = false;
  #writing: Promise<void> = Promise.resolve();

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
   * The cached parts of the configured backends whose backend and profile
   * are still the same (others are stale and dropped: discovery lists them).
   * Empty when there is no file, and empty with one log line when the file is
   * not a cache this broker can read. Parses a slice of backends at a time,
   * yielding between slices.
   */
  async load(
    backends: ReadonlyMap<string, Backend>,
  ): Promise<Map<string, CachedListing>> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.file);
    } catch (error) {
      if (isMissing(error)) return new Map();
      this.ignored(`not readable: ${errorText(error)}`);
      return new Map();
    }
    const loaded = new Map<string, CachedListing>();
    let at = 0;
    for (let index = 0; at < bytes.length; index += 1) {
      if (index % LINES_PER_SLICE === LINES_PER_SLICE - 1)
        await yieldToOthers();
      const next = this.#lineProblem(bytes, at, index, loaded);
      if (typeof next === 'string') {
        this.ignored(next);
        return new Map();
      }
      at = next;
    }
    for (const [target, listing] of loaded) {
      const backend = backends.get(target);
      if (backend === undefined || !builtFor(listing, target, backend))
        loaded.delete(target);
    }
    return loaded;
  }

  /**
   * What is wrong with line `index` at `at` (the version line first), else
   * adds it and the part after it to `loaded` and returns where the next
   * line starts.
   */
  #lineProblem(
    bytes: Buffer,
    at: number,
    index: number,
    loaded: Map<string, CachedListing>,
  ): string | number {
    const end = bytes.indexOf(NEWLINE, at);
    let json: unknown;
    try {
      json = JSON.parse(
        bytes.toString('utf8', at, end === -1 ? bytes.length : end),
      );
    } catch (error) {
      return `line ${index + 1} is not JSON: ${errorText(error)}`;
    }
    if (index === 0) {
      if (headerSchema.safeParse(json).success && end !== -1) return end + 1;
      const version = isRecord(json) ? json.version : undefined;
      return `format version ${JSON.stringify(version)}, this broker reads ${INDEX_CACHE_VERSION}`;
    }
    const parsed = lineSchema.safeParse(json);
    if (!parsed.success)
      return `line ${index + 1}: ${
        issueLines({
          issues: parsed.error.issues,
          input: json,
          root: 'line',
        })[0] ?? 'not a backend part'
      }`;
    const partEnd = end + 1 + parsed.data.bytes;
    if (end === -1 || bytes[partEnd] !== NEWLINE)
      return `line ${index + 1}: the part of "${parsed.data.target}" is cut short or longer than its line says`;
    if (loaded.has(parsed.data.target))
      return `line ${index + 1}: target "${parsed.data.target}" appears twice`;
    loaded.set(parsed.data.target, {
      hash: parsed.data.hash,
      // A copy: the file's bytes are not kept for the life of a part.
      part: Uint8Array.prototype.slice.call(bytes, end + 1, partEnd),
      ...(parsed.data.definitions === undefined
        ? {}
        : { definitions: parsed.data.definitions }),
    });
    return partEnd + 1;
  }

  /**
   * Writes the cache (atomically, mode 0600), taking and serializing a slice
   * of backends at a time (`listings` may be a generator that exports each
   * part as it is asked for). A failure is logged once and never stops the
   * broker: the next start rebuilds from discovery.
   */
  save(listings: Iterable<[string, CachedListing]>): Promise<void> {
    const run = this.#writing.then(async () => {
      const chunks: Uint8Array[] = [
        Buffer.from(`${JSON.stringify({ version: INDEX_CACHE_VERSION })}\n`),
      ];
      let count = 0;
      for (const [target, { hash, part, definitions }] of listings) {
        chunks.push(
          Buffer.from(
            `${JSON.stringify({ target, hash, bytes: part.byteLength, definitions })}\n`,
          ),
          part,
          LINE_END,
        );
        count += 1;
        if (count % LINES_PER_SLICE === 0) await yieldToOthers();
      }
      try {
        await writeFileAtomic(this.file, Buffer.concat(chunks));
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

import { createHash } from 'node:crypto';
import type { GatewayTool } from './types.js';
import { describeSavedBackend, type Backend } from '@heretek/catalog';
import { z } from 'zod';
import { errorText } from './error-text.js';
import { issueLines } from './issue-text.js';
import {
  isRecord,
  readStateFile,
  writeFileAtomic,
} from './trust/state-file.js';

/** Version of the index cache file layout this module reads and writes. */
export const INDEX_CACHE_VERSION = 2;

/** One backend's part of the index cache. */
export type CachedListing = {
  /** {@link listingHash} of the listing the part was built from. */
  hash: string;
  /**
   * The catalog's compact saved part (`ToolCatalog.saveBackend`, keyed by
   * `hash`), checked whole by `restoreBackends` on load; base64 in the file.
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
  part: z.base64('base64 of a saved catalog part'),
  definitions: z.record(z.string(), sha256).optional(),
});

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
 * usage files (`HERETEK_INDEX_CACHE_FILE`), one JSON line per backend after
 * a version line: the hash of the backend's last listing, its tools'
 * definition hashes, and the catalog's compact saved part of it (entries and
 * analyzed terms, base64). A restarted broker restores it in one build
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
    let text: string | undefined;
    try {
      text = await readStateFile(this.file);
    } catch (error) {
      this.ignored(`not readable: ${errorText(error)}`);
      return new Map();
    }
    if (text === undefined) return new Map();
    const lines = text.split('\n').filter((line) => line !== '');
    const loaded = new Map<string, CachedListing>();
    for (let index = 0; index < lines.length; index += 1) {
      if (index % LINES_PER_SLICE === LINES_PER_SLICE - 1)
        await yieldToOthers();
      const problem = this.#lineProblem(lines[index]!, index, loaded);
      if (problem !== undefined) {
        this.ignored(problem);
        return new Map();
      }
    }
    for (const [target, listing] of loaded) {
      const backend = backends.get(target);
      if (backend === undefined || !builtFor(listing, target, backend))
        loaded.delete(target);
    }
    return loaded;
  }

  /** What is wrong with line `index` (the version line first), else adds it to `loaded`. */
  #lineProblem(
    line: string,
    index: number,
    loaded: Map<string, CachedListing>,
  ): string | undefined {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      return `line ${index + 1} is not JSON: ${errorText(error)}`;
    }
    if (index === 0) {
      if (headerSchema.safeParse(json).success) return undefined;
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
    if (loaded.has(parsed.data.target))
      return `line ${index + 1}: target "${parsed.data.target}" appears twice`;
    loaded.set(parsed.data.target, {
      hash: parsed.data.hash,
      part: Buffer.from(parsed.data.part, 'base64'),
      ...(parsed.data.definitions === undefined
        ? {}
        : { definitions: parsed.data.definitions }),
    });
    return undefined;
  }

  /**
   * Writes the cache (atomically, mode 0600), taking and serializing a slice
   * of backends at a time (`listings` may be a generator that exports each
   * part as it is asked for). A failure is logged once and never stops the
   * broker: the next start rebuilds from discovery.
   */
  save(listings: Iterable<[string, CachedListing]>): Promise<void> {
    // The file is written a line at a time as each is made: a thousand
    // backends' parts are never one string in memory.
    async function* text() {
      yield `${JSON.stringify({ version: INDEX_CACHE_VERSION })}\n`;
      let count = 1;
      for (const [target, { hash, part, definitions }] of listings) {
        yield `${JSON.stringify({
          target,
          hash,
          part: Buffer.from(
            part.buffer,
            part.byteOffset,
            part.byteLength,
          ).toString('base64'),
          definitions,
        })}\n`;
        count += 1;
        if (count % LINES_PER_SLICE === 0) await yieldToOthers();
      }
    }
    const run = this.#writing.then(async () => {
      try {
        await writeFileAtomic(this.file, text());
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

import { createHash } from 'node:crypto';
import type { Backend, ToolEntry } from '@heretek/catalog';
import { z } from 'zod';
import { errorText } from './error-text.js';
import { issueLines } from './issue-text.js';
import { readStateFile, writeFileAtomic } from './trust/state-file.js';

/** Version of the index cache format this module reads and writes. */
export const INDEX_CACHE_VERSION = 1;

/** One backend's part of the index cache: the hash of its last listing and the catalog entries made from it. */
export type CachedListing = {
  /** {@link listingHash} of the listing the entries were made from. */
  hash: string;
  /** The catalog entries, as discovery made them (reviewed by the trust layer). */
  entries: ToolEntry[];
};

const entrySchema = z
  .object({
    name: z.string(),
    target: z.string(),
    tool: z.string(),
    backend: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    annotations: z.record(z.string(), z.unknown()).optional(),
    mutating: z.boolean(),
    profile: z.string(),
    source: z.literal('discovered'),
    taskSupport: z.enum(['forbidden', 'optional', 'required']).optional(),
  })
  .strict();

const cacheSchema = z.object({
  version: z.literal(INDEX_CACHE_VERSION, {
    error: `version must be ${INDEX_CACHE_VERSION}`,
  }),
  backends: z.record(
    z.string(),
    z.object({
      hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
      entries: z.array(entrySchema),
    }),
  ),
});

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
 * The built index's input, kept in the state folder beside the pins and usage
 * files (`HERETEK_INDEX_CACHE_FILE`): per backend, the hash of its last
 * listing and the catalog entries discovery made from it. A restarted broker
 * loads it before the first listing answers, so every tool is searchable at
 * once; rediscovery then replaces the backends whose listing changed. A file
 * that cannot be read as this version's cache is ignored with one log line
 * and written afresh after discovery; it is never trusted in part.
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

  /**
   * The cached listings of the configured backends whose backend and profile
   * are still the same (others are dropped: the next discovery lists them).
   * Empty, with one log line, when the file is missing a usable cache.
   */
  async load(
    backends: ReadonlyMap<string, Backend>,
  ): Promise<Map<string, CachedListing>> {
    let text: string | undefined;
    try {
      text = await readStateFile(this.file);
    } catch (error) {
      this.#log(
        `index cache: ${this.file} not read (${errorText(error)}); building the index from discovery`,
      );
      return new Map();
    }
    if (text === undefined) return new Map();
    const problem = (what: string) => {
      this.#log(
        `index cache: ${this.file} ignored (${what}); building the index from discovery and writing it again`,
      );
      return new Map<string, CachedListing>();
    };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      return problem(`not JSON: ${errorText(error)}`);
    }
    const version = (json as { version?: unknown } | null)?.version;
    if (version !== INDEX_CACHE_VERSION)
      return problem(
        `format version ${JSON.stringify(version)}, this broker reads ${INDEX_CACHE_VERSION}`,
      );
    const parsed = cacheSchema.safeParse(json);
    if (!parsed.success)
      return problem(
        issueLines({
          issues: parsed.error.issues,
          input: json,
          root: 'cache',
        })[0] ?? 'not an index cache',
      );
    const loaded = new Map<string, CachedListing>();
    for (const [target, part] of Object.entries(parsed.data.backends)) {
      const backend = backends.get(target);
      if (
        backend === undefined ||
        part.entries.some(
          (entry) =>
            entry.target !== target ||
            entry.backend !== backend.backend ||
            entry.profile !== backend.profile,
        )
      )
        continue;
      loaded.set(target, part as CachedListing);
    }
    return loaded;
  }

  /**
   * Writes the cache (atomically, mode 0600). A failure is logged once and
   * never stops the broker: the next start rebuilds from discovery.
   */
  save(listings: ReadonlyMap<string, CachedListing>): Promise<void> {
    const run = this.#writing.then(async () => {
      const backends: Record<string, CachedListing> = {};
      for (const [target, part] of listings) backends[target] = part;
      const text = JSON.stringify({
        version: INDEX_CACHE_VERSION,
        backends,
      });
      try {
        await writeFileAtomic(this.file, text);
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

import { constants } from 'node:fs';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import {
  STATE_FILE_MODE,
  ensureStateDir,
  isMissing,
  processAlive,
  readStateFile,
  writeFileAtomic,
} from '../trust/state-file.js';
import { z } from 'zod';
import { errorText } from '../error-text.js';
import { issueLines } from '../issue-text.js';

/**
 * The local file of learned uses (a search followed by a successful call of one of its
 * hits), one JSON object per line:
 * `{"v":1,"at":"2026-11-30T16:00:00.000Z","tool":"github_create_issue","terms":["create","issue"]}`.
 * `terms` are the catalog's search terms, never the raw text, and nothing else is kept (no
 * arguments, results, user or machine name). Files of several people merge by concatenation.
 *
 * Brokers share one file: each append (one `O_APPEND` write of one whole line) and each
 * compaction (the newest valid lines written to a temporary file renamed over the log) runs
 * under `<file>.lock`, so no append is lost. A lock of a dead process, or older than
 * {@link USAGE_LOCK_STALE_MS}, is removed; an append that cannot have the lock within
 * {@link USAGE_LOCK_WAIT_MS} writes without it and leaves compaction to a later one. A symlink
 * at the path is refused (`O_NOFOLLOW`). Nothing here throws: a problem comes back as a
 * {@link UsageStatus} and each kind is logged once.
 */

/** Version written in each line's `v`. */
const USAGE_LINE_VERSION = 1;
/** The file is compacted when it grows over this many bytes (2 MiB). */
const USAGE_FILE_MAX_BYTES = 2 * 1024 * 1024;
/** Compaction keeps the newest lines that fit in this many bytes (1.5 MiB). */
const USAGE_COMPACT_TO_BYTES = 1.5 * 1024 * 1024;
/** Terms kept per use (the first ones). */
const USAGE_MAX_TERMS = 32;
/** Longest term kept, in characters (longer ones are dropped). */
const USAGE_MAX_TERM_LENGTH = 64;
/** Longest tool name accepted. */
const USAGE_MAX_TOOL_LENGTH = 512;
/** How long an append waits for the lock before writing without it. */
const USAGE_LOCK_WAIT_MS = 10_000;
/** A lock older than this is taken to be left behind by a crash. */
const USAGE_LOCK_STALE_MS = 10_000;

/** One learned use: the ISO 8601 time of the call, the tool's qualified name, the request's catalog search terms. */
export type UsageRecord = Omit<z.infer<typeof usageLineSchema>, 'v'>;

/** Outcome of a usage-file operation; `ok: false` never stops the broker. */
type UsageStatus =
  | { ok: true }
  | {
      ok: false;
      /** `empty-use`: nothing to record (no terms or no tool). */
      problem: 'disabled' | 'unreadable' | 'unwritable' | 'empty-use';
      message: string;
    };

/** What {@link UsageLog.load} read. */
export type UsageLoad = {
  status: UsageStatus;
  /** Valid uses, oldest first. */
  records: UsageRecord[];
  /** Lines skipped because they are not valid uses. */
  corruptLines: number;
};

const usageLineSchema = z.object(
  {
    v: z.literal(USAGE_LINE_VERSION, {
      error: `${USAGE_LINE_VERSION} (the only usage line version)`,
    }),
    at: z
      .string({ error: 'an ISO 8601 time' })
      .refine((at) => !Number.isNaN(Date.parse(at)), {
        error: 'is not a time: give an ISO 8601 time',
      }),
    tool: z
      .string({ error: 'a qualified tool name' })
      .min(1, { error: 'a qualified tool name' })
      .max(USAGE_MAX_TOOL_LENGTH, {
        error: `a tool name of at most ${USAGE_MAX_TOOL_LENGTH} characters`,
      }),
    terms: z
      .array(
        z
          .string({ error: 'a search term' })
          .min(1, { error: 'a search term' })
          .max(USAGE_MAX_TERM_LENGTH, {
            error: `a term of at most ${USAGE_MAX_TERM_LENGTH} characters`,
          }),
        { error: 'an array of search terms' },
      )
      .min(1, { error: `1 to ${USAGE_MAX_TERMS} search terms` })
      .max(USAGE_MAX_TERMS, { error: `1 to ${USAGE_MAX_TERMS} search terms` }),
  },
  { error: 'a JSON object' },
);

/** Checks one line: the use, or what is wrong with it (one phrase a problem). */
function checkUsageLine(
  line: string,
): { record: UsageRecord } | { problems: string[] } {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { problems: ['not JSON'] };
  }
  const parsed = usageLineSchema.safeParse(data);
  if (!parsed.success)
    return {
      problems: issueLines({
        issues: parsed.error.issues.slice(0, 3),
        input: data,
        root: 'the line',
      }),
    };
  const { at, tool, terms } = parsed.data;
  return { record: { at, tool, terms } };
}

function cleanTerms(terms: readonly string[]): string[] {
  return terms
    .map((term) => term.trim())
    .filter((term) => term !== '' && term.length <= USAGE_MAX_TERM_LENGTH)
    .slice(0, USAGE_MAX_TERMS);
}

const DISABLED: UsageStatus = {
  ok: false,
  problem: 'disabled',
  message: 'usage learning is off',
};

/** The usage file (see this module's header); constructing it does no I/O. */
export class UsageLog {
  /** The file, or `undefined` when learning is off. */
  readonly file: string | undefined;
  readonly #log: (line: string) => void;
  readonly #logged = new Set<string>();

  constructor(options: {
    /** The usage file; `'off'` disables learning. */
    file: string;
    /** Diagnostic sink; each kind of problem is logged once. */
    log?: (line: string) => void;
  }) {
    this.file =
      options.file.trim().toLowerCase() === 'off'
        ? undefined
        : path.resolve(options.file);
    this.#log = options.log ?? (() => {});
  }

  /** True unless the file is `off`. */
  get enabled(): boolean {
    return this.file !== undefined;
  }

  #problem(
    problem: 'unreadable' | 'unwritable',
    error: unknown,
  ): Extract<UsageStatus, { ok: false }> {
    const message = `usage file ${this.file ?? ''} is ${problem} (${errorText(error)}); search keeps working without learned uses${problem === 'unwritable' ? ' being saved' : ''}`;
    if (!this.#logged.has(problem)) {
      this.#logged.add(problem);
      this.#log(message);
    }
    return { ok: false, problem, message };
  }

  /** Reads every valid use, oldest first; corrupt lines are skipped with one warning. */
  async load(): Promise<UsageLoad> {
    let text: string | undefined;
    try {
      if (this.file !== undefined) text = await readStateFile(this.file);
    } catch (error) {
      return {
        status: this.#problem('unreadable', error),
        records: [],
        corruptLines: 0,
      };
    }
    if (text === undefined) {
      const status = this.file === undefined ? DISABLED : { ok: true as const };
      return { status, records: [], corruptLines: 0 };
    }
    const records: UsageRecord[] = [];
    let corruptLines = 0;
    let first: { line: number; problems: string[] } | undefined;
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return;
      const checked = checkUsageLine(line);
      if ('record' in checked) {
        records.push(checked.record);
        return;
      }
      corruptLines += 1;
      first ??= { line: index + 1, problems: checked.problems };
    });
    if (first !== undefined)
      this.#log(
        `usage file ${this.file}: skipped ${corruptLines} corrupt line${corruptLines === 1 ? '' : 's'} (first at line ${first.line}); they are dropped at the next compaction. Line ${first.line}: ${first.problems.join('; ')}`,
      );
    return { status: { ok: true }, records, corruptLines };
  }

  /** Appends one use (terms cleaned, see `cleanTerms`) and compacts when over the cap. */
  async append(use: {
    terms: readonly string[];
    tool: string;
    at?: Date;
  }): Promise<UsageStatus> {
    if (this.file === undefined) return DISABLED;
    const terms = cleanTerms(use.terms);
    if (
      terms.length === 0 ||
      use.tool === '' ||
      use.tool.length > USAGE_MAX_TOOL_LENGTH
    ) {
      return {
        ok: false,
        problem: 'empty-use',
        message: 'a use needs search terms and a tool name',
      };
    }
    const at = (use.at ?? new Date()).toISOString();
    const line = `${JSON.stringify({ v: USAGE_LINE_VERSION, at, tool: use.tool, terms })}\n`;
    try {
      await ensureStateDir(this.file);
    } catch (error) {
      return this.#problem('unwritable', error);
    }
    const release = await this.#lock();
    try {
      const size = await this.#appendLine(line);
      if (release !== undefined && size > USAGE_FILE_MAX_BYTES)
        await this.#compactLocked();
      return { ok: true };
    } catch (error) {
      return this.#problem('unwritable', error);
    } finally {
      await release?.();
    }
  }

  /** One write; a missing final newline left by a crash is repaired first. */
  async #appendLine(line: string): Promise<number> {
    // O_NOFOLLOW: a symlink planted at the usage path is refused, not followed.
    const handle = await open(
      this.file as string,
      constants.O_RDWR |
        constants.O_APPEND |
        constants.O_CREAT |
        constants.O_NOFOLLOW,
      STATE_FILE_MODE,
    );
    try {
      const { size } = await handle.stat();
      let text = line;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) text = `\n${line}`;
      }
      await handle.write(text);
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  }

  /** Takes the lock file; `undefined` when it could not be had in time. */
  async #lock(): Promise<(() => Promise<void>) | undefined> {
    const lockFile = `${this.file as string}.lock`;
    const deadline = Date.now() + USAGE_LOCK_WAIT_MS;
    for (let attempt = 0; ; attempt += 1) {
      try {
        const handle = await open(lockFile, 'wx', STATE_FILE_MODE);
        await handle.write(`${process.pid}\n`);
        await handle.close();
        return () => rm(lockFile, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
          return undefined;
      }
      await this.#removeStaleLock(lockFile);
      if (Date.now() >= deadline) return undefined;
      await sleep(Math.min(50, 2 + attempt * 3 + Math.random() * 5));
    }
  }

  async #removeStaleLock(lockFile: string): Promise<void> {
    try {
      const [text, info] = await Promise.all([
        readFile(lockFile, 'utf8'),
        stat(lockFile),
      ]);
      const pid = Number.parseInt(text, 10);
      const dead = Number.isInteger(pid) && pid > 0 && !processAlive(pid);
      if (dead || Date.now() - info.mtimeMs > USAGE_LOCK_STALE_MS)
        await rm(lockFile, { force: true });
    } catch {
      // Gone already, or being written: try again.
    }
  }

  /** Keeps the newest valid lines that fit in the compaction size (under the lock). */
  async #compactLocked(): Promise<void> {
    const file = this.file as string;
    const text = await readStateFile(file);
    if (text === undefined) return;
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const kept: string[] = [];
    let bytes = 0;
    for (let index = lines.length - 1; index >= 0; index -= 1) {
      const line = lines[index] as string;
      if (!('record' in checkUsageLine(line))) continue;
      const size = Buffer.byteLength(line) + 1;
      if (bytes + size > USAGE_COMPACT_TO_BYTES) break;
      kept.push(line);
      bytes += size;
    }
    kept.reverse();
    await writeFileAtomic(file, kept.length > 0 ? `${kept.join('\n')}\n` : '');
  }

  /** The `--check` line, e.g. `usage file <path>: 12.4 KiB, 96 uses (compacted over 2.0 MiB)`. */
  async describe(): Promise<string> {
    if (this.file === undefined)
      return 'usage file: off (learning from use is disabled)';
    const where = `usage file ${this.file}`;
    let sizeBytes: number;
    try {
      sizeBytes = (await stat(this.file)).size;
    } catch (error) {
      return isMissing(error)
        ? `${where}: not created yet (0 uses)`
        : `${where}: ${this.#problem('unreadable', error).message}`;
    }
    const { status, records, corruptLines } = await this.load();
    if (!status.ok) return `${where}: ${status.message}`;
    const corrupt =
      corruptLines > 0
        ? `, ${corruptLines} corrupt line${corruptLines === 1 ? '' : 's'} skipped`
        : '';
    return `${where}: ${formatBytes(sizeBytes)}, ${records.length} use${records.length === 1 ? '' : 's'}${corrupt} (compacted over ${formatBytes(USAGE_FILE_MAX_BYTES)})`;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

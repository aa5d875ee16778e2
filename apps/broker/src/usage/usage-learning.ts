import { errorText } from '../error-text.js';
import { UseRecorder, type RecordedUse } from './use-recorder.js';
import {
  UsageLog,
  type UsageDescription,
  type UsageLoad,
} from './usage-log.js';

/**
 * Learning from use in one object: the search-then-call rule, the usage file
 * and the hand-off of each use to the catalog.
 *
 * - Start-up: `new UsageLearning({ file, log, onUse: (use) => catalog.recordUse(…) })`
 *   (no I/O), then `void learning.load()` once the first `tools/list` has been
 *   answered: every stored use goes to `onUse`, oldest first.
 * - Search: `learning.searched({ terms, hits })` with the query's catalog
 *   terms and the hit names returned to the agent.
 * - Call: `void learning.called({ tool, isError })` when `mcp_call_tool`
 *   finishes (`isError` also for a refused call); a use is appended to the
 *   file and given to `onUse`.
 * - `--check`: `formatUsageDescription(await learning.describe())`.
 *
 * With the file `off`, nothing is learned (not even for this run). Nothing
 * here throws or delays an answer; problems are logged once.
 */
export class UsageLearning {
  /** The usage file. */
  readonly usage: UsageLog;
  /** The search-then-call rule. */
  readonly recorder: UseRecorder;
  readonly #onUse: (use: RecordedUse) => void;
  readonly #log: (line: string) => void;
  #loading: Promise<UsageLoad> | undefined;

  constructor(options: {
    /** `HERETEK_USAGE_FILE` (a path, or `off`). */
    file: string;
    /** Gives a use to the catalog (stored ones at load, new ones as they happen). */
    onUse?: (use: RecordedUse) => void;
    log?: (line: string) => void;
    /** Passed to {@link UsageLog} (tests). */
    maxBytes?: number;
    /** Passed to {@link UseRecorder} (tests). */
    recorder?: UseRecorder;
  }) {
    this.#log = options.log ?? (() => {});
    this.#onUse = options.onUse ?? (() => {});
    this.usage = new UsageLog({
      file: options.file,
      log: this.#log,
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    });
    this.recorder = options.recorder ?? new UseRecorder();
  }

  #give(use: RecordedUse): void {
    try {
      this.#onUse(use);
    } catch (error) {
      this.#log(
        `usage: a use of "${use.tool}" was not taken: ${errorText(error)}`,
      );
    }
  }

  /** Reads the file once (later calls share the first load) and hands every use to `onUse`. */
  load(): Promise<UsageLoad> {
    this.#loading ??= this.usage.load().then((loaded) => {
      for (const record of loaded.records) {
        this.#give({ terms: record.terms, tool: record.tool });
      }
      if (loaded.records.length > 0) {
        this.#log(
          `usage: learned from ${loaded.records.length} earlier use${loaded.records.length === 1 ? '' : 's'} in ${this.usage.file ?? ''}`,
        );
      }
      return loaded;
    });
    return this.#loading;
  }

  /** True unless the usage file is `off` (which turns learning off altogether). */
  get enabled(): boolean {
    return this.usage.enabled;
  }

  /** An answered search: its catalog terms and the names of its hits. */
  searched(search: {
    terms: readonly string[];
    hits: readonly string[];
  }): void {
    if (this.enabled) this.recorder.searched(search);
  }

  /** A finished call; returns the use it made (already saved and handed on), if any. */
  async called(call: {
    tool: string;
    isError: boolean;
  }): Promise<RecordedUse | undefined> {
    const use = this.recorder.called(call);
    if (use === undefined) return undefined;
    this.#give(use);
    await this.usage.append(use);
    return use;
  }

  /** The file, its size and its uses, for `--check`. */
  describe(): Promise<UsageDescription> {
    return this.usage.describe();
  }
}

import type { UsageRecord } from '@heretek/catalog';
import { errorText } from '../error-text.js';
import { UseRecorder } from './use-recorder.js';
import { UsageLog, type UsageLoad } from './usage-log.js';

/**
 * Learning from use in one object: the search-then-call rule ({@link UseRecorder}), the
 * usage file ({@link UsageLog}) and the hand-off of each use to the catalog (`onUse`). With
 * the file `off` nothing is learned, not even for this run. Nothing here throws or delays
 * an answer; problems are logged once.
 */
export class UsageLearning {
  readonly #usage: UsageLog;
  readonly #recorder = new UseRecorder();
  readonly #onUse: (use: UsageRecord) => void;
  readonly #log: (line: string) => void;
  #loading: Promise<UsageLoad> | undefined;

  constructor(options: {
    /** `HERETEK_USAGE_FILE` (a path, or `off`). */
    file: string;
    /** Gives a use to the catalog (stored ones at load, new ones as they happen). */
    onUse?: (use: UsageRecord) => void;
    log?: (line: string) => void;
  }) {
    this.#log = options.log ?? (() => {});
    this.#onUse = options.onUse ?? (() => {});
    this.#usage = new UsageLog({ file: options.file, log: this.#log });
  }

  #give(use: UsageRecord): void {
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
    this.#loading ??= this.#usage.load().then((loaded) => {
      for (const record of loaded.records)
        this.#give({ terms: record.terms, tool: record.tool });
      if (loaded.records.length > 0)
        this.#log(
          `usage: learned from ${loaded.records.length} earlier use${loaded.records.length === 1 ? '' : 's'} in ${this.#usage.file ?? ''}`,
        );
      return loaded;
    });
    return this.#loading;
  }

  /** True unless the usage file is `off` (which turns learning off altogether). */
  get enabled(): boolean {
    return this.#usage.enabled;
  }

  /** An answered search: its catalog terms and the names of its hits. */
  searched(search: {
    terms: readonly string[];
    hits: readonly string[];
  }): void {
    if (this.enabled) this.#recorder.searched(search);
  }

  /** A finished call (`isError` also for a refused one); returns the use it made, already saved and handed on. */
  async called(call: {
    tool: string;
    isError: boolean;
  }): Promise<UsageRecord | undefined> {
    const use = this.#recorder.called(call);
    if (use === undefined) return undefined;
    this.#give(use);
    await this.#usage.append(use);
    return use;
  }

  /** The usage file's `--check` line. */
  describe(): Promise<string> {
    return this.#usage.describe();
  }
}

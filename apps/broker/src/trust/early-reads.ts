import path from 'node:path';

/**
 * Reads of state files started before the broker loaded its configuration,
 * by absolute path: the part that opens a file takes its read once (later
 * reads start afresh). A read nobody takes is left to settle unobserved.
 */
export class EarlyReads<T> {
  readonly #reads = new Map<string, Promise<T>>();

  /** Keeps `read` of `file` for the part that opens that file. */
  start(file: string, read: Promise<T>): void {
    // Whoever takes it sees how it ended.
    read.catch(() => {});
    this.#reads.set(path.resolve(file), read);
  }

  /** The read started of `file`, once. */
  take(file: string): Promise<T> | undefined {
    const key = path.resolve(file);
    const read = this.#reads.get(key);
    this.#reads.delete(key);
    return read;
  }

  /** Drops every read not yet taken. */
  clear(): void {
    this.#reads.clear();
  }
}

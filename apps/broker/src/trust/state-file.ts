import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import {
  mkdir,
  open,
  readFile,
  readdir,
  rename,
  rm,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * The broker's state files (pins, usage) follow one set of rules: a file is
 * created with mode 0600 in a folder created with mode 0700, a whole-file
 * write is atomic and flushed ({@link writeFileAtomic}), and a file that is
 * not there (or whose parent is not a folder) counts as empty, never as an
 * error ({@link isMissing}).
 */

/** Mode of a state file: the owner reads and writes, nobody else. */
export const STATE_FILE_MODE = 0o600;

/** A plain JSON object (not `null`, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The missing-file rule: the file is not there, or a parent of it is not a folder. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The file's text, or `undefined` when it is missing (see {@link isMissing}). */
export async function readStateFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Creates the folder of `file` (mode 0700) when it is missing. */
export async function ensureStateDir(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
}

/**
 * Writes `text` to `file` atomically: a temporary file (mode 0600) in the
 * same folder, flushed with fsync, then renamed over `file`. The folder is
 * created (mode 0700) when missing. On failure the temporary file is removed
 * and `file` is as it was. `text` may be a function that writes the content
 * to the open temporary file itself (so a large file is written a piece at a
 * time, never held whole). Resolves with the written file's status (its
 * inode, size and modification time), taken before the rename.
 */
export async function writeFileAtomic(
  file: string,
  text: string | ((handle: FileHandle) => Promise<void>),
): Promise<Stats> {
  await ensureStateDir(file);
  const temporary = path.join(
    path.dirname(file),
    `${temporaryPrefix(file)}${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temporary, 'wx', STATE_FILE_MODE);
    let stats: Stats;
    try {
      if (typeof text === 'function') await text(handle);
      else await handle.writeFile(text, 'utf8');
      await handle.sync();
      stats = await handle.stat();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
    return stats;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Pieces handed to one `writev` (under the usual IOV_MAX of 1024). */
const WRITE_PIECES = 1_000;

/**
 * Writes every byte of `pieces`, in order, at the file's position, without
 * first copying them into one buffer.
 */
export async function writeAll(
  handle: FileHandle,
  pieces: readonly Uint8Array[],
): Promise<void> {
  for (let at = 0; at < pieces.length; at += WRITE_PIECES) {
    let rest = pieces
      .slice(at, at + WRITE_PIECES)
      .filter((piece) => piece.byteLength > 0);
    while (rest.length > 0) {
      let { bytesWritten } = await handle.writev(rest);
      // A short write: skip what went out and write the rest.
      let done = 0;
      while (done < rest.length && bytesWritten >= rest[done]!.byteLength) {
        bytesWritten -= rest[done]!.byteLength;
        done += 1;
      }
      rest = rest.slice(done);
      if (bytesWritten > 0 && rest.length > 0)
        rest[0] = rest[0]!.subarray(bytesWritten);
    }
  }
}

/** Whether process `pid` exists (a signal 0 reaches it, or it belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How the temporary files of `file`'s atomic writes begin: `.<name>.`. */
function temporaryPrefix(file: string): string {
  return `.${path.basename(file)}.`;
}

/**
 * Removes the temporary files of `file`'s atomic writes (`.<name>.<pid>.<hex>.tmp`
 * beside it) whose process is gone: a broker stopped during a write leaves
 * one. Those of another running process (a broker writing) are left alone;
 * this process writes none before this is done, so its own are stale (a
 * process id used again). Never rejects.
 */
export async function removeStaleTemporaryFiles(file: string): Promise<void> {
  const folder = path.dirname(file);
  const prefix = temporaryPrefix(file);
  for (const name of await readdir(folder).catch(() => [])) {
    if (!name.startsWith(prefix)) continue;
    const pid = TEMPORARY.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined) continue;
    if (Number(pid) !== process.pid && processAlive(Number(pid))) continue;
    await rm(path.join(folder, name), { force: true }).catch(() => {});
  }
}

/** The rest of a temporary file's name after `.<name>.`: its process id, random hex, `.tmp`. */
const TEMPORARY = /^(\d+)\.[0-9a-f]+\.tmp$/;

/**
 * One state file's operations, one at a time. A gathered write waits after
 * the last operation nine times as long as that took (at most five seconds),
 * so writing takes at most a tenth of the time, and the requests made
 * meanwhile join it: a thousand changes in a burst write a large file a few
 * times, not back to back. Other operations queue at once.
 */
export class FileQueue {
  #tail: Promise<unknown> = Promise.resolve();
  /** The gathered write not started yet, which later requests join. */
  #gathered: Promise<void> | undefined;
  #last = { took: 0, ended: -Infinity };
  /** Ends the wait for a quiet moment; after {@link flush}, there is none. */
  #hurry: (() => void) | undefined;
  #flushing = false;

  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(async () => {
      const started = performance.now();
      try {
        return await task();
      } finally {
        const ended = performance.now();
        this.#last = { took: ended - started, ended };
      }
    });
    this.#tail = run.catch(() => {});
    return run;
  }

  gather(task: () => Promise<void>): Promise<void> {
    this.#gathered ??= this.#tail.then(async () => {
      const { took, ended } = this.#last;
      const wait = ended + Math.min(5000, 9 * took) - performance.now();
      if (wait > 0 && !this.#flushing)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.#hurry = () => resolve(clearTimeout(timer));
        });
      this.#gathered = undefined;
      return this.run(task);
    });
    return this.#gathered;
  }

  /** Resolves once every operation asked for so far has ended (never rejects). */
  async idle(): Promise<void> {
    await this.#gathered?.catch(() => {});
    await this.#tail;
  }

  /** Ends the waits for a quiet moment, now and from now on (shutdown); resolves once idle. */
  flush(): Promise<void> {
    this.#flushing = true;
    this.#hurry?.();
    return this.idle();
  }
}

/** The stamp of a file as read or written: inode, size and modification time. */
export function stampOf(stats: {
  mtimeMs: number;
  size: number;
  ino: number;
}): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

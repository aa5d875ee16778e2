import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * The broker's state files (pins, usage) follow one set of rules: a file is
 * created with mode 0600 in a folder created with mode 0700, a whole-file
 * write is atomic and flushed ({@link writeFileAtomic}), and a file that is
 * not there (or whose parent is not a folder) counts as empty, never as an
 * error ({@link isMissing}).
 */

/** Mode of a state file: the owner reads and writes, nobody else. */
export const STATE_FILE_MODE = 0o600;
/** Mode of a folder the broker creates for its state files. */
export const STATE_DIR_MODE = 0o700;

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
  await mkdir(path.dirname(file), { recursive: true, mode: STATE_DIR_MODE });
}

/**
 * Writes `text` to `file` atomically: a temporary file (mode 0600) in the
 * same folder, flushed with fsync, then renamed over `file`. The folder is
 * created (mode 0700) when missing. On failure the temporary file is removed
 * and `file` is as it was. Resolves with the written file's status (its
 * inode, size and modification time), taken before the rename.
 */
export async function writeFileAtomic(
  file: string,
  text: string | Uint8Array,
): Promise<Stats> {
  await ensureStateDir(file);
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temporary, 'wx', STATE_FILE_MODE);
    let stats: Stats;
    try {
      await handle.writeFile(text, 'utf8');
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

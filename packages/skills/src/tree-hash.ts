import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
} from 'node:fs';
import { join } from 'node:path';
import { sha256Hex, sha256Tag } from '@heretek/internal';
import { SkillSymlinkError, SkillUnsupportedEntryError } from './errors.js';

/** Identifier of the tree-hash algorithm described in the package README. */
export const TREE_HASH_ALGORITHM = 'sha256-tree-v1';

/** One regular file of a hashed tree. */
export type TreeFileDigest = {
  /** Path relative to the tree root, `/`-separated. */
  path: string;
  /** Length in bytes. */
  size: number;
  /** Lowercase hex SHA-256 of the file's bytes. */
  digest: string;
};

/** One file of a tree with the exact bytes that were hashed. */
export type TreeFile = TreeFileDigest & {
  /** The bytes that were read once and hashed. */
  bytes: Uint8Array;
};

/** The result of hashing a tree. */
export type TreeHash = {
  /** `sha256:` followed by the lowercase hex SHA-256 of {@link TreeHash.listing}. */
  treeHash: string;
  /** Number of regular files. */
  fileCount: number;
  /** Files in listing order (sorted by the UTF-8 bytes of their paths). */
  files: TreeFileDigest[];
  /** The exact listing that was hashed: `<hex digest>␠␠<path>\n` per file. */
  listing: string;
};

/** A hashed tree that keeps every file's bytes. */
export type TreeContents = Omit<TreeHash, 'files'> & {
  /** Files in listing order, each with its bytes. */
  files: TreeFile[];
};

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

function decodeName({ raw, parent }: { raw: Buffer; parent: string }): string {
  let name: string;
  try {
    name = utf8.decode(raw);
  } catch {
    throw new SkillUnsupportedEntryError({
      entryPath: join(parent, raw.toString('latin1')),
      reason: 'file name is not valid UTF-8',
    });
  }
  // Control characters and backslashes are refused: they make listings ambiguous
  // (a newline would split a line) and sha256sum escapes them, so an independent
  // `sha256sum`-based check could not reproduce the listing.
  for (let index = 0; index < name.length; index += 1) {
    const code = name.charCodeAt(index);
    if (code < 0x20 || code === 0x7f || code === 0x5c) {
      throw new SkillUnsupportedEntryError({
        entryPath: join(parent, name),
        reason: `file name contains ${code === 0x5c ? 'a backslash' : `control character U+${code.toString(16).padStart(4, '0')}`}`,
      });
    }
  }
  return name;
}

type Found = { path: string; pathBytes: Buffer; absolutePath: string };

function walk({
  directory,
  relative,
  found,
}: {
  directory: string;
  relative: string;
  found: Found[];
}): void {
  const entries = readdirSync(directory, {
    withFileTypes: true,
    encoding: 'buffer',
  });
  for (const entry of entries) {
    const name = decodeName({ raw: entry.name, parent: directory });
    const absolutePath = join(directory, name);
    const path = relative === '' ? name : `${relative}/${name}`;
    if (entry.isSymbolicLink()) {
      throw new SkillSymlinkError({ linkPath: absolutePath });
    }
    if (entry.isDirectory()) {
      walk({ directory: absolutePath, relative: path, found });
    } else if (entry.isFile()) {
      found.push({ path, pathBytes: Buffer.from(path, 'utf8'), absolutePath });
    } else {
      throw new SkillUnsupportedEntryError({
        entryPath: absolutePath,
        reason: 'not a regular file or folder (FIFO, socket or device)',
      });
    }
  }
}

/**
 * Reads one file through a descriptor opened with O_NOFOLLOW, so a file
 * swapped for a link is refused. Reads until end of file, into `scratch`
 * (reused across files, grown on demand): the returned view is valid until
 * the next call.
 */
function readOnce({
  absolutePath,
  scratch,
}: {
  absolutePath: string;
  scratch: { buffer: Buffer };
}): Buffer {
  let descriptor: number;
  try {
    descriptor = openSync(absolutePath, constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new SkillSymlinkError({ linkPath: absolutePath });
    }
    throw error;
  }
  try {
    const stat = fstatSync(descriptor);
    if (!stat.isFile()) {
      throw new SkillUnsupportedEntryError({
        entryPath: absolutePath,
        reason: 'not a regular file',
      });
    }
    // One spare byte lets a read reveal growth after fstat; the loop reads to end of file.
    if (scratch.buffer.length < stat.size + 1) {
      scratch.buffer = Buffer.allocUnsafeSlow(
        Math.max(stat.size + 1, scratch.buffer.length * 2),
      );
    }
    let length = 0;
    for (;;) {
      if (length === scratch.buffer.length) {
        const grown = Buffer.allocUnsafeSlow(scratch.buffer.length * 2);
        scratch.buffer.copy(grown, 0, 0, length);
        scratch.buffer = grown;
      }
      const read = readSync(
        descriptor,
        scratch.buffer,
        length,
        scratch.buffer.length - length,
        null,
      );
      if (read === 0) {
        break;
      }
      length += read;
    }
    return scratch.buffer.subarray(0, length);
  } finally {
    closeSync(descriptor);
  }
}

function collect({ directory }: { directory: string }): Found[] {
  const rootStat = lstatSync(directory);
  if (rootStat.isSymbolicLink()) {
    throw new SkillSymlinkError({ linkPath: directory });
  }
  if (!rootStat.isDirectory()) {
    throw new SkillUnsupportedEntryError({
      entryPath: directory,
      reason: 'a skill must be a folder',
    });
  }
  const found: Found[] = [];
  walk({ directory, relative: '', found });
  found.sort((left, right) => Buffer.compare(left.pathBytes, right.pathBytes));
  return found;
}

/** Which file bytes to keep while hashing: none, only the root `SKILL.md`, or all. */
export type KeepBytes = 'none' | 'skill-md' | 'all';

/** Internal: hashes a folder, keeping the bytes `keep` asks for (each file is read exactly once). */
export function hashDirectory({
  directory,
  keep,
}: {
  directory: string;
  keep: KeepBytes;
}): Omit<TreeHash, 'files'> & {
  files: (TreeFileDigest & { bytes?: Uint8Array })[];
} {
  const found = collect({ directory });
  const scratch = { buffer: Buffer.allocUnsafeSlow(1 << 20) };
  const files: (TreeFileDigest & { bytes?: Uint8Array })[] = [];
  let listing = '';
  for (const { path, absolutePath } of found) {
    const kept = keep === 'all' || (keep === 'skill-md' && path === 'SKILL.md');
    const bytes = readOnce({ absolutePath, scratch });
    const digest = sha256Hex(bytes);
    listing += `${digest}  ${path}\n`;
    files.push(
      kept
        ? // A private copy of exactly the bytes just hashed (the scratch buffer is reused).
          { path, size: bytes.length, digest, bytes: new Uint8Array(bytes) }
        : { path, size: bytes.length, digest },
    );
  }
  return {
    treeHash: sha256Tag(listing),
    fileCount: files.length,
    files,
    listing,
  };
}

/**
 * Hashes a folder with the `sha256-tree-v1` algorithm (see the README): every
 * regular file below `directory`, sorted by the UTF-8 bytes of its relative
 * `/`-separated path, contributes the line `<hex sha256>␠␠<path>\n`; the tree
 * hash is the SHA-256 of those lines. Empty folders and file modes do not
 * count. Throws {@link SkillSymlinkError} for any symbolic link and
 * {@link SkillUnsupportedEntryError} for special files and unrepresentable names.
 *
 * @example
 * ```ts
 * const { treeHash, fileCount } = hashTree({ directory: 'skills/lazy-search' });
 * ```
 */
export function hashTree({ directory }: { directory: string }): TreeHash {
  const { files, ...rest } = hashDirectory({ directory, keep: 'none' });
  return {
    ...rest,
    files: files.map(({ path, size, digest }) => ({ path, size, digest })),
  };
}

/**
 * Like {@link hashTree}, but keeps every file's bytes: each file is read once,
 * and the bytes returned are exactly the bytes that were hashed.
 */
export function readTree({ directory }: { directory: string }): TreeContents {
  return hashDirectory({ directory, keep: 'all' }) as TreeContents;
}

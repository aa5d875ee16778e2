import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SkillError } from './errors.js';
import { hashTree, readTree } from './tree-hash.js';
import { fileTrees } from './__fixtures__/file-trees.js';
import { scratchFolders } from './__fixtures__/scratch.js';

const vectorsDirectory = fileURLToPath(
  new URL('../test-vectors', import.meta.url),
);
type Vector = {
  name: string;
  directory: string | null;
  fileCount: number;
  listing: string;
  treeHash: string;
};
const { vectors } = JSON.parse(
  readFileSync(join(vectorsDirectory, 'vectors.json'), 'utf8'),
) as {
  vectors: Vector[];
};

// Resolve the interpreter once: version-manager shims can cost seconds per start.
const pythonProbe = spawnSync(
  'python3',
  ['-c', 'import sys; print(sys.executable)'],
  { encoding: 'utf8' },
);
const python = pythonProbe.status === 0 ? pythonProbe.stdout.trim() : undefined;
const hasPython = python !== undefined;
const hasShellTools =
  spawnSync('bash', ['-c', 'sha256sum --version && find --version'], {
    stdio: 'ignore',
  }).status === 0;
// On Linux the coreutils implementation must run: a silent skip would let the
// written algorithm and the code drift apart unnoticed.
if (process.platform === 'linux' && !hasShellTools) {
  throw new Error(
    'bash, GNU find and sha256sum are needed for the independent tree-hash check: install coreutils and findutils',
  );
}

const makeDirectory = scratchFolders('tree-hash-');

function vectorDirectory(vector: Vector): string {
  if (vector.directory !== null) {
    return join(vectorsDirectory, vector.directory);
  }
  const directory = makeDirectory();
  mkdirSync(join(directory, 'only', 'empty', 'folders'), { recursive: true });
  return directory;
}

/** Tree hashes of `directories` by the bash + coreutils implementation, in one process. */
function shellHashes(directories: string[]): string[] {
  return execFileSync(
    'bash',
    [join(vectorsDirectory, 'tree_hash.sh'), ...directories],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
}

/** Tree hashes of `directories` by the Python hashlib implementation, in one process. */
function pythonHashes(directories: string[]): string[] {
  return execFileSync(
    python!,
    [join(vectorsDirectory, 'tree_hash.py'), ...directories],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[0]!);
}

describe('test vectors', () => {
  it('ships the tiny, basic, dash and empty vectors', () => {
    expect(vectors.map((vector) => vector.name)).toEqual([
      'tiny',
      'basic',
      'dash',
      'empty',
    ]);
  });

  for (const vector of vectors) {
    it(`hashTree reproduces vector "${vector.name}" byte for byte`, () => {
      const result = hashTree({ directory: vectorDirectory(vector) });
      expect(result.listing).toBe(vector.listing);
      expect(result.treeHash).toBe(vector.treeHash);
      expect(result.fileCount).toBe(vector.fileCount);
    });
  }

  // One process per implementation for all vectors: each start costs more than the hashing.
  it.skipIf(!hasShellTools)(
    'find | sort | sha256sum reproduces every vector',
    () => {
      expect(shellHashes(vectors.map(vectorDirectory))).toEqual(
        vectors.map((vector) => vector.treeHash),
      );
    },
  );

  it.skipIf(!hasPython)('Python hashlib reproduces every vector', () => {
    expect(pythonHashes(vectors.map(vectorDirectory))).toEqual(
      vectors.map((vector) => vector.treeHash),
    );
  });
});

const treeSpec = fileTrees({ maxBytes: 64, maxFiles: 6 });

function writeTree(
  spec: { path: string[]; content: Uint8Array }[],
): string | undefined {
  const directory = makeDirectory();
  for (const { path, content } of spec) {
    try {
      mkdirSync(join(directory, ...path.slice(0, -1)), { recursive: true });
      writeFileSync(join(directory, ...path), content);
    } catch {
      return undefined; // one path is a prefix of another (file vs folder): not a tree
    }
  }
  return directory;
}

describe('independent implementations agree on random trees', () => {
  it.skipIf(!hasShellTools || !hasPython)(
    'TypeScript, shell and Python give the same tree hash',
    () => {
      const seed = Math.floor(Math.random() * 2 ** 31);
      const directories = fc
        .sample(treeSpec, { numRuns: 16, seed })
        .map(writeTree)
        .filter((directory): directory is string => directory !== undefined);
      const ours = directories.map(
        (directory) => hashTree({ directory }).treeHash,
      );
      expect(shellHashes(directories), `fast-check seed ${seed}`).toEqual(ours);
      expect(pythonHashes(directories), `fast-check seed ${seed}`).toEqual(
        ours,
      );
    },
    60_000,
  );
});

describe('hashTree rules', () => {
  it('ignores empty folders and file modes', () => {
    const directory = makeDirectory();
    writeFileSync(join(directory, 'a.txt'), 'a');
    const before = hashTree({ directory }).treeHash;
    mkdirSync(join(directory, 'empty', 'nested'), { recursive: true });
    chmodSync(join(directory, 'a.txt'), 0o755);
    expect(hashTree({ directory }).treeHash).toBe(before);
  });

  it('refuses a symbolic link to a file, to a folder, and a dangling one', () => {
    for (const make of [
      (directory: string) => {
        writeFileSync(join(directory, 'target.txt'), 'x');
        symlinkSync('target.txt', join(directory, 'link.txt'));
      },
      (directory: string) => {
        mkdirSync(join(directory, 'real'));
        symlinkSync('real', join(directory, 'linked-folder'));
      },
      (directory: string) =>
        symlinkSync('missing', join(directory, 'dangling')),
    ]) {
      const directory = makeDirectory();
      make(directory);
      expect(() => hashTree({ directory })).toThrowError(
        expect.objectContaining({ code: 'SKILL_SYMLINK' }),
      );
    }
  });

  it('refuses a tree root that is itself a symbolic link', () => {
    const directory = makeDirectory();
    mkdirSync(join(directory, 'real'));
    symlinkSync('real', join(directory, 'link'));
    expect(() => hashTree({ directory: join(directory, 'link') })).toThrowError(
      expect.objectContaining({ code: 'SKILL_SYMLINK' }),
    );
  });

  it.skipIf(process.platform !== 'linux')(
    'refuses a file name that is not UTF-8',
    () => {
      const directory = makeDirectory();
      // Write the raw byte 0xFF as a file name through the shell (Node strings cannot hold it).
      execFileSync('bash', [
        '-c',
        `printf x > "$1/"$'\\xff'`,
        'bash',
        directory,
      ]);
      const error = (() => {
        try {
          hashTree({ directory });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(SkillError.isInstance(error)).toBe(true);
      expect((error as SkillError).code).toBe('SKILL_UNSUPPORTED_ENTRY');
      expect((error as SkillError).message).toContain('not valid UTF-8');
    },
  );

  it('refuses names with a newline, another control character or a backslash', () => {
    for (const name of ['line\nbreak', 'tab\there', 'back\\slash']) {
      const directory = makeDirectory();
      writeFileSync(join(directory, name), 'x');
      expect(() => hashTree({ directory })).toThrowError(
        expect.objectContaining({ code: 'SKILL_UNSUPPORTED_ENTRY' }),
      );
    }
  });

  it.skipIf(process.platform === 'win32')('refuses a FIFO', () => {
    const directory = makeDirectory();
    execFileSync('mkfifo', [join(directory, 'pipe')]);
    expect(() => hashTree({ directory })).toThrowError(
      expect.objectContaining({ code: 'SKILL_UNSUPPORTED_ENTRY' }),
    );
  });

  it('readTree returns exactly the bytes it hashed', () => {
    const directory = join(vectorsDirectory, 'basic');
    const contents = readTree({ directory });
    const hashed = hashTree({ directory });
    expect(contents.treeHash).toBe(hashed.treeHash);
    for (const file of contents.files) {
      expect(Buffer.from(file.bytes)).toEqual(
        readFileSync(join(directory, file.path)),
      );
      expect(file.size).toBe(file.bytes.length);
    }
  });
});

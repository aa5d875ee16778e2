// Helpers shared by the tests (not exported from the package).
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** The repository root (the folder holding the real roles/). */
export const REPO_ROOT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
);

/** The package folder. */
export const PACKAGE_ROOT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
);

/** Every file under `folder`, recursively. */
export function listFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/** Rewrite every file of `root/roles` as a Windows checkout might: BOM, CRLF, trailing spaces. */
function windowsify(root: string): void {
  for (const file of listFiles(join(root, 'roles'))) {
    const text = readFileSync(file, 'utf8');
    const crlf = text
      .split('\n')
      .map((line) => (line === '' ? line : `${line}  `))
      .join('\r\n');
    writeFileSync(file, `\uFEFF${crlf}\r\n\r\n`);
  }
}

/**
 * For one test file: temporary workspaces, each with a copy of the real
 * roles/, all removed after the file's tests. `copy(prefix)` makes one;
 * `windows()` makes one whose prompt sources are rewritten by
 * {@link windowsify}.
 */
export function useTempWorkspaces(): {
  copy: (prefix?: string) => string;
  windows: () => string;
} {
  const created: string[] = [];
  afterAll(() => {
    for (const root of created.splice(0))
      rmSync(root, { recursive: true, force: true });
  });
  const copy = (prefix = 'heretek-prefix-') => {
    const root = mkdtempSync(join(tmpdir(), prefix));
    created.push(root);
    cpSync(join(REPO_ROOT, 'roles'), join(root, 'roles'), { recursive: true });
    return root;
  };
  return {
    copy,
    windows: () => {
      const root = copy();
      windowsify(root);
      return root;
    },
  };
}

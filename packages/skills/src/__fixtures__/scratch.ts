// Test fixture: temporary folders, each removed after the test that made it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * For one test file: a function that creates a temporary folder named
 * `prefix…` and returns its path; every folder is removed after the test
 * that made it.
 */
export function scratchFolders(prefix: string): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const folder of made.splice(0)) {
      rmSync(folder, { recursive: true, force: true });
    }
  });
  return () => {
    const folder = mkdtempSync(join(tmpdir(), prefix));
    made.push(folder);
    return folder;
  };
}

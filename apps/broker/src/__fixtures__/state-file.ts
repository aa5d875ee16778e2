// Test fixture: a fresh temporary folder for each test, with the path where a
// state file (pins, usage) goes below it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach } from 'vitest';

/**
 * Before each test of the file: a new temporary folder named `prefix…` and the
 * path `state/heretek/<name>` below it (not created), both given to `use`. The
 * folder is removed after the test.
 */
export function freshStateFile(
  prefix: string,
  name: string,
  use: (paths: { directory: string; file: string }) => void,
): void {
  beforeEach(async () => {
    const directory = await mkdtemp(path.join(tmpdir(), prefix));
    use({ directory, file: path.join(directory, 'state', 'heretek', name) });
    return () => rm(directory, { recursive: true, force: true });
  });
}

// Test fixture: one temporary folder for a test file, removed after its tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Creates a temporary folder named `prefix…` and returns its path; it is
 * removed after the last test of the file that asked for it.
 */
export function scratchFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

import fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { isMissing, readStateFile, writeFileAtomic } from './state-file.js';

let directory: string;

beforeEach(async () => {
  directory = await fs.mkdtemp(path.join(tmpdir(), 'heretek-state-file-'));
  return () => fs.rm(directory, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('creates the folder 0700 and the file 0600, and replaces a file whole', async () => {
    const file = path.join(directory, 'a', 'b', 'state.json');
    await writeFileAtomic(file, 'first\n');
    expect(await fs.readFile(file, 'utf8')).toBe('first\n');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    await writeFileAtomic(file, 'second\n');
    expect(await fs.readFile(file, 'utf8')).toBe('second\n');
    expect(await fs.readdir(path.dirname(file))).toEqual(['state.json']);
  });

  it('leaves the old target and no temporary file when the rename fails', async () => {
    const target = path.join(directory, 'taken');
    await fs.mkdir(path.join(target, 'inside'), { recursive: true });
    await expect(writeFileAtomic(target, 'text')).rejects.toThrow();
    expect(await fs.readdir(directory)).toEqual(['taken']);
    expect(await fs.readdir(target)).toEqual(['inside']);
  });
});

describe('the missing-file rule', () => {
  it('reads a missing file, or one under a non-folder, as undefined', async () => {
    const plain = path.join(directory, 'plain');
    await fs.writeFile(plain, 'x');
    expect(await readStateFile(path.join(directory, 'none'))).toBeUndefined();
    expect(await readStateFile(path.join(plain, 'below'))).toBeUndefined();
    expect(await readStateFile(plain)).toBe('x');
  });

  it('throws any other read error', async () => {
    const error = await readStateFile(directory).catch((caught) => caught);
    expect((error as NodeJS.ErrnoException).code).toBe('EISDIR');
    expect(isMissing(error)).toBe(false);
  });
});

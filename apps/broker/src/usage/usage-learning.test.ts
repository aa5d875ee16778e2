import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { UsageLearning } from './usage-learning.js';
import type { UsageRecord } from '@heretek/catalog';

let directory: string;
let file: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'heretek-learning-'));
  file = path.join(directory, 'usage.jsonl');
  return () => rm(directory, { recursive: true, force: true });
});

describe('UsageLearning', () => {
  it('saves a search-then-call use and gives it back to the next process at load', async () => {
    const seen: UsageRecord[] = [];
    const first = new UsageLearning({ file, onUse: (use) => seen.push(use) });
    await first.load();
    first.searched({
      terms: ['create', 'issue'],
      hits: ['github_create_issue'],
    });
    expect(
      await first.called({ tool: 'github_create_issue', isError: false }),
    ).toEqual({
      terms: ['create', 'issue'],
      tool: 'github_create_issue',
    });
    expect(
      await first.called({ tool: 'adb_tap', isError: false }),
    ).toBeUndefined();
    expect(seen).toHaveLength(1);
    const line = (await readFile(file, 'utf8')).trim();
    expect(Object.keys(JSON.parse(line) as object)).toEqual([
      'v',
      'at',
      'tool',
      'terms',
    ]);

    const lines: string[] = [];
    const restarted: UsageRecord[] = [];
    const second = new UsageLearning({
      file,
      onUse: (use) => restarted.push(use),
      log: (text) => lines.push(text),
    });
    const loaded = second.load();
    expect(second.load()).toBe(loaded);
    await loaded;
    expect(restarted).toEqual([
      { terms: ['create', 'issue'], tool: 'github_create_issue' },
    ]);
    expect(lines).toEqual([`usage: learned from 1 earlier use in ${file}`]);
  });

  it('learns nothing when the file is off', async () => {
    const seen: UsageRecord[] = [];
    const learning = new UsageLearning({
      file: 'off',
      onUse: (use) => seen.push(use),
    });
    expect(learning.enabled).toBe(false);
    await learning.load();
    learning.searched({ terms: ['tap'], hits: ['adb_tap'] });
    expect(
      await learning.called({ tool: 'adb_tap', isError: false }),
    ).toBeUndefined();
    expect(seen).toEqual([]);
    expect(await learning.describe()).toBe(
      'usage file: off (learning from use is disabled)',
    );
  });

  it('survives a failing consumer and a file it cannot write', async () => {
    const lines: string[] = [];
    const learning = new UsageLearning({
      file: path.join(directory, 'usage.jsonl', 'nested'),
      onUse: () => {
        throw new Error('catalog rebuilding');
      },
      log: (line) => lines.push(line),
    });
    await writeFile(path.join(directory, 'usage.jsonl'), '');
    await learning.load();
    learning.searched({ terms: ['tap'], hits: ['adb_tap'] });
    expect(await learning.called({ tool: 'adb_tap', isError: false })).toEqual({
      terms: ['tap'],
      tool: 'adb_tap',
    });
    expect(lines).toEqual([
      'usage: a use of "adb_tap" was not taken: catalog rebuilding',
      expect.stringMatching(/usage file .* is unwritable/),
    ]);
  });
});

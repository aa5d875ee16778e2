// Learning from use, end to end through the built broker over stdio with SDK
// servers on loopback as backends: a search followed by a successful call is
// kept in the usage file and raises the called tool after a restart; a
// corrupt or unwritable usage file, or an unwritable state folder, never
// stops the broker.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useMaliciousGateway } from './__fixtures__/malicious-gateway.js';
import {
  callOutcome as call,
  runBrokerCli,
  searchText,
  spawnBroker,
  type SpawnedBroker,
} from './__fixtures__/spawn-broker.js';
import type { FixtureTool } from './trust/__fixtures__/malicious-servers.js';

const empty = { type: 'object', properties: {} };
const tool = (name: string, description: string): FixtureTool => ({
  name,
  description,
  inputSchema: empty,
});

/** Four tools that all match "item": which one an agent wants is learned. */
const NOTES: FixtureTool[] = [
  tool('delete_item', 'Delete an item for good.'),
  tool('rename_item', 'Rename an item.'),
  tool('copy_item', 'Copy an item to another folder.'),
  tool('archive_item', 'Move an item into long-term storage.'),
];

const QUERY = 'stash the memo item';

const gateway = useMaliciousGateway('broker-usage-e2e-', {
  tools: { notes: NOTES },
  rows: [{ backend: 'notes-server', target: 'notes', profile: 'core' }],
});
const dir = gateway.dir;

const start = (usageFile: string, extra: Record<string, string> = {}) =>
  gateway.start({ HERETEK_USAGE_FILE: usageFile, ...extra });

async function hits(broker: SpawnedBroker, query: string): Promise<string[]> {
  const answer = await searchText(broker, query);
  return answer
    .split('\n')
    .filter((line) => line.startsWith('notes_'))
    .map((line) => line.split(' ')[0]!);
}

/** Starts `broker`'s session and waits until it has learned from one earlier use. */
async function loadedOneUse(broker: SpawnedBroker): Promise<void> {
  await broker.client.listTools();
  await expect
    .poll(() => broker.stderr().includes('learned from 1 earlier use'), {
      message: 'the usage file to be loaded',
    })
    .toBe(true);
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');

describe('a broker that saw search-then-call', () => {
  it('keeps the use (terms, never the query or arguments; mode 0600) and ranks the called tool higher after a restart', async () => {
    const usageFile = join(dir, 'usage.jsonl');
    const first = await start(usageFile);
    let before: string[];
    try {
      await first.client.listTools();
      // One shared word of four: the catalog answers nothing rather than pad.
      before = await hits(first, QUERY);
      expect(before[0]).not.toBe('notes_archive_item');
      // A call without a search, and a failed call, record nothing.
      expect(await call(first, 'notes_archive_item')).toEqual({
        isError: false,
        text: 'archive_item ok',
      });
      // The agent rephrases, finds the tool and calls it: that is a use.
      expect(await hits(first, `${QUERY} into storage`)).toContain(
        'notes_archive_item',
      );
      expect(await call(first, 'notes_archive_item')).toEqual({
        isError: false,
        text: 'archive_item ok',
      });
      await expect
        .poll(
          () => {
            try {
              return lines(usageFile).length === 1;
            } catch {
              return false;
            }
          },
          { message: 'the use to be appended' },
        )
        .toBe(true);
    } finally {
      await first.close();
    }
    const stored = readFileSync(usageFile, 'utf8');
    expect(stored).not.toContain('stash the memo');
    // The call without a search made no use: the file, written by one
    // process whose appends take turns, holds the later use alone.
    expect(lines(usageFile)).toHaveLength(1);
    const use = JSON.parse(lines(usageFile)[0]!) as Record<string, unknown>;
    expect(use).toMatchObject({ tool: 'notes_archive_item' });
    expect(use.terms).toEqual(expect.arrayContaining(['memo', 'item']));
    expect(Object.keys(use).sort()).toEqual(['at', 'terms', 'tool', 'v']);
    if (process.platform !== 'win32') {
      expect(statSync(usageFile).mode & 0o777).toBe(0o600);
    }

    const second = await start(usageFile);
    try {
      await loadedOneUse(second);
      const after = await hits(second, QUERY);
      expect(after[0]).toBe('notes_archive_item');
      // A query sharing no word with the tool or its past requests is left alone.
      expect(await hits(second, 'rename')).toEqual(['notes_rename_item']);
    } finally {
      await second.close();
    }
  });

  it('HERETEK_USAGE_FILE=off learns nothing and writes nothing', async () => {
    const broker = await start('off');
    try {
      await broker.client.listTools();
      await hits(broker, QUERY);
      expect((await call(broker, 'notes_archive_item')).isError).toBe(false);
    } finally {
      await broker.close();
    }
    const check = await gateway.cli(['--check'], { HERETEK_USAGE_FILE: 'off' });
    expect(check.stderr).toContain(
      'usage file: off (learning from use is disabled)',
    );
  });
});

describe('a usage file that is corrupt or cannot be written', () => {
  it('skips corrupt lines with one warning, learns from the rest, and --check counts them', async () => {
    const usageFile = join(dir, 'corrupt.jsonl');
    const valid = JSON.stringify({
      v: 1,
      at: new Date().toISOString(),
      tool: 'notes_archive_item',
      terms: ['stash', 'memo', 'item'],
    });
    writeFileSync(usageFile, `{"v":1,"tool":\nnot json at all\n${valid}\n`, {
      mode: 0o600,
    });
    const broker = await start(usageFile);
    try {
      await loadedOneUse(broker);
      expect(broker.stderr()).toMatch(
        /usage file .*corrupt\.jsonl: skipped 2 corrupt lines \(first at line 1\)/,
      );
      expect((await hits(broker, QUERY))[0]).toBe('notes_archive_item');
    } finally {
      await broker.close();
    }
    const check = await gateway.cli(['--check'], {
      HERETEK_USAGE_FILE: usageFile,
    });
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(
      /\nusage file .*corrupt\.jsonl: \d+ B, 1 use, 2 corrupt lines skipped \(compacted over 2\.0 MiB\)\n/,
    );
  });

  it('keeps answering when the usage file cannot be read or written (its folder is a regular file)', async () => {
    const blocker = join(dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const usageFile = join(blocker, 'usage.jsonl');
    const broker = await start(usageFile);
    try {
      const { tools } = await broker.client.listTools();
      expect(tools).toHaveLength(3);
      await hits(broker, 'archive item');
      expect(await call(broker, 'notes_archive_item')).toEqual({
        isError: false,
        text: 'archive_item ok',
      });
      await expect
        .poll(() => /usage file .* is unwritable/.test(broker.stderr()), {
          message: 'the unwritable warning',
        })
        .toBe(true);
      // The use still counts for this run.
      expect((await hits(broker, 'archive item'))[0]).toBe(
        'notes_archive_item',
      );
    } finally {
      await broker.close();
    }
  });

  it('offline with an unusable state folder: serves, searches and --check exits 0', async () => {
    const blocker = join(dir, 'state-is-a-file');
    writeFileSync(blocker, 'x');
    const broker = await spawnBroker({
      HERETEK_BROKER_OFFLINE: '1',
      XDG_STATE_HOME: blocker,
    });
    try {
      const { tools } = await broker.client.listTools();
      expect(tools).toHaveLength(3);
      const answer = await searchText(broker, 'android adb install apk');
      expect(answer).toMatch(/^adb_/m);
    } finally {
      expect(await broker.close()).toBe(0);
    }
    const check = await runBrokerCli(['--check'], {
      HERETEK_BROKER_OFFLINE: '1',
      XDG_STATE_HOME: blocker,
    });
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(
      /\nusage file .*state-is-a-file.*usage\.jsonl/,
    );
  });
});

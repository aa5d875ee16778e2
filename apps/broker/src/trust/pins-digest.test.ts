import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { PinStore } from './pin-store.js';

let directory: string;
let file: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'heretek-pins-digest-'));
  file = path.join(directory, 'heretek', 'pins.json');
  return () => rm(directory, { recursive: true, force: true });
});

const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: 'object' },
});
const tap = tool('adb_tap', 'Tap the screen.');
const list = tool('adb_list_packages', 'List packages.');

const sha256 = (bytes: Buffer) =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const UNCHANGED = /is the file the index cache was written with/;

describe('the pins file digest an index cache records', () => {
  it('is the SHA-256 of the file holding exactly the pins, taken in one turn with what is asked of them', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe([tap, list]);
    const taken = await store.fileDigest(() => store.pinnedCount);
    expect(taken).toEqual({
      digest: sha256(await readFile(file)),
      inspected: 2,
    });
  });

  it('lets a store reopened on that file skip the check of each entry, and no other digest does', async () => {
    const writer = await PinStore.open({ path: file });
    await writer.observe([tap, list]);
    const { digest } = (await writer.fileDigest(() => undefined))!;

    const lines: string[] = [];
    const reopened = await PinStore.open({
      path: file,
      verify: 'later',
      log: (line) => lines.push(line),
    });
    expect(reopened.knownDigest(`sha256:${'0'.repeat(64)}`)).toBe(false);
    expect(lines).toEqual([]);
    expect(reopened.knownDigest(digest)).toBe(true);
    await reopened.verified;
    expect(lines).toEqual([expect.stringMatching(UNCHANGED)]);
    await reopened.observe([tap, list]);
    expect(reopened.status('adb_tap')).toEqual({ state: 'pinned' });
    // A call still checks the pin it relies on.
    expect(() => reopened.checkPin('adb_tap')).not.toThrow();
  });

  it('does not vouch for a file changed by hand since: its entries are checked, and a bad one refused', async () => {
    const writer = await PinStore.open({ path: file });
    await writer.observe([tap, list]);
    const { digest } = (await writer.fileDigest(() => undefined))!;
    const edited = (await readFile(file, 'utf8')).replace(
      'Tap the screen.',
      'Tap the screen!',
    );
    await writeFile(file, edited);

    const reopened = await PinStore.open({ path: file, verify: 'later' });
    expect(reopened.knownDigest(digest)).toBe(false);
    await expect(reopened.verified).rejects.toMatchObject({
      code: 'PINS_FILE_INVALID',
      message: expect.stringMatching(
        /entry "adb_tap": its hash does not match/,
      ),
    });
    // And the store that wrote the file no longer has a digest for it.
    expect(await writer.fileDigest(() => undefined)).toBeUndefined();
  });

  it('is not given while a pin in memory is not in the file, and not vouched for once the store has written', async () => {
    await writeFile(path.join(directory, 'plain-file'), 'x');
    const unwritable = await PinStore.open({
      path: path.join(directory, 'plain-file', 'pins.json'),
    });
    await unwritable.observe([tap]);
    expect(await unwritable.fileDigest(() => undefined)).toBeUndefined();

    const writer = await PinStore.open({ path: file });
    await writer.observe([tap]);
    const { digest } = (await writer.fileDigest(() => undefined))!;
    const reopened = await PinStore.open({ path: file, verify: 'later' });
    // The first listing of another backend: pinned and written.
    await reopened.observe([tap, tool('mdb_list', 'List.')]);
    expect(reopened.knownDigest(digest)).toBe(false);
    const after = await reopened.fileDigest(() => undefined);
    expect(after?.digest).toBe(sha256(await readFile(file)));
    expect(after?.digest).not.toBe(digest);
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshStateFile } from '../__fixtures__/state-file.js';
import { parsePins } from './__fixtures__/pins-text.js';
import { storeProcesses } from './__fixtures__/store-process.js';

// Each race fixed in the store, replayed by real processes sharing one real
// pins file; the scenarios are in __fixtures__/store-process.ts.

let compiled: string;
let start: Awaited<ReturnType<typeof storeProcesses>>;
let file: string;

beforeAll(async () => {
  compiled = await mkdtemp(path.join(tmpdir(), 'heretek-pin-processes-'));
  start = await storeProcesses(compiled);
  return () => rm(compiled, { recursive: true, force: true });
});

freshStateFile('heretek-pin-processes-', 'pins.json', (paths) => {
  ({ file } = paths);
});

const pins = async () => parsePins(await readFile(file, 'utf8')).tools;

describe('processes sharing one pins file', () => {
  it('write an accept made while a write of new pins runs: the file holds the definition accepted last', async () => {
    // Another process pinned a large backend: each write copies its lines.
    await start('pin', file, 'bulk', '2000').done;
    const { version, state } = await start('accept during write', file).done;
    // At least one accept came while the first write ran.
    expect(version).toBeGreaterThan(1);
    expect(state).toBe('pinned');
    const written = await pins();
    expect(written.cam_tool_00000?.description).toBe(
      `Tool 0 of cam, version ${String(version)}.`,
    );
    expect(Object.keys(written)).toHaveLength(2001);
  });

  it('write an accept made while a write of new pins is queued, which does not put the old pin back', async () => {
    await start('pin', file, 'adb', '3').done;
    const { state } = await start('accept while queued', file).done;
    expect(state).toBe('pinned');
    const written = await pins();
    expect(written.adb_tool_00001?.description).toBe(
      'Tool 1 of adb, version 2.',
    );
    expect(written.adb_tool_00000?.description).toBe(
      'Tool 0 of adb, version 1.',
    );
    expect(Object.keys(written)).toEqual([
      'adb_tool_00000',
      'adb_tool_00001',
      'adb_tool_00002',
      'cam_tool_00000',
    ]);
  });

  it('keep and write the pins made while a file another process changed is read again', async () => {
    await start('pin', file, 'a', '1').done;
    const pinning = start('pin during reload', file);
    await pinning.ready;
    // Another process changes the file the first one has read.
    await start('pin', file, 'c', '2000').done;
    pinning.go();
    const { targets, states } = (await pinning.done) as {
      targets: string[];
      states: string[];
    };
    expect(targets.length).toBeGreaterThan(1);
    expect(states).toEqual(targets.map(() => 'pinned-now'));
    const names = Object.keys(await pins());
    expect(names).toEqual(
      expect.arrayContaining([
        'a_tool_00000',
        'c_tool_01999',
        'x_tool_00000',
        ...targets.map((target) => `${target}_tool_00000`),
      ]),
    );
    expect(names).toHaveLength(2002 + targets.length);
  });
});

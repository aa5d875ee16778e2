import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { definitionHash } from './definition-hash.js';
import { TrustError } from './trust-error.js';
import { pinVerdict } from './pin-policy.js';
import { PinStore } from './pin-store.js';
import { PINS_FILE_VERSION } from './pins-file.js';
import { heretekStateDir } from './state-dir.js';
import { freshStateFile } from '../__fixtures__/state-file.js';
import {
  parsePins,
  serializePinsFile,
  type PinsFile,
} from './__fixtures__/pins-text.js';

let directory: string;
let file: string;

freshStateFile('heretek-pins-', 'pins.json', (paths) => {
  ({ directory, file } = paths);
});

const tap = {
  name: 'adb_tap',
  description: 'Tap the screen.',
  inputSchema: { type: 'object', properties: { x: { type: 'number' } } },
};
const list = {
  name: 'adb_list_packages',
  description: 'List packages.',
  inputSchema: { type: 'object' },
  annotations: { readOnlyHint: true },
};

describe('PinStore', () => {
  it('pins new tools on first use into a 0600 file with sorted keys, atomically', async () => {
    const store = await PinStore.open({ path: file });
    const result = await store.observe([tap, list]);
    expect(result).toEqual({
      pinned: ['adb_tap', 'adb_list_packages'],
      new: [],
      changed: [],
      unpinned: [],
    });
    const text = await readFile(file, 'utf8');
    const data = parsePins(text);
    expect(data.version).toBe(2);
    expect(Object.keys(data.tools)).toEqual(['adb_list_packages', 'adb_tap']);
    expect(text).toBe(serializePinsFile(data));
    // One canonical JSON object per line: the hash and name first.
    expect(text.split('\n')[1]).toMatch(
      /^\{"hash":"sha256:[0-9a-f]{64}","name":"adb_list_packages","tool":\{"annotations":\{"readOnlyHint":true\},"description":"List packages\.","inputSchema":\{"type":"object"\}\}\}$/,
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readdir(path.dirname(file))).toEqual(['pins.json']);

    const again = await PinStore.open({ path: file });
    await again.observe([tap, list]);
    expect(again.status('adb_tap')).toEqual({ state: 'pinned' });
    expect(again.status('adb_unknown')).toBeUndefined();
  });

  it('writes a file of many tools, in slices, exactly as the one-piece form, and marks tools pinned by a later write new', async () => {
    const store = await PinStore.open({ path: file });
    // Two backends: the second's first listing is pinned by a later write.
    const many = (target: string, from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        ...tap,
        name: `${target}_tool_${from + i}`,
        inputSchema: { type: 'object', properties: { z: {}, a: { n: i } } },
      }));
    await store.observe(many('bulk', 0, 1_100));
    const result = await store.observe(many('later', 1_100, 1_234));
    expect(result.pinned).toHaveLength(134);
    const text = await readFile(file, 'utf8');
    const data = parsePins(text);
    expect(Object.keys(data.tools)).toHaveLength(1_234);
    expect(text).toBe(serializePinsFile(data));
  });

  it('holds a tool that appears, or is renamed, on a known backend as new: not pinned, across a reopen, until accepted (one tool or a whole target)', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe([tap, list]);
    const swipe = { name: 'adb_swipe', description: 'Swipe.', inputSchema: {} };
    // `adb_tap` renamed: the old name is gone, the new one is a new tool.
    const renamed = { ...tap, name: 'adb_touch' };
    const result = await store.observe([list, swipe, renamed]);
    expect(result).toEqual({
      pinned: [],
      new: ['adb_swipe', 'adb_touch'],
      changed: [],
      unpinned: [],
    });
    expect(store.status('adb_swipe')).toEqual({ state: 'held', reason: 'new' });
    expect(store.status('adb_touch')).toEqual({ state: 'held', reason: 'new' });
    await store.flush();
    expect(Object.keys(parsePins(await readFile(file, 'utf8')).tools)).toEqual([
      'adb_list_packages',
      'adb_tap',
    ]);
    // A restart holds them still: the file says the backend is known.
    const reopened = await PinStore.open({ path: file });
    await reopened.observe([list, swipe, renamed]);
    expect(reopened.status('adb_touch')).toEqual({
      state: 'held',
      reason: 'new',
    });
    expect(reopened.pending({ target: 'adb' })).toEqual([
      {
        name: 'adb_swipe',
        change: 'new',
        lines: [
          'new on backend "adb", whose other tools were pinned before',
          'description: "Swipe."',
          'input schema: {}',
          'annotations: {}',
        ],
      },
      expect.objectContaining({ name: 'adb_touch', change: 'new' }),
    ]);
    expect(reopened.pending({ target: 'other' })).toEqual([]);
    await reopened.accept({ tool: 'adb_swipe' });
    expect(reopened.status('adb_swipe')).toEqual({ state: 'pinned' });
    expect(reopened.status('adb_touch')).toEqual({
      state: 'held',
      reason: 'new',
    });
    await reopened.accept({ target: 'adb' });
    expect(reopened.status('adb_touch')).toEqual({ state: 'pinned' });
    expect(Object.keys(parsePins(await readFile(file, 'utf8')).tools)).toEqual([
      'adb_list_packages',
      'adb_swipe',
      'adb_tap',
      'adb_touch',
    ]);
  });

  it('writes an accept made while a write of new pins is queued, which does not put the old pin back', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe([tap, list]);
    const tap2 = { ...tap, description: 'Tap the screen twice.' };
    await store.observe([tap2, list]);
    // A backend seen for the first time queues a write of its pins; the
    // accept is asked for before that write runs.
    const firstSeen = store.observe([
      { name: 'cam_snap', description: 'Take a photo.', inputSchema: {} },
    ]);
    await store.accept({ tool: 'adb_tap' });
    await firstSeen;
    await store.flush();
    expect(store.status('adb_tap')).toEqual({ state: 'pinned' });
    const reopened = await PinStore.open({ path: file });
    await reopened.observe([tap2, list]);
    expect(reopened.status('adb_tap')).toEqual({ state: 'pinned' });
    expect(Object.keys(parsePins(await readFile(file, 'utf8')).tools)).toEqual([
      'adb_list_packages',
      'adb_tap',
      'cam_snap',
    ]);
  });

  it('shows a change without accepting it, then accepts one tool or all', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe([tap, list]);
    const tap2 = { ...tap, description: 'Tap the screen twice.' };
    const list2 = { ...list, annotations: {} };
    await store.observe([tap2, list2]);
    expect(store.pending().map((pin) => pin.name)).toEqual([
      'adb_list_packages',
      'adb_tap',
    ]);
    const accepted = await store.accept({ tool: 'adb_tap' });
    expect(accepted).toEqual([
      {
        name: 'adb_tap',
        change: { parts: ['description'], becameMutating: false },
        lines: [
          'description was "Tap the screen."',
          'description is now "Tap the screen twice."',
        ],
      },
    ]);
    expect(store.status('adb_tap')).toEqual({ state: 'pinned' });
    expect(store.status('adb_list_packages')).toMatchObject({
      state: 'held',
      reason: 'changed',
    });

    const restarted = await PinStore.open({ path: file });
    await restarted.observe([tap2, list2]);
    expect(restarted.status('adb_tap')).toEqual({ state: 'pinned' });
    const all = await restarted.accept();
    expect(all.map((pin) => [pin.name, pin.lines[0]])).toEqual([
      ['adb_list_packages', 'was read-only, is now mutating'],
    ]);
    expect(restarted.status('adb_list_packages')).toEqual({ state: 'pinned' });
    await expect(restarted.accept({ tool: 'adb_nope' })).rejects.toMatchObject({
      code: 'PIN_UNKNOWN_TOOL',
    });
  });

  it('never writes when opened read-only, and refuses to accept', async () => {
    const store = await PinStore.open({ path: file, readOnly: true });
    expect(store.readOnlyReason).toBe('option');
    const result = await store.observe([tap]);
    expect(result.unpinned).toEqual(['adb_tap']);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    const error = await store.accept().catch((caught: unknown) => caught);
    expect(TrustError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PINS_READ_ONLY' });
    const verdict = pinVerdict({
      policy: 'refuse',
      toolName: 'adb_tap',
      status: store.status('adb_tap'),
      mutating: true,
    });
    expect(verdict.allowed).toBe(false);
    expect(verdict.message).toMatch(
      /^"adb_tap" is not in the read-only pins file, so nobody has accepted it yet\./,
    );
  });

  it('treats a lock marked readOnly as reviewed: no pins on its own, --pin updates it and keeps the mark', async () => {
    const writer = await PinStore.open({ path: file });
    await writer.observe([list]);
    const data = parsePins(await readFile(file, 'utf8'));
    await writeFile(file, serializePinsFile({ ...data, readOnly: true }));
    const before = await readFile(file, 'utf8');

    const store = await PinStore.open({ path: file });
    expect(store.readOnlyReason).toBe('file');
    await store.observe([list, tap]);
    expect(store.status('adb_tap')).toEqual({
      state: 'held',
      reason: 'unpinned',
    });
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(await store.accept({ tool: 'adb_tap' })).toEqual([
      { name: 'adb_tap', change: 'new', lines: ['not pinned yet'] },
    ]);
    const after = parsePins(await readFile(file, 'utf8'));
    expect(after.readOnly).toBe(true);
    expect(Object.keys(after.tools)).toEqual(['adb_list_packages', 'adb_tap']);
    expect(await readFile(file, 'utf8')).toBe(serializePinsFile(after));
  });

  it('keeps going when the file cannot be written, and says so once', async () => {
    await writeFile(path.join(directory, 'plain-file'), 'x');
    const lines: string[] = [];
    const store = await PinStore.open({
      path: path.join(directory, 'plain-file', 'pins.json'),
      log: (line) => lines.push(line),
    });
    const first = await store.observe([tap]);
    expect(first.writeError).toMatch(/ENOTDIR|EEXIST/);
    await store.observe([list]);
    expect(store.status('adb_tap')).toEqual({ state: 'pinned-now' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^pins: cannot save new pins to .*kept for this run only$/,
    );
  });

  it('refuses a file it cannot trust and leaves it untouched', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe([tap]);
    const good = await readFile(file, 'utf8');
    const cases: Array<[string, RegExp]> = [
      ['{ not json', /not JSON/],
      [
        '{"version":2,"tools":{}}',
        /: its first line must be \{"version":2\} \(or \{"readOnly":true,"version":2\}; a pins file of another layout is not read\): unknown property "tools"; allowed: version, readOnly\./,
      ],
      [
        '{"version":2}\n{"name":"adb_tap"}\n',
        /: line 2 is not a pin as the broker writes it \(\{"hash":"sha256:<hex>","name":"<tool>","tool":\{…\}\}, canonical JSON\)\./,
      ],
      [
        good + good.split('\n')[1] + '\n',
        /: line 3: "adb_tap" is pinned twice\./,
      ],
      [good.slice(0, -1), /: line 2 does not end\./],
      [
        `{"version":2}\n${good.split('\n')[1]}\n${good.split('\n')[1]!.replace('"adb_tap"', '"adb_swipe"')}\n`,
        /: line 3: "adb_swipe" comes after "adb_tap" \(the lines are sorted by name\)\./,
      ],
      [
        '[]',
        /: its first line must be .*: it must be a JSON object, got an array\./,
      ],
      [
        '{"version":1,"readOnly":"yes"}',
        /: its first line must be .*: version must be 2, got number 1; readOnly must be true or false, got the string "yes"\./,
      ],
      [
        good.replace('Tap the screen.', 'Tap the screen!'),
        /hash does not match/,
      ],
    ];
    for (const [text, message] of cases) {
      await writeFile(file, text);
      const error = await PinStore.open({ path: file }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: 'PINS_FILE_INVALID' });
      expect((error as Error).message).toMatch(message);
      expect(await readFile(file, 'utf8')).toBe(text);
    }
  });

  it('opens a pins file by its index and checks its entries later; a hand-edited entry fails the check and nothing is written', async () => {
    const writer = await PinStore.open({ path: file });
    await writer.observe([tap, list]);
    const good = await readFile(file, 'utf8');

    const store = await PinStore.open({ path: file, verify: 'later' });
    expect(store.pinnedHash('adb_tap')).toBe(writer.pinnedHash('adb_tap'));
    await store.verified;
    await store.observe([tap, list]);
    expect(store.status('adb_tap')).toEqual({ state: 'pinned' });

    const edited = good.replace('Tap the screen.', 'Tap the screen!');
    await writeFile(file, edited);
    const opened = await PinStore.open({ path: file, verify: 'later' });
    // The hash is read from the file as it is; the entry's text is not trusted yet.
    expect(opened.pinnedHash('adb_tap')).toBe(writer.pinnedHash('adb_tap'));
    // A call relies on its own pin: that one is checked at once.
    expect(() => opened.checkPin('adb_tap')).toThrow(
      /entry "adb_tap": its hash does not match/,
    );
    await expect(opened.verified).rejects.toMatchObject({
      code: 'PINS_FILE_INVALID',
      message: expect.stringMatching(
        /entry "adb_tap": its hash does not match/,
      ),
    });
    // A backend never listed before: its first listing would be pinned.
    const result = await opened.observe([
      { name: 'touch_swipe', description: 'Swipe.', inputSchema: {} },
    ]);
    expect(result.writeError).toMatch(/hash does not match/);
    expect(await readFile(file, 'utf8')).toBe(edited);
  });

  it('refuses a pins.json in the former layout (one JSON document) with an error naming the layout it reads, and leaves it untouched', async () => {
    const former = `${JSON.stringify(
      {
        tools: {
          adb_tap: {
            annotations: {},
            description: tap.description,
            hash: definitionHash(tap),
            inputSchema: tap.inputSchema,
          },
        },
        version: 1,
      },
      null,
      2,
    )}\n`;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, former);
    for (const verify of ['now', 'later'] as const) {
      const error = await PinStore.open({ path: file, verify }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({
        code: 'PINS_FILE_INVALID',
        message: expect.stringMatching(
          /^Pins file .*pins\.json: its first line must be \{"version":2\} \(or \{"readOnly":true,"version":2\}; a pins file of another layout is not read\): it is not JSON \(.+\): "\{"\. It was left untouched: fix or remove it/,
        ),
      });
    }
    expect(await readFile(file, 'utf8')).toBe(former);
  });

  it('merges with pins another process wrote, and sees an accept made elsewhere', async () => {
    const one = await PinStore.open({ path: file });
    const two = await PinStore.open({ path: file });
    await one.observe([tap]);
    await two.observe([list]);
    const data = parsePins(await readFile(file, 'utf8'));
    expect(Object.keys(data.tools)).toEqual(['adb_list_packages', 'adb_tap']);

    const tap2 = { ...tap, description: 'Tap twice.' };
    await one.observe([tap2]);
    await two.observe([tap2]);
    expect(two.status('adb_tap')).toMatchObject({
      state: 'held',
      reason: 'changed',
    });
    await one.accept({ tool: 'adb_tap' });
    await two.refresh();
    expect(two.status('adb_tap')).toEqual({ state: 'pinned' });
  });
});

describe('the pins file', () => {
  const hash = fc
    .uint8Array({ minLength: 32, maxLength: 32 })
    .map((bytes) => `sha256:${Buffer.from(bytes).toString('hex')}`);
  const entry = fc.record({
    hash,
    description: fc.string({ unit: 'grapheme' }),
    // Schemas and annotations may hold fields named like an entry's own.
    inputSchema: fc.oneof(
      fc.jsonValue(),
      fc.record({ hash, name: fc.string(), tool: fc.constant('x') }),
    ),
    annotations: fc.dictionary(fc.string(), fc.jsonValue()),
  });
  const pinsFile = fc.record({
    readOnly: fc.boolean(),
    // Names with quotes, escapes, newlines and wide characters too.
    tools: fc.dictionary(
      fc.oneof(
        fc.string({ unit: 'grapheme' }),
        fc.constantFrom('a"b', 'a\\b', 'a\nb', 'a","tool":{b'),
      ),
      entry,
      { minKeys: 1, maxKeys: 8 },
    ),
  });

  it('holds one pin per line, each found by its line with its name and hash, as a parse of the line reads it', async () => {
    await fc.assert(
      fc.asyncProperty(pinsFile, async ({ readOnly, tools }) => {
        const text = serializePinsFile({
          version: PINS_FILE_VERSION,
          ...(readOnly ? { readOnly: true } : {}),
          tools,
        });
        const lines = text.split('\n');
        expect(lines).toHaveLength(Object.keys(tools).length + 2);
        expect(parsePins(text)).toEqual({
          version: 2,
          ...(readOnly ? { readOnly: true } : {}),
          // As JSON holds them (-0 is written 0).
          tools: expect.objectContaining(
            JSON.parse(JSON.stringify(tools)),
          ) as unknown,
        });
        // Opened by its lines: each pin's hash is the one its line holds.
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, text);
        const store = await PinStore.open({ path: file, verify: 'later' });
        expect(store.pinnedCount).toBe(Object.keys(tools).length);
        expect(store.readOnlyReason).toBe(readOnly ? 'file' : undefined);
        for (const [name, pin] of Object.entries(tools))
          expect(store.pinnedHash(name)).toBe(pin.hash);
      }),
      { numRuns: 50 },
    );
  });
});

describe('pinVerdict', () => {
  it('refuses a new mutating tool under refuse with TOOL_NEW, naming how to accept it; marks it [new] and lets it through otherwise', () => {
    const held = { state: 'held' as const, reason: 'new' as const };
    expect(
      pinVerdict({
        policy: 'refuse',
        toolName: 'adb_swipe',
        status: held,
        mutating: true,
      }),
    ).toEqual({
      allowed: false,
      code: 'TOOL_NEW',
      mark: '[new]',
      message:
        '"adb_swipe" is new: it appeared on backend "adb" after that backend\'s tools were pinned, so nobody has accepted it yet. It is mutating, so the call was refused and nothing was sent. A person must review it (inspect shows it) and accept it with `heretek-lazy-broker --pin adb_swipe` (or every new tool of the backend with `--pin adb`); then call again.',
    });
    expect(
      pinVerdict({
        policy: 'refuse',
        toolName: 'adb_swipe',
        status: held,
        mutating: false,
      }),
    ).toMatchObject({
      allowed: true,
      mark: '[new]',
      message: expect.stringMatching(/It is read-only, so it stays callable/),
    });
    expect(
      pinVerdict({
        policy: 'warn',
        toolName: 'adb_swipe',
        status: held,
        mutating: true,
      }),
    ).toMatchObject({ allowed: true, mark: '[new]' });
    expect(
      pinVerdict({
        policy: 'refuse',
        toolName: 'adb_swipe',
        status: { state: 'held', reason: 'unpinned' },
        mutating: true,
      }),
    ).toMatchObject({
      allowed: false,
      code: 'TOOL_CHANGED',
      mark: '[changed]',
    });
  });

  const changed = {
    state: 'held' as const,
    reason: 'changed' as const,
    change: { parts: ['description' as const], becameMutating: false },
    pinned: { name: 'x', description: '', inputSchema: {}, annotations: {} },
  };
  it('refuses only changed mutating tools under refuse', () => {
    expect(
      pinVerdict({
        policy: 'refuse',
        toolName: 'x',
        status: changed,
        mutating: false,
      }),
    ).toMatchObject({
      allowed: true,
      mark: '[changed]',
      message: expect.stringMatching(
        /^Note: "x" changed since it was pinned: description\. It is read-only, so it stays callable\./,
      ),
    });
    expect(
      pinVerdict({
        policy: 'refuse',
        toolName: 'x',
        status: changed,
        mutating: true,
      }).allowed,
    ).toBe(false);
    expect(
      pinVerdict({
        policy: 'warn',
        toolName: 'x',
        status: changed,
        mutating: true,
      }),
    ).toMatchObject({ allowed: true, mark: '[changed]' });
    expect(
      pinVerdict({
        policy: 'off',
        toolName: 'x',
        status: changed,
        mutating: true,
      }),
    ).toEqual({ allowed: true, mark: '', message: undefined });
    for (const status of [
      { state: 'pinned' as const },
      { state: 'pinned-now' as const },
      undefined,
    ]) {
      expect(
        pinVerdict({ policy: 'refuse', toolName: 'x', status, mutating: true }),
      ).toEqual({ allowed: true, mark: '', message: undefined });
    }
  });
});

describe('heretekStateDir', () => {
  it('uses an absolute XDG_STATE_HOME, else ~/.local/state', () => {
    expect(heretekStateDir({ env: { XDG_STATE_HOME: '/s' }, home: '/h' })).toBe(
      '/s/heretek',
    );
    expect(
      heretekStateDir({ env: { XDG_STATE_HOME: 'relative' }, home: '/h' }),
    ).toBe('/h/.local/state/heretek');
    expect(heretekStateDir({ env: {}, home: '/h' })).toBe(
      '/h/.local/state/heretek',
    );
  });
});

/** A tool definition numbered `index`, under `prefix`. */
const numbered = (prefix: string, index: number) => ({
  name: `${prefix}_tool_${String(index).padStart(4, '0')}`,
  description: `Tool ${index} of ${prefix}.`,
  inputSchema: { type: 'object', properties: { [`p${index}`]: {} } },
  annotations: { readOnlyHint: index % 2 === 0 },
});

describe('PinStore writes at scale', () => {
  it('writes new pins among the copied ones in the layout of a whole serialization', async () => {
    const store = await PinStore.open({ path: file });
    const tools: Record<string, PinsFile['tools'][string]> = {};
    // Three listings whose names interleave: each write inserts among the copied entries.
    for (const prefix of ['b', 'a', 'c', 'ab']) {
      const listing = Array.from({ length: 300 }, (_, i) =>
        numbered(prefix, i),
      );
      await store.observe(listing);
      for (const tool of listing) {
        const { name, ...definition } = tool;
        tools[name] = {
          hash: store.currentHash(name)!,
          ...definition,
        };
      }
      expect(await readFile(file, 'utf8')).toBe(
        serializePinsFile({ version: PINS_FILE_VERSION, tools }),
      );
    }
    const again = await PinStore.open({ path: file });
    await again.observe([numbered('a', 7), numbered('ab', 299)]);
    expect(again.status('a_tool_0007')).toEqual({ state: 'pinned' });
    expect(again.status('ab_tool_0299')).toEqual({ state: 'pinned' });
  });

  it('gathers new pins into few writes, each on disk once its observe resolves; flush writes the waiting ones at once', async () => {
    const store = await PinStore.open({ path: file });
    await store.observe(
      Array.from({ length: 2000 }, (_, i) => numbered('base', i)),
    );
    const inodes = new Set<number>();
    const acknowledged: Promise<void>[] = [];
    for (let batch = 0; batch < 30; batch += 1) {
      const listing = [numbered(`n${batch}`, batch)];
      acknowledged.push(
        store.observe(listing).then(async () => {
          // Acknowledged: on disk, as a restarted broker would read it.
          const reopened = await PinStore.open({ path: file });
          expect(reopened.pinnedHash(listing[0]!.name)).toBe(
            store.currentHash(listing[0]!.name),
          );
          inodes.add((await stat(file)).ino);
        }),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(acknowledged);
    expect(inodes.size).toBeLessThan(30);
    // On shutdown: a pin still waiting for a quiet moment is written at once.
    const waiting = store.observe([numbered('last', 1)]);
    await store.flush();
    expect(
      (await PinStore.open({ path: file })).pinnedHash('last_tool_0001'),
    ).toBe(store.currentHash('last_tool_0001'));
    await waiting;
    expect((await PinStore.open({ path: file })).pinnedCount).toBe(2031);
  });
});

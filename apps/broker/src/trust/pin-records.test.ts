import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { definitionHash } from './definition-hash.js';
import { PinStore } from './pin-store.js';
import { serializePinsFile, type PinsFile } from './__fixtures__/pins-text.js';
import { toolHashes } from './__fixtures__/tool-hashes.js';
import { freshStateFile } from '../__fixtures__/state-file.js';

let file: string;

freshStateFile('heretek-pin-records-', 'pins.json', (paths) => {
  ({ file } = paths);
});

const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  annotations: { readOnlyHint: true },
});

/** The pins file of `tools` as written by hand from their definition hashes. */
function expectedFile(tools: ReturnType<typeof tool>[]): string {
  const file: PinsFile = { version: 2, tools: {} };
  for (const { name, ...parts } of tools)
    file.tools[name] = { hash: definitionHash({ name, ...parts }), ...parts };
  return serializePinsFile(file);
}

describe("the pin store's per-tool records", () => {
  it('writes pins.json byte for byte as the file of the same pins serialized whole, on the first write and on the writes that copy it', async () => {
    const first = [tool('a_one', 'One.'), tool('a_two', 'Two.')];
    const store = await PinStore.open({ path: file });
    await store.observe(first);
    expect(await readFile(file, 'utf8')).toBe(expectedFile(first));
    // A later write copies the pins already in the file and adds the new one.
    const later = tool('b_three', 'Three.');
    await store.observe([later]);
    await store.flush();
    expect(await readFile(file, 'utf8')).toBe(expectedFile([...first, later]));
  });

  for (const verify of ['now', 'later'] as const)
    it(`keeps every pin state across a reopen (verify ${verify}): pinned, changed, first seen, revoked by hand, new on a known backend`, async () => {
      const kept = tool('t_kept', 'Kept.');
      const changed = tool('t_changed', 'Before.');
      const revoked = tool('t_revoked', 'Revoked.');
      const writer = await PinStore.open({ path: file });
      await writer.observe([kept, changed, revoked]);
      // The revoked pin is removed by hand; the file stays in the layout written.
      const text = expectedFile([kept, changed]);
      await writeFile(file, text);

      const store = await PinStore.open({ path: file, verify });
      await store.verified;
      expect(store.pinnedCount).toBe(2);
      const changedNow = tool('t_changed', 'After.');
      const fresh = tool('t_fresh', 'Fresh.');
      // A backend the file pins nothing of: its first listing is pinned whole.
      const other = tool('u_first', 'First.');
      const result = await store.observe([kept, changedNow, revoked, fresh]);
      const first = await store.observe([other]);
      expect(result).toEqual({
        pinned: [],
        new: ['t_revoked', 't_fresh'],
        changed: ['t_changed'],
        unpinned: [],
      });
      expect(first).toEqual({
        pinned: ['u_first'],
        new: [],
        changed: [],
        unpinned: [],
      });
      expect(store.status('t_kept')).toEqual({ state: 'pinned' });
      // Revoked by hand, or listed after its backend was pinned: held as new.
      expect(store.status('t_revoked')).toEqual({
        state: 'held',
        reason: 'new',
      });
      expect(store.status('t_fresh')).toEqual({ state: 'held', reason: 'new' });
      expect(store.status('u_first')).toEqual({ state: 'pinned-now' });
      const status = store.status('t_changed');
      expect(status).toMatchObject({ state: 'held', reason: 'changed' });
      expect(
        status?.state === 'held' &&
          status.reason === 'changed' &&
          status.pinned,
      ).toEqual({
        name: 't_changed',
        description: 'Before.',
        inputSchema: changed.inputSchema,
        annotations: changed.annotations,
      });
      expect(store.pinnedHash('t_changed')).toBe(definitionHash(changed));
      expect(store.currentHash('t_changed')).toBe(definitionHash(changedNow));
      expect(store.pinnedHash('t_kept')).toBe(definitionHash(kept));
      await store.flush();
      // The changed pin is not written over, the new ones are not pinned, the
      // first listing of another backend is added.
      expect(await readFile(file, 'utf8')).toBe(
        expectedFile([kept, changed, other]),
      );
    });

  it('shows the definition a tool was pinned with in this process once its listing changes, and after it is forgotten and comes back', async () => {
    const before = tool('c_tool', 'Before.');
    const after = tool('c_tool', 'After.');
    const store = await PinStore.open({ path: file });
    await store.observe([before]);
    await store.observe([after]);
    expect(store.pending({ tool: 'c_tool' })[0]?.lines).toEqual([
      'description was "Before."',
      'description is now "After."',
    ]);
    store.forget(['c_tool']);
    expect(store.status('c_tool')).toBeUndefined();
    await store.observe([before]);
    expect(store.status('c_tool')).toEqual({ state: 'pinned' });
    store.forget(['c_tool']);
    await store.observe([after]);
    expect(store.status('c_tool')).toMatchObject({
      state: 'held',
      reason: 'changed',
    });
    expect(store.restore(['c_tool'])).toEqual([before]);
    expect(store.status('c_tool')).toEqual({ state: 'pinned' });
  });

  it('hands over the current definition hashes as bytes equal to their strings', async () => {
    const tools = [tool('d_one', 'One.'), tool('d_two', 'Two.')];
    const store = await PinStore.open({ path: file });
    await store.observe(tools);
    const names = ['d_two', 'd_missing', 'd_one'];
    const expected = toolHashes(
      ['d_two', 'd_one'].map((name) => [name, store.currentHash(name)!]),
    );
    expect(store.currentHashes(names)).toEqual({
      names: expected!.names,
      digests: new Uint8Array(expected!.digests),
    });
    expect(store.matches(store.currentHashes(names))).toBe(true);
  });
});

import {
  existsSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definitionHash } from './definition-hash.js';
import { PinStore, serializePinsFile, type PinEntry } from './pin-store.js';

/** The built worker script (tests run after the build). */
const WORKER = new URL(
  '../../dist/trust/pins-index-worker.js',
  import.meta.url,
);

const dir = mkdtempSync(join(tmpdir(), 'pins-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pins file of `count` tools, large enough to be indexed in the worker. */
function largePinsFile(count: number): {
  file: string;
  tools: Record<string, PinEntry>;
} {
  const tools: Record<string, PinEntry> = {};
  for (let index = 0; index < count; index += 1) {
    const name = `t${index % 50}_tool_${index}`;
    const entry = {
      description: `Tool ${index}: ${'does a careful thing '.repeat(40)}`,
      inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      annotations: { readOnlyHint: index % 2 === 0 },
    };
    tools[name] = { hash: definitionHash({ name, ...entry }), ...entry };
  }
  const file = join(dir, `pins-${count}-${Math.random()}.json`);
  writeFileSync(file, serializePinsFile({ version: 1, tools }));
  return { file, tools };
}

describe('a large pins file indexed in a worker thread', () => {
  it('opens with the pins this thread finds, checks them, and marks no change', async () => {
    expect(existsSync(WORKER)).toBe(true);
    const { file, tools } = largePinsFile(5_000);
    expect(statSync(file).size).toBeGreaterThan(4 << 20);
    const inWorker = await PinStore.open({
      path: file,
      verify: 'later',
      indexWorker: WORKER,
    });
    const inThread = await PinStore.open({ path: file, verify: 'later' });
    expect(inWorker.pinnedCount).toBe(5_000);
    for (const name of Object.keys(tools)) {
      expect(inWorker.pinnedHash(name)).toBe(tools[name]!.hash);
      expect(inWorker.pinnedHash(name)).toBe(inThread.pinnedHash(name));
    }
    await expect(inWorker.verified).resolves.toBeUndefined();
    // A tool listed as pinned is pinned; one listed otherwise has changed.
    const [same, other] = Object.keys(tools) as [string, string];
    await inWorker.observe([
      { name: same, ...tools[same]! },
      { name: other, ...tools[other]!, description: 'Something else' },
    ]);
    expect(inWorker.status(same)).toEqual({ state: 'pinned' });
    expect(inWorker.status(other)?.state).toBe('changed');
  });

  it('refuses an entry edited by hand', async () => {
    const { file, tools } = largePinsFile(5_000);
    const [name] = Object.keys(tools) as [string];
    const edited = {
      ...tools,
      [name]: { ...tools[name]!, description: 'Edited by hand' },
    };
    writeFileSync(file, serializePinsFile({ version: 1, tools: edited }));
    const inWorker = await PinStore.open({
      path: file,
      verify: 'later',
      indexWorker: WORKER,
    });
    await expect(inWorker.verified).rejects.toThrow(
      new RegExp(`entry "${name}": its hash does not match its definition`),
    );
  });
});

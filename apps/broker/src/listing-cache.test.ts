import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ToolCatalog, toolEntryFromMcpTool } from '@heretek/catalog';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchFolder } from './__fixtures__/spawn-broker.js';
import {
  IndexCache,
  listingHash,
  partKey,
  type CachedListing,
} from './listing-cache.js';
import { definitionHash } from './trust/definition-hash.js';
import { toolHashes } from './trust/tool-hashes.js';

const scratch = scratchFolder('broker-listing-cache-');
afterAll(() => scratch.remove());

const backend = (target: string) => ({
  backend: target,
  target,
  profile: 'core',
});
const listings = {
  ghidra: [
    { name: 'decompile_function', description: 'Decompile a function' },
    { name: 'list_functions', description: 'List the functions' },
  ],
  adb: [{ name: 'install_apk', description: 'Install an Android package' }],
};
const backends = new Map(
  Object.keys(listings).map((target) => [target, backend(target)]),
);

/** What discovery keeps of each listing, and the catalog's part saved under its key. */
function cached(): Map<string, CachedListing> {
  const catalog = new ToolCatalog({ tools: [] });
  const result = new Map<string, CachedListing>();
  for (const [target, tools] of Object.entries(listings)) {
    catalog.replaceBackend(
      target,
      tools.map((tool) =>
        toolEntryFromMcpTool({
          backend: backend(target),
          tool: { ...tool, inputSchema: { type: 'object' } },
          source: 'discovered',
        }),
      ),
    );
    const definitions = toolHashes(
      tools.map((tool) => {
        const name = `${target}_${tool.name}`;
        return [name, definitionHash({ name, ...tool })] as const;
      }),
    )!;
    const key = { hash: listingHash(tools), definitions };
    result.set(target, {
      ...key,
      part: catalog.saveBackend({ target, key: partKey(key) })!,
    });
  }
  return result;
}

describe('IndexCache', () => {
  it('reads back what it wrote, every part and hash table a view of the one read of the file', async () => {
    const file = path.join(scratch.dir, 'round-trip.bin');
    const lines: string[] = [];
    const cache = new IndexCache({ file, log: (line) => lines.push(line) });
    const written = cached();
    await cache.save(written);
    const loaded = await new IndexCache({
      file,
      log: (line) => lines.push(line),
    }).load(backends);
    expect([...loaded.keys()]).toEqual(['ghidra', 'adb']);
    const buffers = new Set<ArrayBufferLike>();
    for (const [target, listing] of loaded) {
      const original = written.get(target)!;
      expect(listing.hash).toBe(original.hash);
      expect(Buffer.from(listing.part).equals(original.part)).toBe(true);
      expect(listing.definitions!.names).toEqual(original.definitions!.names);
      expect(
        Buffer.from(listing.definitions!.digests).equals(
          Buffer.from(original.definitions!.digests),
        ),
      ).toBe(true);
      // A part starts at a multiple of 8 in the file, for the catalog to read in place.
      expect(listing.part.byteOffset % 8).toBe(0);
      buffers.add(listing.part.buffer).add(listing.definitions!.digests.buffer);
    }
    expect(buffers.size).toBe(1);
    expect(readFileSync(file).length).toBe([...buffers][0]!.byteLength);
    expect(lines).toEqual([]);
  });

  it('drops a part written beside other definition hashes than the ones it was saved with, and a backend no longer configured', async () => {
    const file = path.join(scratch.dir, 'mismatch.bin');
    const cache = new IndexCache({ file, log: () => {} });
    const written = cached();
    const ghidra = written.get('ghidra')!;
    // One tool's hash left out of the table: the part still holds the tool.
    written.set('ghidra', {
      ...ghidra,
      definitions: {
        names: ghidra.definitions!.names.slice(1),
        digests: ghidra.definitions!.digests.subarray(32),
      },
    });
    await cache.save(written);
    expect([...(await cache.load(backends)).keys()]).toEqual(['adb']);
    expect([
      ...(await cache.load(new Map([['ghidra', backend('ghidra')]]))).keys(),
    ]).toEqual([]);
  });
});

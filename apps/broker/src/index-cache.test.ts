import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ToolCatalog,
  toolEntryFromMcpTool,
  type SavedCatalogStream,
} from '@heretek/catalog';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchFolder } from './__fixtures__/spawn-broker.js';
import {
  IndexCache,
  listingHash,
  partKey,
  type CachedListing,
} from './index-cache.js';
import { definitionHash } from './trust/definition-hash.js';
import { toolHashes } from './trust/__fixtures__/tool-hashes.js';

const scratch = scratchFolder('broker-index-cache-');
afterAll(() => scratch.remove());

const backend = (target: string) => ({
  backend: target,
  target,
  profile: 'core',
});
const LISTINGS = {
  ghidra: [
    { name: 'decompile_function', description: 'Decompile a function' },
    { name: 'list_functions', description: 'List the functions' },
  ],
  adb: [{ name: 'install_apk', description: 'Install an Android package' }],
};
const BACKENDS = new Map(
  Object.keys(LISTINGS).map((target) => [target, backend(target)]),
);

/** What discovery keeps of each listing, and the catalog built from them. */
function discovered(): {
  listings: Map<string, CachedListing>;
  catalog: ToolCatalog;
} {
  const catalog = new ToolCatalog({ tools: [] });
  const listings = new Map<string, CachedListing>();
  for (const [target, tools] of Object.entries(LISTINGS)) {
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
        return [name, definitionHash({ ...tool, name })] as const;
      }),
    )!;
    listings.set(target, { hash: listingHash(tools), definitions });
  }
  return { listings, catalog };
}

/** A saved catalog stream's header and bytes read whole in memory. */
async function wholeOf(
  stream: SavedCatalogStream,
): Promise<{ header: unknown; bytes: Uint8Array }> {
  const bytes = new Uint8Array(stream.byteLength);
  let at = 0;
  for await (const piece of stream.chunks()) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return { header: JSON.parse(JSON.stringify(stream.header)), bytes };
}

describe('IndexCache', () => {
  it('reads back what it wrote, the catalog and every hash table a view of the one read of the file', async () => {
    const file = path.join(scratch.dir, 'round-trip.bin');
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const { listings, catalog } = discovered();
    await new IndexCache({ file, log }).save(listings, (keys) =>
      catalog.saveCatalogStream(keys),
    );
    const loaded = (await new IndexCache({ file, log }).load(BACKENDS))!;
    expect([...loaded.listings.keys()]).toEqual(['ghidra', 'adb']);
    const buffers = new Set<ArrayBufferLike>([loaded.catalog.bytes.buffer]);
    for (const [target, listing] of loaded.listings) {
      const original = listings.get(target)!;
      expect(listing.hash).toBe(original.hash);
      expect(listing.definitions!.names).toEqual(original.definitions!.names);
      expect(
        Buffer.from(listing.definitions!.digests).equals(
          Buffer.from(original.definitions!.digests),
        ),
      ).toBe(true);
      buffers.add(listing.definitions!.digests.buffer);
    }
    expect(buffers.size).toBe(1);
    expect(readFileSync(file).length).toBe([...buffers][0]!.byteLength);
    // At a multiple of 8 in the file, for the catalog to read in place.
    expect(loaded.catalog.bytes.byteOffset % 8).toBe(0);
    const restored = new ToolCatalog({ tools: [] });
    await restored.restoreCatalogAsync(loaded.catalog);
    expect(restored.search({ query: 'decompile' }).hits[0]?.name).toBe(
      'ghidra_decompile_function',
    );
    expect(lines).toEqual([]);
  });

  it("records the pins file's digest on the targets it covers, and reads it back with their definition hashes only", async () => {
    const file = path.join(scratch.dir, 'pins-digest.bin');
    const digest = `sha256:${'ab'.repeat(32)}`;
    const { listings, catalog } = discovered();
    const asked: string[][] = [];
    await new IndexCache({
      file,
      log: () => {},
      pinsCovering: async (taken) => {
        asked.push([...taken.keys()]);
        return { digest, inspected: new Set(['adb']) };
      },
    }).save(listings, (keys) => catalog.saveCatalogStream(keys));
    expect(asked).toEqual([['ghidra', 'adb']]);
    const loaded = (await new IndexCache({ file, log: () => {} }).load(
      BACKENDS,
    ))!;
    expect(loaded.listings.get('adb')!.definitions!.pinsDigest).toBe(digest);
    expect(loaded.listings.get('ghidra')!.definitions!.pinsDigest).toBe(
      undefined,
    );
    // Without a digest to record (a write waiting, policy off), none is read.
    await new IndexCache({
      file,
      log: () => {},
      pinsCovering: async () => undefined,
    }).save(listings, (keys) => catalog.saveCatalogStream(keys));
    const again = (await new IndexCache({ file, log: () => {} }).load(
      BACKENDS,
    ))!;
    for (const listing of again.listings.values())
      expect(listing.definitions!.pinsDigest).toBe(undefined);
  });

  it('drops a backend saved beside other definition hashes than the ones in the file, and one no longer configured', async () => {
    const file = path.join(scratch.dir, 'mismatch.bin');
    const cache = new IndexCache({ file, log: () => {} });
    const { listings, catalog } = discovered();
    const keys = new Map(
      [...listings].map(([target, listing]) => [target, partKey(listing)]),
    );
    const ghidra = listings.get('ghidra')!;
    // One tool's hash left out of the table: the catalog still holds the tool.
    listings.set('ghidra', {
      ...ghidra,
      definitions: {
        names: ghidra.definitions!.names.slice(1),
        digests: ghidra.definitions!.digests.subarray(32),
      },
    });
    await cache.save(listings, () => catalog.saveCatalogStream(keys));
    expect([...(await cache.load(BACKENDS))!.listings.keys()]).toEqual(['adb']);
    const onlyGhidra = new Map([['ghidra', backend('ghidra')]]);
    expect([...(await cache.load(onlyGhidra))!.listings.keys()]).toEqual([]);
  });

  it('writes a catalog streamed a piece at a time as the same bytes as the whole saved catalog (the test oracle)', async () => {
    // 12,000 tools: several megabytes saved, so several pieces.
    const catalog = new ToolCatalog({ tools: [] });
    const listings = new Map<string, CachedListing>();
    const backends = new Map<string, ReturnType<typeof backend>>();
    for (let t = 0; t < 12; t += 1) {
      const target = `t${t}`;
      const tools = Array.from({ length: 1000 }, (_, i) => ({
        name: `tool_${i}`,
        description: `Tool ${i} of ${target}: ${'reads and writes records, '.repeat(8)}ünïcode ${i}`,
        inputSchema: { type: 'object', properties: { [`p${i}`]: {} } },
      }));
      backends.set(target, backend(target));
      catalog.replaceBackend(
        target,
        tools.map((tool) =>
          toolEntryFromMcpTool({
            backend: backend(target),
            tool,
            source: 'discovered',
          }),
        ),
      );
      listings.set(target, { hash: listingHash(tools) });
    }
    const streamedFile = path.join(scratch.dir, 'streamed.bin');
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    let whole: ReturnType<typeof wholeOf> | undefined;
    await new IndexCache({ file: streamedFile, log }).save(listings, (keys) => {
      whole = catalog.saveCatalogStream(keys).then(wholeOf);
      return catalog.saveCatalogStream(keys);
    });
    const streamed = readFileSync(streamedFile);
    expect(streamed.length).toBeGreaterThan(3 << 20);
    const loaded = (await new IndexCache({ file: streamedFile, log }).load(
      backends,
    ))!;
    const { header, bytes } = await whole!;
    expect(loaded.catalog.header).toEqual(header);
    expect(Buffer.from(loaded.catalog.bytes).equals(Buffer.from(bytes))).toBe(
      true,
    );
    const restored = new ToolCatalog({ tools: [] });
    await restored.restoreCatalogAsync(loaded.catalog);
    expect(restored.size).toBe(12_000);
    expect(lines).toEqual([]);
  });

  it('removes, when opened, the temporary file of a broker killed while writing, not that of one still writing', async () => {
    const folder = path.join(scratch.dir, 'stopped');
    mkdirSync(folder);
    const file = path.join(folder, 'index-cache.bin');
    /** A process that leaves its temporary file beside the cache, as a write in progress does. */
    const writer = async () => {
      const child = spawn(
        process.execPath,
        [
          '-e',
          `require('fs').writeFileSync(${JSON.stringify(folder)} + '/.index-cache.bin.' + process.pid + '.a1b2c3.tmp', 'part'); console.log('written'); setInterval(() => {}, 1000);`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await once(child.stdout, 'data');
      return child;
    };
    const killed = await writer();
    const running = await writer();
    try {
      killed.kill('SIGKILL');
      await once(killed, 'exit');
      expect(readdirSync(folder)).toHaveLength(2);
      const cache = new IndexCache({ file, log: () => {} });
      await cache.swept;
      expect(readdirSync(folder)).toEqual([
        `.index-cache.bin.${running.pid}.a1b2c3.tmp`,
      ]);
    } finally {
      running.kill('SIGKILL');
    }
  });
});

import { Buffer } from 'node:buffer';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { EarlyReads } from './trust/early-reads.js';
import { heretekStateDir } from './trust/state-dir.js';

/** Reads of index cache files started before the broker loaded. */
const early = new EarlyReads<Buffer>();

/**
 * Starts reading the index cache file a broker served with `env` will open,
 * before the rest of the broker loads (the read runs on the thread pool
 * while the modules are compiled). Only a head start: the configuration,
 * read later, decides (another file, or none, leaves the read unused).
 */
export function prefetchIndexCache(env: NodeJS.ProcessEnv): void {
  const file =
    env.HERETEK_INDEX_CACHE_FILE ??
    path.join(heretekStateDir({ env }), 'index-cache.bin');
  if (file === 'off' || env.HERETEK_BROKER_OFFLINE === '1') return;
  early.start(file, readWhole(path.resolve(file)));
}

/**
 * The read of `file` started by {@link prefetchIndexCache}, once (later
 * reads start afresh); any other early read is dropped.
 */
export function earlyRead(file: string): Promise<Buffer> | undefined {
  const read = early.take(file);
  early.clear();
  return read;
}

/** Drops the early reads (the configuration uses no index cache). */
export function dropEarlyReads(): void {
  early.clear();
}

/**
 * A file's bytes, read in as few reads as its size allows (`readFile` reads
 * 512 KiB at a time, a round trip through the thread pool each, which a busy
 * machine makes slow).
 */
export async function readWhole(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.allocUnsafeSlow(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === size ? bytes : bytes.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

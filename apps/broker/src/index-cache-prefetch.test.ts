import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  dropEarlyReads,
  earlyRead,
  prefetchIndexCache,
} from './index-cache-prefetch.js';

describe('the index cache read before the broker loads', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'heretek-prefetch-'));
  const file = path.join(dir, 'index-cache.bin');
  afterEach(() => {
    dropEarlyReads();
  });

  it('is taken once by the index cache of that file', async () => {
    writeFileSync(file, 'cached bytes');
    prefetchIndexCache({ HERETEK_INDEX_CACHE_FILE: file });
    const read = earlyRead(path.join(dir, '.', 'index-cache.bin'));
    expect(read).toBeDefined();
    expect(String(await read)).toBe('cached bytes');
    expect(earlyRead(file)).toBeUndefined();
  });

  it('follows XDG_STATE_HOME, and is dropped when another file is configured', async () => {
    const state = path.join(dir, 'state');
    prefetchIndexCache({ XDG_STATE_HOME: state });
    expect(earlyRead(file)).toBeUndefined();
    expect(earlyRead(path.join(state, 'heretek', 'index-cache.bin'))).toBe(
      undefined,
    );
    prefetchIndexCache({ XDG_STATE_HOME: state });
    // A missing file: the read fails, and the index cache reports it as it
    // would its own read.
    await expect(
      earlyRead(path.join(state, 'heretek', 'index-cache.bin')),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is not started offline or with the cache off', () => {
    writeFileSync(file, 'bytes');
    prefetchIndexCache({ HERETEK_INDEX_CACHE_FILE: 'off' });
    prefetchIndexCache({
      HERETEK_INDEX_CACHE_FILE: file,
      HERETEK_BROKER_OFFLINE: '1',
    });
    expect(earlyRead(file)).toBeUndefined();
    rmSync(dir, { recursive: true, force: true });
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokerConfigError } from './config.js';
import { indexCacheFor, openBroker, readBrokerSetup } from './open-broker.js';

const state = mkdtempSync(path.join(tmpdir(), 'heretek-open-broker-'));
afterAll(() => rmSync(state, { recursive: true, force: true }));

const setup = (url: string) =>
  readBrokerSetup({
    env: {
      HERETEK_GATEWAY_URL: url,
      HERETEK_PINS_FILE: path.join(state, 'pins.json'),
      HERETEK_USAGE_FILE: 'off',
      HERETEK_INDEX_CACHE_FILE: 'off',
    },
  });

describe('openBroker', () => {
  it('refuses a gateway option the client refuses when it opens, or, with deferGateway, when the client is loaded', async () => {
    await expect(
      openBroker({ setup: setup('ftp://gw'), log: () => {} }),
    ).rejects.toThrow(/HERETEK_GATEWAY_URL: must be an absolute http/);

    const opened = await openBroker({
      setup: setup('ftp://gw'),
      log: () => {},
      deferGateway: true,
    });
    const refused = await opened.connectGateway!().catch(
      (error: unknown) => error,
    );
    expect(BrokerConfigError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(
      /HERETEK_GATEWAY_URL: must be an absolute http/,
    );
    await opened.broker.close();
  });

  it('builds the broker without an index cache offline or with HERETEK_INDEX_CACHE_FILE=off, so none is read or written; with one of the configured file otherwise', () => {
    const file = path.join(state, 'index-cache.bin');
    const off = readBrokerSetup({
      env: { HERETEK_INDEX_CACHE_FILE: 'off', HERETEK_USAGE_FILE: 'off' },
    }).config;
    expect(off.indexCacheFile).toBe('off');
    expect(indexCacheFor(off, undefined, () => {})).toBeUndefined();
    const offline = readBrokerSetup({
      env: { HERETEK_INDEX_CACHE_FILE: file, HERETEK_BROKER_OFFLINE: '1' },
    }).config;
    expect(indexCacheFor(offline, undefined, () => {})).toBeUndefined();
    const on = readBrokerSetup({
      env: { HERETEK_INDEX_CACHE_FILE: file, HERETEK_USAGE_FILE: 'off' },
    }).config;
    expect(indexCacheFor(on, undefined, () => {})?.file).toBe(file);
  });
});

import { afterEach } from 'vitest';
import { GatewayClient } from '../gateway-client.js';
import type { Listening } from './servers.js';

type ClientOptions = Partial<ConstructorParameters<typeof GatewayClient>[0]>;

/**
 * Registers, in the calling test file, an afterEach that closes what each test
 * opened (last first). `track` adds anything with a `close`; `client` makes a
 * per-target GatewayClient for a fixture server and tracks it; `connect` waits
 * for a starting fixture server and does both.
 */
export function closeAfterEach(): {
  track: <T extends { close: () => Promise<void> }>(item: T) => T;
  client: (server: Listening, extra?: ClientOptions) => GatewayClient;
  connect: <S extends Listening>(
    starting: Promise<S>,
    extra?: ClientOptions,
  ) => Promise<{ server: S; gateway: GatewayClient }>;
} {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  const track = <T extends { close: () => Promise<void> }>(item: T): T => {
    cleanups.push(() => item.close());
    return item;
  };
  const client = (server: Listening, extra: ClientOptions = {}) =>
    track(
      new GatewayClient({
        url: server.url,
        mode: 'per-target',
        role: 'director',
        timeoutMs: 5_000,
        ...extra,
      }),
    );
  const connect = async <S extends Listening>(
    starting: Promise<S>,
    extra?: ClientOptions,
  ) => {
    const server = track(await starting);
    return { server, gateway: client(server, extra) };
  };
  return { track, client, connect };
}

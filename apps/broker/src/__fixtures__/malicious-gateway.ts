// Test fixture: the malicious SDK servers (trust/__fixtures__) as a gateway
// for one e2e test file, with the backend table and the environment of a
// staff-backend broker that reaches them.
import { afterAll, beforeAll } from 'vitest';
import {
  startMaliciousServers,
  type FixtureTool,
  type MaliciousServers,
} from '../trust/__fixtures__/malicious-servers.js';
import {
  runBrokerCli,
  scratchFolder,
  spawnBroker,
  type BackendRow,
  type SpawnedBroker,
} from './spawn-broker.js';

export type MaliciousGateway = {
  /** The servers; set once the file's `beforeAll` has run. */
  readonly servers: MaliciousServers;
  /** The file's temporary folder (removed after its tests). */
  readonly dir: string;
  /** A broker environment: the gateway, the backend table, role `staff-backend`, then `extra`. */
  env: (extra?: Record<string, string>) => Record<string, string>;
  /** Starts a broker in {@link MaliciousGateway.env}`(extra)` (it waits for start-up discovery unless told not to). */
  start: (
    extra?: Record<string, string>,
    options?: Parameters<typeof spawnBroker>[1],
  ) => Promise<SpawnedBroker>;
  /** Runs the broker CLI with `args` in {@link MaliciousGateway.env}`(extra)`. */
  cli: (
    args: string[],
    extra?: Record<string, string>,
  ) => ReturnType<typeof runBrokerCli>;
};

/**
 * For one test file: the servers serving `tools` (one target each), started
 * before its tests and closed after them, behind a backend table of `rows`.
 */
export function useMaliciousGateway(
  prefix: string,
  {
    tools,
    rows,
  }: {
    tools?: Record<string, FixtureTool[]>;
    rows: ReadonlyArray<BackendRow | string>;
  },
): MaliciousGateway {
  const scratch = scratchFolder(prefix);
  const backendsFile = scratch.backends(rows);
  let servers: MaliciousServers | undefined;
  beforeAll(async () => {
    servers = await startMaliciousServers(tools);
  });
  afterAll(async () => {
    await servers?.close();
    scratch.remove();
  });
  const gateway: MaliciousGateway = {
    get servers() {
      if (servers === undefined)
        throw new Error('the malicious servers start in beforeAll');
      return servers;
    },
    dir: scratch.dir,
    env: (extra = {}) => ({
      HERETEK_GATEWAY_URL: gateway.servers.url,
      HERETEK_BACKENDS_FILE: backendsFile,
      HERETEK_BROKER_ROLE: 'staff-backend',
      ...extra,
    }),
    start: (extra, options) => spawnBroker(gateway.env(extra), options),
    cli: (args, extra) => runBrokerCli(args, gateway.env(extra)),
  };
  return gateway;
}

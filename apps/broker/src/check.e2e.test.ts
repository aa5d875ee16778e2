import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '#gateway-client-fixtures/servers.js';
import {
  startMcpBackends,
  type McpBackends,
} from './__fixtures__/mcp-backends.js';
import { runBrokerCli, scratchFolder } from './__fixtures__/spawn-broker.js';

const TOOL = {
  name: 'list_packages',
  description: 'List installed Android packages on a device',
  inputSchema: { type: 'object', properties: {} },
  readOnly: true,
};

const scratch = scratchFolder('broker-check-');
const dir = scratch.dir;
const backendsFile = scratch.backends([
  { backend: 'iksnerd/adb-mcp', target: 'adb', profile: 'android' },
  { backend: 'heretek-core', target: 'core', profile: 'core' },
]);

afterAll(() => scratch.remove());

describe('heretek-lazy-broker --check against a live loopback gateway', () => {
  let backends: McpBackends;

  beforeEach(async () => {
    backends = await startMcpBackends({
      adb: [TOOL, { ...TOOL, name: 'tap' }],
      core: [TOOL],
    });
  });

  afterEach(async () => {
    await backends.close();
  });

  it('exits 0 and reports tools and time per backend when every backend answers', async () => {
    const { code, stderr, stdout } = await runBrokerCli(
      ['--check', '--backends', backendsFile],
      {
        HERETEK_GATEWAY_URL: backends.url,
      },
    );
    expect(stdout).toBe('');
    expect(code).toBe(0);
    expect(stderr).toMatch(
      /^checking gateway http:\/\/127\.0\.0\.1:\d+ \(per-target\), role director, 2 backends\n/,
    );
    expect(stderr).toMatch(/\n {2}ok {4}adb {5}\s+2 tools {2}\d+ ms\n/);
    expect(stderr).toMatch(/\n {2}ok {4}core {4}\s+1 tools {2}\d+ ms\n/);
    expect(stderr).toMatch(
      /\n2\/2 backends answered in \d+ ms\npins file .*pins\.json: 0 tools pinned, read-only, 3 not in the pins file \(adb_list_packages, adb_tap, core_list_packages\); review and accept with --pin <tool>, or --pin for all; policy refuse\nusage file .*usage\.jsonl: not created yet \(0 uses\)\n$/,
    );
    expect(backends.listings.sort()).toEqual(['/mcp/adb', '/mcp/core']);
  });

  it('exits 1 and says why when one backend fails', async () => {
    backends.failing.add('core');
    const { code, stderr } = await runBrokerCli(
      ['--check', `--backends=${backendsFile}`],
      {
        HERETEK_GATEWAY_URL: backends.url,
      },
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/\n {2}ok {4}adb .*2 tools/);
    expect(stderr).toMatch(/\n {2}FAIL {2}core {4}.*503.*\(\d+ ms\)\n/);
    expect(stderr).toMatch(/\n1\/2 backends answered in \d+ ms\npins file /);
  });

  it('takes --backends over HERETEK_BACKENDS_FILE', async () => {
    const { code, stderr } = await runBrokerCli(
      ['--check', '--backends', backendsFile],
      {
        HERETEK_GATEWAY_URL: backends.url,
        HERETEK_BACKENDS_FILE: join(dir, 'missing.json'),
      },
    );
    expect(code).toBe(0);
    expect(stderr).toContain('2/2 backends answered');
  });
});

describe('heretek-lazy-broker --check when it cannot check', () => {
  it('exits 2 when nothing listens at the gateway address', async () => {
    const port = await freePort();
    const { code, stderr, stdout } = await runBrokerCli(
      ['--check', '--backends', backendsFile],
      {
        HERETEK_GATEWAY_URL: `http://127.0.0.1:${port}`,
      },
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/\n {2}FAIL {2}adb .*CONNECTION_REFUSED/);
    expect(stderr).toMatch(
      /\ngateway unreachable: none of 2 backends could connect/,
    );
  });

  it.each([
    [
      ['--check'],
      { HERETEK_GATEWAY_MODE: 'sideways' },
      /HERETEK_GATEWAY_MODE must be per-target or multiplexed/,
    ],
    [
      ['--check'],
      { HERETEK_GATEWAY_URL: 'http://u:p@127.0.0.1:1' },
      /HERETEK_GATEWAY_URL: must not carry credentials/,
    ],
    [
      ['--check', '--backends', '/nonexistent/backends.json'],
      {},
      /--backends: cannot read \/nonexistent\/backends\.json/,
    ],
    [['--check', '--backends'], {}, /--backends needs a file/],
    [['--check', '--check'], {}, /unknown argument "--check"/],
  ])('exits 2 for %j with %j', async (args, env, message) => {
    const { code, stderr, stdout } = await runBrokerCli(args, env);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/backends answered/);
    expect(stdout).toBe('');
  });

  it('exits 0 offline after validating the configuration, with nothing to discover', async () => {
    const { code, stderr } = await runBrokerCli(['--check'], {
      HERETEK_BROKER_OFFLINE: '1',
    });
    expect(code).toBe(0);
    expect(stderr).toMatch(/^configuration valid; offline/);
  });
});

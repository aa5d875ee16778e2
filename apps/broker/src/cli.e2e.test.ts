import { describe, expect, it } from 'vitest';
import {
  resultText,
  runBrokerCli,
  spawnBroker,
  startBrokerProcess,
  type TextResult,
  useBroker,
} from './__fixtures__/spawn-broker.js';

describe('heretek-lazy-broker over stdio (built dist/cli.js, SDK client)', () => {
  const broker = useBroker({
    HERETEK_BROKER_OFFLINE: '1',
    HERETEK_BROKER_ROLE: 'director',
  });

  it('lists exactly the three meta-tools', async () => {
    const { tools } = await broker.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'mcp_call_tool',
      'mcp_inspect_schema',
      'mcp_search_tools',
    ]);
  });

  it('finds adb tools for an android install task', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_search_tools',
      arguments: { query: 'android adb install apk', profile: 'android' },
    });
    expect((result as TextResult).isError).not.toBe(true);
    const firstLine = resultText(result).split('\n')[0] ?? '';
    expect(firstLine).toMatch(/^adb_/);
  });

  it('says which query words matched nothing', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_search_tools',
      arguments: { query: 'decompile function zzyzxq' },
    });
    expect(resultText(result)).toMatch(/Matched nothing: .*zzyzxq/);
  });

  it('names the known targets when a search asks for an unknown one', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_search_tools',
      arguments: { query: 'read file', target: 'nosuch' },
    });
    expect((result as TextResult).isError).toBe(true);
    expect(resultText(result)).toMatch(
      /^UNKNOWN_TARGET: No backend target "nosuch"\. Known targets \(tools\): core \(\d+\), ghidra \(\d+\), /,
    );
  });

  it('inspects a tool schema by exact name', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_inspect_schema',
      arguments: { name: 'core_read_file' },
    });
    const view = JSON.parse(resultText(result)) as {
      name: string;
      mutating: boolean;
      inputSchema: { required: string[] };
    };
    expect(view.name).toBe('core_read_file');
    expect(view.mutating).toBe(false);
    expect(view.inputSchema.required).toContain('path');
  });

  it('answers an unknown name with an error and close suggestions', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_inspect_schema',
      arguments: { name: 'adb_tapp' },
    });
    expect((result as TextResult).isError).toBe(true);
    expect(resultText(result)).toMatch(/UNKNOWN_TOOL: .*Closest: .*adb_/);
  });

  it('refuses a mutating tool for the read-only director, before anything else', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_call_tool',
      arguments: { name: 'adb_tap', arguments: { x: 10, y: 20 } },
    });
    expect((result as TextResult).isError).toBe(true);
    expect(resultText(result)).toMatch(
      /^ROLE_FORBIDDEN: Role "director" is read-only/,
    );
  });

  it('returns a schema error naming the bad argument, and sends nothing', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_call_tool',
      arguments: { name: 'core_read_file', arguments: { path: 42 } },
    });
    expect((result as TextResult).isError).toBe(true);
    expect(resultText(result)).toMatch(
      /^INVALID_ARGUMENTS: .*\n- arguments\/path: must be string/,
    );
  });

  it('says plainly that no gateway is configured once the checks pass', async () => {
    const result = await broker.client.callTool({
      name: 'mcp_call_tool',
      arguments: { name: 'core_read_file', arguments: { path: 'README.md' } },
    });
    expect((result as TextResult).isError).toBe(true);
    expect(resultText(result)).toMatch(/^NO_GATEWAY: No gateway is configured/);
  });

  it('writes nothing but JSON-RPC 2.0 messages to stdout, and logs on stderr', () => {
    expect(broker.transport.stdoutLines.length).toBeGreaterThan(5);
    for (const line of broker.transport.stdoutLines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      expect(message.jsonrpc).toBe('2.0');
    }
    expect(broker.transport.pending).toBe('');
    expect(broker.stderr()).toMatch(
      /serving 3 meta-tools over 34 tools from 12 backends/,
    );
    expect(broker.stderr()).toMatch(/waiting for an MCP client on stdio/);
  });
});

describe('heretek-lazy-broker command line', () => {
  it('--version prints the package version', async () => {
    const { code, stdout, stderr } = await runBrokerCli(['--version'], {});
    expect(code).toBe(0);
    const { version } = (
      await import('../package.json', { with: { type: 'json' } })
    ).default;
    expect(stderr.trim()).toBe(version);
    expect(stdout).toBe('');
  });

  it('--help names the three tools and every environment variable', async () => {
    const { code, stdout, stderr } = await runBrokerCli(['--help'], {});
    expect(code).toBe(0);
    for (const name of [
      'mcp_search_tools',
      'HERETEK_GATEWAY_URL',
      'HERETEK_BROKER_ROLE',
      'HERETEK_BROKER_OFFLINE',
    ]) {
      expect(stderr).toContain(name);
    }
    expect(stdout).toBe('');
  });

  it.each([
    [
      'HERETEK_GATEWAY_MODE',
      'sideways',
      /HERETEK_GATEWAY_MODE must be per-target or multiplexed/,
    ],
    [
      'HERETEK_BROKER_ROLE',
      'root',
      /HERETEK_BROKER_ROLE must be one of director/,
    ],
    [
      'HERETEK_GATEWAY_TIMEOUT_MS',
      'soon',
      /HERETEK_GATEWAY_TIMEOUT_MS must be a whole number/,
    ],
    [
      'HERETEK_GATEWAY_URL',
      'ftp://x',
      /HERETEK_GATEWAY_URL: must be an absolute http/,
    ],
    ['HERETEK_BROKER_OFFLINE', 'yes', /HERETEK_BROKER_OFFLINE must be 1 or 0/],
  ])('exits 2 naming %s when it is %j', async (name, value, message) => {
    const { code, stdout, stderr } = await runBrokerCli([], { [name]: value });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  it('refuses an unknown argument with exit 2', async () => {
    const { code, stderr } = await runBrokerCli(['--frobnicate'], {});
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown argument "--frobnicate"/);
  });
});

describe('heretek-lazy-broker when its client goes away', () => {
  it('exits once its stdout and stderr pipes are closed, without spinning', async () => {
    const child = startBrokerProcess({ HERETEK_BROKER_OFFLINE: '1' });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stderr.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('waiting for an MCP client')) resolve();
      });
    });
    child.stdout.destroy();
    child.stderr.destroy();
    // stdin stays open: only the failed writes can tell the broker its client is gone.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })}\n`,
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(killer);
    expect(code).toBe(0);
  });
});

describe('heretek-lazy-broker serving skills (HERETEK_SKILLS_ROOT)', () => {
  it('serves the repository’s lock-verified skills and still lists only three tools', async () => {
    const { fileURLToPath } = await import('node:url');
    const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
    const broker = await spawnBroker({
      HERETEK_BROKER_OFFLINE: '1',
      HERETEK_SKILLS_ROOT: repoRoot,
    });
    try {
      const { tools } = await broker.client.listTools();
      expect(tools).toHaveLength(3);
      expect(broker.stderr()).toMatch(
        /2 verified skills served \(lazy-search, red-proof\)/,
      );
    } finally {
      await broker.close();
    }
  });
});

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
} from './__fixtures__/mcp-backends.js';
import {
  resultText,
  scratchFolder,
  spawnBroker,
  type SpawnedBroker,
  type TextResult,
} from './__fixtures__/spawn-broker.js';

const scratch = scratchFolder('broker-lifecycle-');
afterAll(() => scratch.remove());

const backendsFile = (targets: string[]) =>
  scratch.backends(targets, `${targets.join('-')}.json`);

/** The exit code of `broker`, once its stderr is read to the end. */
const exitOf = (broker: SpawnedBroker) =>
  new Promise<number | null>((resolve) =>
    broker.child.once('close', (code) => resolve(code)),
  );

describe('shutdown', () => {
  it('aborts a call in flight when stdin closes, exits 0 at once, and writes nothing after', async () => {
    const slow: FixtureTool = {
      name: 'slow_dump',
      description: 'Slow dump',
      inputSchema: { type: 'object', properties: {} },
      readOnly: true,
      delayMs: 60_000,
    };
    const backends = await startMcpBackends({ adb: [slow] });
    const broker = await spawnBroker({
      HERETEK_GATEWAY_URL: backends.url,
      HERETEK_BACKENDS_FILE: backendsFile(['adb']),
    });
    try {
      const pending = broker.client
        .callTool({
          name: 'mcp_call_tool',
          arguments: { name: 'adb_slow_dump', arguments: {} },
        })
        .catch(() => undefined);
      await expect
        .poll(() => backends.calls.some((c) => c.tool === 'slow_dump'), {
          message: 'the call to reach the backend',
        })
        .toBe(true);
      const linesBefore = broker.transport.stdoutLines.length;
      const exited = exitOf(broker);
      broker.child.stdin.end();
      expect(await exited).toBe(0);
      expect(broker.stderr()).toMatch(/shutting down: stdin closed/);
      expect(broker.stderr()).toMatch(
        /shutdown: aborted discovery and 1 call in flight/,
      );
      expect(broker.stderr()).not.toMatch(/exiting anyway/);
      expect(broker.transport.stdoutLines.length).toBe(linesBefore);
      void pending;
    } finally {
      await broker.close();
      await backends.close();
    }
  });
});

describe('a request line over the size limit', () => {
  it('is dropped and answered with a JSON-RPC error; the broker keeps serving', async () => {
    const broker = await spawnBroker({ HERETEK_BROKER_OFFLINE: '1' });
    try {
      const big = 'x'.repeat(11 * 1024 * 1024);
      // The SDK client writes the id last; a line that starts with it is read too.
      broker.child.stdin.write(
        `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"mcp_search_tools","arguments":{"query":"${big}"}},"id":"big-1"}\n`,
      );
      broker.child.stdin.write(
        `{"jsonrpc":"2.0","id":"big-2","method":"ping","params":{"pad":"${big}"}}\n`,
      );
      broker.child.stdin.write(
        `{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"${big}"}}\n`,
      );
      const answered = () =>
        broker.transport.stdoutLines
          .map(
            (line) =>
              JSON.parse(line) as {
                id?: unknown;
                error?: { code: number; message: string };
              },
          )
          .filter((m) => m.id === 'big-1' || m.id === 'big-2');
      await expect
        .poll(() => answered().length === 2, {
          message: 'both oversized requests to be answered',
        })
        .toBe(true);
      for (const reply of answered()) {
        expect(reply.error?.code).toBe(-32600);
        expect(reply.error?.message).toMatch(
          /^Request too large: \d+ bytes in one line; the limit is 10485760 bytes/,
        );
      }
      // Still serving: a normal request after the dropped ones is answered.
      const { tools } = await broker.client.listTools();
      expect(tools).toHaveLength(3);
      const search = await broker.client.callTool({
        name: 'mcp_search_tools',
        arguments: { query: 'read file' },
      });
      expect(resultText(search)).toMatch(/core_read_file/);
      expect(
        broker.stderr().match(/request line of \d+ bytes dropped/g),
      ).toHaveLength(3);
      expect(broker.stderr()).toMatch(
        /dropped: the limit is 10485760 bytes \(no id found: not answered\)/,
      );
      expect(broker.child.exitCode).toBeNull();
    } finally {
      await broker.close();
    }
  });
});

describe('a backend killed mid-call', () => {
  it('gives an isError result well within the timeout, and the broker stays up', async () => {
    const backend = spawn(
      process.execPath,
      [
        fileURLToPath(
          new URL('./__fixtures__/backend-process.mjs', import.meta.url),
        ),
        'doomed',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    backend.stdout
      .setEncoding('utf8')
      .on('data', (chunk: string) => (out += chunk));
    await expect
      .poll(() => /port \d+/.test(out), { message: 'the backend to listen' })
      .toBe(true);
    const port = /port (\d+)/.exec(out)![1];
    const broker = await spawnBroker({
      HERETEK_GATEWAY_URL: `http://127.0.0.1:${port}`,
      HERETEK_BACKENDS_FILE: backendsFile(['doomed']),
      HERETEK_GATEWAY_TIMEOUT_MS: '30000',
    });
    try {
      const echo = await broker.client.callTool({
        name: 'mcp_call_tool',
        arguments: { name: 'doomed_echo', arguments: {} },
      });
      expect(resultText(echo)).toBe('echo ok');
      const pending = broker.client.callTool(
        {
          name: 'mcp_call_tool',
          arguments: { name: 'doomed_hang', arguments: {} },
        },
        { timeout: 60_000 },
      );
      await expect
        .poll(() => out.includes('call hang'), {
          message: 'the hanging call to reach the backend',
        })
        .toBe(true);
      // Timed from the kill: what the call took to reach the backend is no
      // part of how soon its loss is told.
      const killed = Date.now();
      backend.kill('SIGKILL');
      const result = await pending;
      expect(Date.now() - killed).toBeLessThan(15_000);
      expect((result as TextResult).isError).toBe(true);
      expect(resultText(result)).toMatch(
        /^BACKEND_FAILED: Calling "doomed_hang" through the gateway failed: /,
      );
      const again = await broker.client.callTool({
        name: 'mcp_search_tools',
        arguments: { query: 'echo' },
      });
      expect((again as TextResult).isError).not.toBe(true);
    } finally {
      backend.kill('SIGKILL');
      await broker.close();
    }
  });
});

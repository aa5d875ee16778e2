import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listen,
  startSessionfulServer,
  type SessionfulServer,
} from './__fixtures__/servers.js';
import { startTaskServer } from './__fixtures__/task-server.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      // A ceiling for a loaded 2-core machine (a test of several runs took
      // 24 s there), not a timing; the block's timeout bounds the test.
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 50_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}

describe('heretek-gateway CLI (built dist/cli.js)', { timeout: 60_000 }, () => {
  let server: SessionfulServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    if (!existsSync(CLI))
      throw new Error(
        `${CLI} is missing: build the package first (pnpm turbo run build --filter @heretek/gateway-client; turbo's test task does it).`,
      );
    server = await startSessionfulServer({
      generatedTools: 12,
      pageSize: 5,
      interactive: true,
    });
    env = {
      HERETEK_GATEWAY_URL: server.url,
      HERETEK_GATEWAY_TOKEN: 'cli-secret-token',
      HERETEK_BROKER_ROLE: 'director',
      HERETEK_GATEWAY_TIMEOUT_MS: '5000',
    };
  });
  afterAll(async () => {
    await server.close();
  });

  it('tools prints every tool of every page as JSON lines', async () => {
    const { code, stdout } = await run(['tools', 'alpha'], env);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            name: string;
            description: string;
            readOnly: boolean;
          },
      );
    expect(lines).toHaveLength(21);
    expect(lines[0]).toEqual({
      name: 'echo',
      description: 'Echo the text argument back.',
      readOnly: true,
    });
    expect(lines.find((line) => line.name === 'sleep')?.readOnly).toBe(false);
    expect(
      server.requests.some(
        (request) =>
          request.headers.authorization === 'Bearer cli-secret-token',
      ),
    ).toBe(true);
  });

  it('call prints the result as JSON and exits 0', async () => {
    const { code, stdout } = await run(
      ['call', 'alpha', 'echo', '--args', '{"text":"from the cli"}'],
      env,
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      content: [{ type: 'text', text: 'from the cli' }],
    });
  });

  it('call writes progress and backend logs to stderr, the result alone to stdout', async () => {
    const progress = await run(
      ['call', 'alpha', 'progress', '--args', '{"steps":2}'],
      env,
    );
    expect(progress.code).toBe(0);
    expect(JSON.parse(progress.stdout).content[0].text).toBe(
      'done in 2 steps (token present)',
    );
    expect(progress.stderr).toContain('progress 1/2: step 1 of 2');
    expect(progress.stderr).toContain('progress 2/2: step 2 of 2');
    const chatty = await run(['call', 'alpha', 'chatty'], env);
    expect(chatty.code).toBe(0);
    expect(chatty.stderr).toContain('log [alpha] info: "working on it"');
    expect(JSON.parse(chatty.stdout).content[0].text).toBe(
      'done after notifications',
    );
  });

  it('call --task calls a task-required tool task-augmented', async () => {
    const tasks = await startTaskServer();
    try {
      const { code, stdout } = await run(
        [
          'call',
          'tasks',
          'research',
          '--args',
          '{"topic":"cli","ms":100}',
          '--task',
        ],
        { ...env, HERETEK_GATEWAY_URL: tasks.url },
      );
      expect(code).toBe(0);
      expect(JSON.parse(stdout).content[0].text).toBe('research: cli done');
    } finally {
      await tasks.close();
    }
  });

  it('exits 1 on an isError result', async () => {
    const { code, stdout, stderr } = await run(['call', 'alpha', 'fail'], env);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).isError).toBe(true);
    expect(stderr).toContain('isError');
  });

  it('exits 1 with the code on stderr for a typed error, without the token', async () => {
    const { code, stderr } = await run(['call', 'alpha', 'no-such-tool'], env);
    expect(code).toBe(1);
    expect(stderr).toContain('[JSON_RPC_ERROR]');
    const closed = await listen(() => undefined);
    await closed.close();
    const refused = await run(['tools', 'alpha'], {
      ...env,
      HERETEK_GATEWAY_URL: closed.url,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[CONNECTION_REFUSED]');
    expect(refused.stderr + stderr).not.toContain('cli-secret-token');
  });

  it('exits 2 on usage and configuration errors, naming the variable', async () => {
    // independent processes: run them side by side
    const [none, badArgs, badTarget, badEnv, help] = await Promise.all([
      run([], env),
      run(['call', 'alpha', 'echo', '--args', '[1]'], env),
      run(['tools', 'my_target'], env),
      run(['tools', 'alpha'], { ...env, HERETEK_GATEWAY_MODE: 'sideways' }),
      run(['--help'], env),
    ]);
    expect(none.code).toBe(2);
    expect(badArgs.code).toBe(2);
    expect(badTarget.code).toBe(2);
    expect(badTarget.stderr).toContain('INVALID_CONFIG');
    expect(badTarget.stderr).toContain('Invalid target name');
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('HERETEK_GATEWAY_MODE');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('heretek-gateway tools <target>');
  });
});

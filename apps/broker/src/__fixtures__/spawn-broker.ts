// Test fixture: spawns the built broker (dist/cli.js) as a real child process
// and connects the MCP SDK client to it over its stdio. Every raw stdout line
// is recorded so tests can assert that nothing but JSON-RPC ever appears there.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';

export const BROKER_CLI = fileURLToPath(
  new URL('../../dist/cli.js', import.meta.url),
);

/**
 * The environment of a spawned broker: a minimal one with `env` over it, and
 * the state directory (pins and usage files) in a fresh temporary folder
 * unless `env` names `XDG_STATE_HOME`, so no test writes into the real home
 * folder. `cleanup` removes that folder.
 */
export function brokerEnvironment(env: Record<string, string>): {
  env: Record<string, string>;
  cleanup: () => void;
} {
  if (env.XDG_STATE_HOME !== undefined) {
    return { env: { PATH: process.env.PATH ?? '', ...env }, cleanup: () => {} };
  }
  const state = mkdtempSync(path.join(tmpdir(), 'heretek-broker-state-'));
  return {
    env: { PATH: process.env.PATH ?? '', XDG_STATE_HOME: state, ...env },
    cleanup: () => rmSync(state, { recursive: true, force: true }),
  };
}

type Message = Parameters<NonNullable<Transport['onmessage']>>[0];

/** A client transport over a child's stdin/stdout that also keeps every raw stdout line. */
class RecordingStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly stdoutLines: string[] = [];
  #buffer = '';

  constructor(private readonly child: ChildProcessWithoutNullStreams) {}

  async start(): Promise<void> {
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        this.stdoutLines.push(line);
        try {
          this.onmessage?.(JSON.parse(line) as Message);
        } catch (error) {
          this.onerror?.(error as Error);
        }
      }
    });
    this.child.once('close', () => this.onclose?.());
  }

  async send(message: Parameters<Transport['send']>[0]): Promise<void> {
    this.child.stdin.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.child.stdin.end();
  }

  /** Whatever is left in the buffer without a newline (should be empty). */
  get pending(): string {
    return this.#buffer;
  }
}

export type SpawnedBroker = {
  client: Client;
  child: ChildProcessWithoutNullStreams;
  transport: RecordingStdioTransport;
  stderr: () => string;
  close: () => Promise<number | null>;
};

/** Starts the broker with `env` (merged over a minimal environment) and connects a client. */
export async function spawnBroker(
  env: Record<string, string>,
  options: {
    /** Capabilities the client declares (elicitation, sampling ...). */
    capabilities?: ConstructorParameters<typeof Client>[1] extends infer O
      ? O extends { capabilities?: infer C }
        ? C
        : never
      : never;
    /** Installs request handlers on the client before it connects. */
    prepare?: (client: Client) => void;
    /** Other client options (e.g. `versionNegotiation` to speak MCP 2026-07-28). */
    clientOptions?: Omit<
      NonNullable<ConstructorParameters<typeof Client>[1]>,
      'capabilities'
    >;
  } = {},
): Promise<SpawnedBroker> {
  const environment = brokerEnvironment(env);
  const child = spawn(process.execPath, [BROKER_CLI], {
    env: environment.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.once('exit', environment.cleanup);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const transport = new RecordingStdioTransport(child);
  const client = new Client(
    { name: 'broker-e2e', version: '1.0.0' },
    options.capabilities === undefined && options.clientOptions === undefined
      ? undefined
      : {
          ...options.clientOptions,
          ...(options.capabilities === undefined
            ? {}
            : { capabilities: options.capabilities }),
        },
  );
  options.prepare?.(client);
  await client.connect(transport);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    client,
    child,
    transport,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs the broker CLI to completion (for --help, --version, bad config). */
export function runBrokerCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const environment = brokerEnvironment(env);
    const child = spawn(process.execPath, [BROKER_CLI, ...args], {
      env: environment.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.once('exit', environment.cleanup);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

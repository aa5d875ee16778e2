// Test fixture: spawns the built broker (dist/cli.js) as a real child process
// and connects the MCP SDK client to it over its stdio. Every raw stdout line
// is recorded so tests can assert that nothing but JSON-RPC ever appears there.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll } from 'vitest';

const BROKER_CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** What a tool call answered, as the broker's meta-tools answer: text blocks. */
export type TextResult = {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
};

/** The text of a tool result, its blocks joined by newlines. */
export const resultText = (result: unknown): string =>
  (result as TextResult).content.map((c) => c.text ?? '').join('\n');

/** One row of a backend table (`HERETEK_BACKENDS_FILE`, `--backends`). */
export type BackendRow = { backend: string; target: string; profile: string };

/**
 * A temporary folder for one test file, with a way to write backend tables
 * into it; `remove` deletes it with everything in it.
 */
export function scratchFolder(prefix: string): {
  dir: string;
  /** Writes a backend table (a bare target name stands for `{ backend: target, target, profile: 'core' }`) and returns its path. */
  backends: (rows: ReadonlyArray<BackendRow | string>, name?: string) => string;
  remove: () => void;
} {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    backends: (rows, name = 'backends.json') => {
      const file = path.join(dir, name);
      writeFileSync(
        file,
        JSON.stringify(
          rows.map((row) =>
            typeof row === 'string'
              ? { backend: row, target: row, profile: 'core' }
              : row,
          ),
        ),
      );
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The environment of a spawned broker: a minimal one with `env` over it, and
 * the state directory (pins and usage files) in a fresh temporary folder
 * unless `env` names `XDG_STATE_HOME`, so no test writes into the real home
 * folder. `cleanup` removes that folder.
 */
function brokerEnvironment(env: Record<string, string>): {
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

/**
 * Starts the built broker (`dist/cli.js`) as a child process with stdin,
 * stdout and stderr piped, in {@link brokerEnvironment}`(env)`; its state
 * folder is removed when it exits. Every test that runs the broker starts it
 * here.
 */
export function startBrokerProcess(
  env: Record<string, string>,
  args: readonly string[] = [],
): ChildProcessWithoutNullStreams {
  const environment = brokerEnvironment(env);
  const child = spawn(process.execPath, [BROKER_CLI, ...args], {
    env: environment.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.once('exit', environment.cleanup);
  return child;
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
    /**
     * With a gateway (`HERETEK_GATEWAY_URL`, not offline), return only once
     * the start-up discovery has listed every backend (its log line), so a
     * test's first search sees a complete catalog however loaded the machine
     * is. Default true; false for tests of what the broker answers while it
     * still discovers.
     */
    awaitDiscovery?: boolean;
  } = {},
): Promise<SpawnedBroker> {
  const child = startBrokerProcess(env);
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
  // Settles once the broker has exited and its stdout and stderr are read to
  // the end ('close', not 'exit'), so its stderr is complete after `close`.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  await client.connect(transport);
  if (
    options.awaitDiscovery !== false &&
    env.HERETEK_GATEWAY_URL !== undefined &&
    env.HERETEK_BROKER_OFFLINE !== '1'
  ) {
    await startUpDiscovery(child, () => stderr);
  }
  return {
    client,
    child,
    transport,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      // A ceiling for a loaded 2-core machine (a test may assert the exit
      // code), not a timing.
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * For one `describe` block: a broker started by {@link spawnBroker} before
 * its tests (with `env`, or what `env()` gives then) and closed after them.
 * Its fields are read once `beforeAll` has run.
 */
export function useBroker(
  env: Record<string, string> | (() => Record<string, string>),
  options?: Parameters<typeof spawnBroker>[1],
): SpawnedBroker {
  let spawned: SpawnedBroker | undefined;
  beforeAll(async () => {
    spawned = await spawnBroker(
      typeof env === 'function' ? env() : env,
      options,
    );
  });
  afterAll(async () => {
    await spawned?.close();
  });
  const live = (): SpawnedBroker => {
    if (spawned === undefined)
      throw new Error('the broker starts in beforeAll');
    return spawned;
  };
  return {
    get client() {
      return live().client;
    },
    get child() {
      return live().child;
    },
    get transport() {
      return live().transport;
    },
    stderr: () => live().stderr(),
    close: () => live().close(),
  };
}

/** The broker's log line that ends its start-up discovery. */
const DISCOVERY_DONE = /discovery: \d+\/\d+ backends listed/;

/** Resolves once the broker has logged the end of its start-up discovery (30 s at most). */
async function startUpDiscovery(
  child: ChildProcessWithoutNullStreams,
  stderr: () => string,
): Promise<void> {
  if (DISCOVERY_DONE.test(stderr())) return;
  await new Promise<void>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      child.stderr.off('data', check);
      child.off('exit', exited);
    };
    const check = () => {
      if (!DISCOVERY_DONE.test(stderr())) return;
      done();
      resolve();
    };
    const exited = () => {
      done();
      reject(new Error(`the broker exited during discovery:\n${stderr()}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(
          `the broker did not finish its start-up discovery within 30 s:\n${stderr().slice(-2_000)}`,
        ),
      );
    }, 30_000);
    child.stderr.on('data', check);
    child.once('exit', exited);
  });
}

/** `mcp_call_tool` of `name` with `args`: a call through the broker to a backend tool. */
export const callThrough = (
  broker: SpawnedBroker,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client['callTool']>[1] = {},
) =>
  broker.client.callTool(
    { name: 'mcp_call_tool', arguments: { name, arguments: args } },
    options,
  );

/** A tool result as a test reads it: whether it is an error, and its text. */
export type Outcome = { isError: boolean; text: string };

/** {@link callThrough}, answered as an {@link Outcome}. */
export async function callOutcome(
  broker: SpawnedBroker,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Outcome> {
  const result = await callThrough(broker, name, args);
  return {
    isError: (result as TextResult).isError === true,
    text: resultText(result),
  };
}

/** The text of what `mcp_search_tools` answers for `query` (and `args`, e.g. `limit`). */
export const searchText = async (
  broker: SpawnedBroker,
  query: string,
  args: Record<string, unknown> = {},
): Promise<string> =>
  resultText(
    await broker.client.callTool({
      name: 'mcp_search_tools',
      arguments: { query, ...args },
    }),
  );

/** Runs the broker CLI to completion (for --help, --version, bad config). */
export function runBrokerCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = startBrokerProcess(env, args);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    // A ceiling for a loaded 2-core machine, below the test's own timeout:
    // a --check or --pin run starts the broker and asks every backend, and
    // took over 10 s there.
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('error', reject);
    // 'close', not 'exit': the output is complete only once both pipes are
    // drained, and a loaded machine may read their last chunks after the
    // exit is reported.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

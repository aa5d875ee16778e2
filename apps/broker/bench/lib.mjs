// Helpers shared by the broker benches: a minimal line-delimited JSON-RPC
// client over a child's stdio (no SDK in the measuring path), percentiles and
// a one-line description of the machine.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The built bin the benches measure. */
export const BROKER_CLI = fileURLToPath(
  new URL('../dist/cli.js', import.meta.url),
);

/** The protocol revision the benches ask for in `initialize`. */
export const PROTOCOL_VERSION = '2025-11-25';

/** Fails early with a clear message when the bin has not been built. */
export function requireBuilt() {
  if (!existsSync(BROKER_CLI)) {
    process.stderr.write(
      `bench: ${BROKER_CLI} is missing. Build first: npx -y pnpm@12.4.2 exec turbo run build --filter=@heretek/broker...\n`,
    );
    process.exit(2);
  }
}

/** `p` in [0, 100] of an array of numbers (nearest rank). */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Rounds to `digits` decimals for printing. */
export const round = (n, digits = 2) => Number(n.toFixed(digits));

/** Reads a positive integer option from the environment. */
export function intFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(
      `bench: ${name} must be a positive integer, got ${JSON.stringify(raw)}\n`,
    );
    process.exit(2);
  }
  return n;
}

/** The machine the figures come from: cores, model, Node, load. */
export function machine() {
  const cores = cpus();
  return {
    node: process.version,
    cpus: cores.length,
    model: cores[0]?.model ?? 'unknown',
    loadavg: loadavg().map((l) => round(l, 2)),
  };
}

/**
 * A line-delimited JSON-RPC peer over a child process's stdin/stdout. Tracks
 * outstanding requests by id; unanswered ones are visible in `pending`.
 */
export class StdioPeer {
  #buffer = '';
  #nextId = 1;
  #waiters = new Map();
  /** Every message that was not a reply to one of our requests. */
  others = [];
  /** Lines on stdout that were not JSON. */
  garbage = [];
  exited = false;
  exitCode = null;

  constructor(child) {
    this.child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => this.#onData(chunk));
    this.closed = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.exitCode = code ?? signal;
        for (const [, w] of this.#waiters)
          w.reject(
            new Error(`broker exited (${code ?? signal}) before replying`),
          );
        this.#waiters.clear();
        resolve(code ?? signal);
      }),
    );
    child.stdin.on('error', () => {});
  }

  #onData(chunk) {
    this.#buffer += chunk;
    let newline;
    while ((newline = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line.trim() === '') continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        this.garbage.push(line);
        continue;
      }
      const waiter =
        message && 'id' in message && !('method' in message)
          ? this.#waiters.get(message.id)
          : undefined;
      if (waiter) {
        this.#waiters.delete(message.id);
        waiter.resolve(message);
      } else {
        this.others.push(message);
      }
    }
  }

  get pending() {
    return this.#waiters.size;
  }

  /** Writes one raw line (a newline is added). */
  writeLine(line) {
    this.child.stdin.write(`${line}\n`);
  }

  notify(method, params) {
    this.writeLine(
      JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }),
    );
  }

  /** Sends a request and resolves with the whole JSON-RPC reply (result or error). */
  request(method, params, id = this.#nextId++) {
    return new Promise((resolve, reject) => {
      this.#waiters.set(id, { resolve, reject });
      this.writeLine(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          ...(params ? { params } : {}),
        }),
      );
    });
  }

  /** Resolves with the reply to `id` (for requests written as raw lines). */
  expect(id) {
    return new Promise((resolve, reject) =>
      this.#waiters.set(id, { resolve, reject }),
    );
  }

  async initialize() {
    const reply = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'heretek-broker-bench', version: '1.0.0' },
    });
    if (reply.error)
      throw new Error(`initialize failed: ${JSON.stringify(reply.error)}`);
    this.notify('notifications/initialized');
    return reply.result;
  }

  /** Ends stdin and waits for the exit (SIGKILL after `graceMs`). */
  async close(graceMs = 5_000) {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const code = await this.closed;
    clearTimeout(timer);
    return code;
  }
}

/** Spawns the built broker with `env` over a minimal environment. */
export function spawnBroker(
  env,
  { nodeArgs = [], inheritStderr = false } = {},
) {
  const child = spawn(process.execPath, [...nodeArgs, BROKER_CLI], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', inheritStderr ? 'inherit' : 'pipe'],
  });
  let stderr = '';
  if (!inheritStderr) {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      stderr += c;
      if (stderr.length > 1_000_000) stderr = stderr.slice(-500_000);
    });
  }
  const peer = new StdioPeer(child);
  peer.stderr = () => stderr;
  return peer;
}

/** Peak resident set of a still-running process, in MB, from /proc (Linux). */
export function peakRssMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : undefined;
  } catch {
    return undefined;
  }
}

// Helpers shared by the broker benches: a minimal line-delimited JSON-RPC
// client over a child's stdio (no SDK in the measuring path), percentiles and
// a one-line description of the machine.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * A bench's start: fails early when the bin is not built, then reads each
 * option of `defaults` (name -> default) from the environment as a positive
 * integer.
 */
export function benchOptions(defaults) {
  requireBuilt();
  return Object.fromEntries(
    Object.entries(defaults).map(([name, fallback]) => [
      name,
      intFromEnv(name, fallback),
    ]),
  );
}

/**
 * `initialize`, `notifications/initialized` and `tools/list` as JSON-RPC
 * lines, what a client sends first (pipelined by the cold-start benches).
 */
export function firstRequests(clientName) {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: clientName, version: '1.0.0' },
      },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ]
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('');
}

/** The environment of an offline broker: nothing but PATH and a scratch state folder. */
export function offlineEnv() {
  return {
    PATH: process.env.PATH ?? '',
    XDG_STATE_HOME: BENCH_STATE_HOME,
    HERETEK_BROKER_OFFLINE: '1',
  };
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

  /**
   * Searches, as an agent does before its first call, until every name in
   * `expected` is in the answer (the first search waits for start-up
   * discovery only up to a bound, so on a loaded machine it can answer from
   * the seed catalog). Resolves with the last search text.
   */
  async awaitDiscovery(
    expected,
    { query = 'echo a token back', timeoutMs = 60_000 } = {},
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = await this.request('tools/call', {
        name: 'mcp_search_tools',
        arguments: { query, limit: 50 },
      });
      if (reply.error || reply.result?.isError) {
        throw new Error(`search failed: ${JSON.stringify(reply)}`);
      }
      const text = reply.result?.content?.[0]?.text ?? '';
      const missing = expected.filter((name) => !text.includes(name));
      if (missing.length === 0) return text;
      if (Date.now() > deadline) {
        throw new Error(
          `discovery did not bring ${missing.join(', ')} in ${timeoutMs} ms; last search:\n${text}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
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
    env: {
      PATH: process.env.PATH ?? '',
      XDG_STATE_HOME: BENCH_STATE_HOME,
      ...env,
    },
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

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux). */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/**
 * Starts the stand-in gateway (bench/gateway.mjs, or the `script` in
 * bench/fixtures that speaks the same stdin commands) in its own process, as
 * a real gateway is. Resolves with its URL, pid, a `stats()` call and
 * `close()`.
 */
export async function spawnGateway(
  targets,
  { script = 'gateway-process.mjs' } = {},
) {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL(`./fixtures/${script}`, import.meta.url)),
      JSON.stringify(targets),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  child.stdout.setEncoding('utf8');
  let buffer = '';
  const lines = [];
  let wake;
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      wake?.();
    }
  });
  const nextLine = async () => {
    while (lines.length === 0) await new Promise((r) => (wake = r));
    return lines.shift();
  };
  const url = await nextLine();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    pid: child.pid,
    stats: async () => {
      child.stdin.write('stats\n');
      return JSON.parse(await nextLine());
    },
    addTool: (target, tool) =>
      child.stdin.write(`add-tool ${target} ${tool}\n`),
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// --- CPU profiles (node --cpu-prof), mapped back through source maps ---

const maps = new Map();
function sourceMapFor(url) {
  if (!maps.has(url)) {
    let map;
    try {
      const path = fileURLToPath(url);
      if (existsSync(`${path}.map`))
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = undefined;
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

/** A short owner name for a source path: package name, workspace package, or broker source. */
function owner(path) {
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (/^(\.\.\/)*src\//.test(path)) return 'broker src';
  const ws = /(?:^|\/)(packages|apps)\/([^/]+)\/src\//.exec(path);
  if (ws)
    return ws[1] === 'apps' && ws[2] === 'broker'
      ? 'broker src'
      : `@heretek/${ws[2]}`;
  return path;
}

function classify(callFrame) {
  const { url, functionName, lineNumber, columnNumber } = callFrame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle (waiting for I/O)';
  if (functionName === '(program)') return 'V8/native (parse, compile, other)';
  if (url === '') return `native: ${functionName || '(anonymous)'}`;
  if (url.startsWith('node:internal/modules')) return 'node module loader';
  if (url.startsWith('node:')) return 'node core';
  if (url.startsWith('file://')) {
    const map = sourceMapFor(url);
    if (map) {
      const entry = map.findEntry(lineNumber, columnNumber);
      if (entry?.originalSource) return owner(entry.originalSource);
    }
    return owner(fileURLToPath(url));
  }
  return url;
}

/** Where a frame's code comes from, mapped through its source map: `owner` plus `function (file:line)`. */
function locate(callFrame) {
  const owner = classify(callFrame);
  const { url, functionName, lineNumber, columnNumber } = callFrame;
  let where = url;
  if (url.startsWith('file://')) {
    const entry = sourceMapFor(url)?.findEntry(lineNumber, columnNumber);
    if (entry?.originalSource) {
      where = `${entry.originalSource.replace(/^.*node_modules\//, '').replace(/^(\.\.\/)+/, '')}:${entry.originalLine + 1}`;
    }
  }
  return { owner, fn: `${functionName || '(anonymous)'} ${where}` };
}

/**
 * Sums a CPU profile's self time by owner (package, broker source, node's
 * module loader, GC, idle) and by function. Times are in ms.
 */
export function summarizeProfile(profile, { top = 25 } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const owners = new Map();
  const functions = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const { owner, fn } = locate(byId.get(profile.samples[i]).callFrame);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    owners.set(owner, (owners.get(owner) ?? 0) + ms);
    const key = `${owner} | ${fn}`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
  }
  const total = (profile.endTime - profile.startTime) / 1000;
  const rows = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({
        name,
        ms: round(ms, 1),
        share: `${round((100 * ms) / total, 1)}%`,
      }));
  return {
    total: round(total, 1),
    byOwner: rows(owners),
    byFunction: rows(functions),
  };
}

/**
 * A fresh state folder for every broker a bench starts, so no bench reads or
 * writes the pins and usage files of the user running it.
 */
export const BENCH_STATE_HOME = mkdtempSync(
  join(tmpdir(), 'heretek-bench-state-'),
);

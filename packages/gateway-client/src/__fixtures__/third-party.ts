/**
 * Test fixture: the official stdio MCP servers (`@modelcontextprotocol/server-memory`,
 * `@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-everything`), each exposed over Streamable
 * HTTP by `supergateway`, behind an `http-proxy` reverse proxy that routes
 * `/mcp/<target>` the way a per-target agentgateway route does. Everything
 * is spawned from this package's `node_modules/.bin` (devDependencies, no
 * network) and reached only through 127.0.0.1. supergateway has no host
 * flag and binds every interface; the tests never use another address, and
 * every child process group is killed by `stop()`. Not shipped.
 */
import { createRequire } from 'node:module';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import httpProxy from 'http-proxy';
import { afterAll, beforeAll, expect } from 'vitest';
import { freePort } from './servers.js';

const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));

// The packages whose bins the tests run, resolved here so that a missing one
// fails by name (and dependency checks see that they are used).
const require = createRequire(import.meta.url);
require.resolve('supergateway/package.json');
require.resolve('@modelcontextprotocol/server-memory/package.json');
require.resolve('@modelcontextprotocol/server-filesystem/package.json');
require.resolve('@modelcontextprotocol/server-everything/package.json');

/** A running supergateway process group. */
export type Supergateway = {
  port: number;
  child: ChildProcess;
  stderr: string[];
};

/**
 * Start `supergateway --stdio <command>` as Streamable HTTP (stateful) on a
 * free port and wait until it is healthy. supergateway cannot listen on port
 * 0, so the port is picked first; when another process takes it in between
 * (tests of other packages run alongside) supergateway exits, and this tries
 * again with another port.
 */
export async function startSupergateway(options: {
  stdioCommand: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<Supergateway> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startSupergatewayOnce(options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= 3) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startSupergatewayOnce(options: {
  stdioCommand: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<Supergateway> {
  const port = await freePort();
  const child = spawn(
    `${BIN}supergateway`,
    [
      '--stdio',
      options.stdioCommand,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--healthEndpoint',
      '/healthz',
      '--logLevel',
      'none',
    ],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...options.env },
    },
  );
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) =>
    stderr.push(chunk.toString('utf8')),
  );
  const until = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stopProcessGroup(child);
      // the exit may be seen before the last stderr chunk
      if (child.stderr && !child.stderr.closed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1_000);
          child.stderr?.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      const text = stderr.join('');
      if (/EADDRINUSE/.test(text))
        throw new PortTakenError(`port ${port} was taken: ${text}`);
      throw new Error(
        `supergateway exited with ${child.exitCode ?? child.signalCode}: ${text}`,
      );
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
        signal: AbortSignal.timeout(2_000),
      });
      await response.text();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stopProcessGroup(child);
      throw new Error(
        `supergateway did not become healthy on 127.0.0.1:${port}: ${stderr.join('')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port, child, stderr };
}

/** Kill a detached child's whole process group (supergateway and the stdio server it spawned). */
export async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (
    child.pid === undefined ||
    child.exitCode !== null ||
    child.signalCode !== null
  )
    return;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => resolve()),
  );
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 3_000);
  await exited;
  clearTimeout(timer);
  try {
    // children of the group that outlived the leader
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // none left
  }
}

/** Whether any process of the group is still alive. */
export function processGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A reverse proxy on 127.0.0.1 routing `/mcp/<target>` to `http://127.0.0.1:<port>/mcp`. */
export async function startProxy(
  routes: Record<string, number>,
): Promise<{ url: string; close: () => Promise<void>; routed: string[] }> {
  const proxy = httpProxy.createProxyServer({
    xfwd: false,
    proxyTimeout: 30_000,
  });
  const routed: string[] = [];
  proxy.on('error', (_error, _request, response) => {
    const res = response as ServerResponse;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('bad gateway');
  });
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    const match = /^\/mcp\/([a-z0-9.-]+)\/?(\?.*)?$/.exec(request.url ?? '');
    const port = match ? routes[match[1] as string] : undefined;
    if (!match || port === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no route');
      return;
    }
    routed.push(`${request.method} ${match[1]}`);
    request.url = `/mcp${match[2] ?? ''}`;
    proxy.web(request, response, { target: `http://127.0.0.1:${port}` });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      proxy.close();
    },
  };
}

/** Path of a bin of this package's devDependencies. */
export function bin(name: string): string {
  return `${BIN}${name}`;
}

/** A stdio server of this package's devDependencies: its bin, arguments and environment. */
export type StdioServer = {
  bin: string;
  args?: string[];
  env?: Record<string, string>;
};

/**
 * For one `describe` block: each of `servers` behind its own supergateway,
 * all behind one {@link startProxy} routing `/mcp/<target>`, started before
 * the block's tests (90 s at most) and stopped after them, every process
 * group checked gone. The function it returns gives the proxy (its `url`
 * and the requests it `routed`) once `beforeAll` has run.
 */
export function useProxiedServers(
  servers: Record<string, StdioServer>,
): () => { url: string; routed: string[] } {
  let started: Supergateway[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
  beforeAll(async () => {
    // allSettled: when one fails to start, the others are still stopped by afterAll.
    const starts = await Promise.allSettled(
      Object.values(servers).map((server) =>
        startSupergateway({
          stdioCommand: [bin(server.bin), ...(server.args ?? [])].join(' '),
          ...(server.env === undefined ? {} : { env: server.env }),
        }),
      ),
    );
    started = starts.flatMap((start) =>
      start.status === 'fulfilled' ? [start.value] : [],
    );
    for (const start of starts)
      if (start.status === 'rejected') throw start.reason;
    proxy = await startProxy(
      Object.fromEntries(
        Object.keys(servers).map((target, index) => [
          target,
          (started[index] as Supergateway).port,
        ]),
      ),
    );
  }, 90_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all(started.map((server) => stopProcessGroup(server.child)));
    for (const server of started)
      expect(processGroupAlive(server.child.pid as number)).toBe(false);
  });
  return () => {
    if (proxy === undefined) throw new Error('the servers start in beforeAll');
    return proxy;
  };
}

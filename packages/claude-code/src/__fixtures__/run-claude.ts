/**
 * Test fixture: runs the real Claude Code binary (the pinned
 * `@anthropic-ai/claude-code` devDependency) headless, as
 * `claude -p <message> --plugin-dir plugin --output-format stream-json
 * --verbose`, with HOME in a temporary folder, and the Anthropic API pointed
 * at a loopback stand-in. Every run is bounded in time.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startModelStandIn,
  type RecordedRequest,
} from '#broker-fixtures/model-stand-in.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The package folder (`packages/claude-code`). */
export const PACKAGE_ROOT = resolve(here, '../..');
/** The repository root, which holds `roles/`. */
export const REPOSITORY_ROOT = resolve(PACKAGE_ROOT, '../..');
/** The pinned Claude Code binary. */
export const CLAUDE_BIN = join(PACKAGE_ROOT, 'node_modules/.bin/claude');

/** A fresh temporary folder. */
export function temporaryFolder(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `heretek-claude-code-${prefix}-`));
}

/** Options of {@link runClaude}. */
export type RunClaudeOptions = {
  /** The stand-in's origin (`http://127.0.0.1:PORT`), as `ANTHROPIC_BASE_URL`. */
  baseUrl: string;
  message: string;
  /** Load the plugin folder with `--plugin-dir` (default true). */
  plugin?: boolean;
  /** `--agent` (the main thread's agent). */
  agent?: string;
  /** The project folder (the working directory); default a fresh one. */
  project?: string;
  /** Files written into the project folder first (e.g. `.claude/agents/x.md`). */
  projectFiles?: Record<string, string>;
  /** `--mcp-config` as JSON (servers beside the plugin's). */
  mcpConfig?: Record<string, unknown>;
  /** `--settings` as JSON (e.g. `{ "disableAllHooks": true }`). */
  settings?: Record<string, unknown>;
  /** Tools allowed without asking (`--allowedTools`). */
  allowedTools: string[];
  /** Extra environment (HERETEK_* for the broker). */
  env?: Record<string, string>;
  /** HOME (where installed plugins live); default a fresh folder. */
  home?: string;
  /** Ceiling for the whole run. Default 240000 ms (a loaded 2-core machine). */
  timeoutMs?: number;
};

/** What a run left. */
export type ClaudeRun = {
  code: number | null;
  timedOut: boolean;
  /** The stream-json lines of stdout, parsed. */
  events: Array<Record<string, unknown>>;
  stdout: string;
  stderr: string;
  /** `Date.now()` when the process was spawned. */
  startedAt: number;
};

/** The environment of a run: a fresh HOME, the stand-in as the API, no traffic elsewhere. */
export function claudeEnvironment(options: {
  baseUrl: string;
  env?: Record<string, string>;
  home?: string;
}): Record<string, string> {
  const home = options.home ?? temporaryFolder('home');
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_ATTRIBUTION_HEADER: '0',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    // How long `-p` waits for MCP servers before the first request (5 s by
    // default): a loaded 2-core machine can take longer to start the broker.
    MCP_CONNECT_TIMEOUT_MS: '120000',
    ...options.env,
  };
}

/** Runs `claude -p` once and waits for it (killed at the timeout). */
export async function runClaude(options: RunClaudeOptions): Promise<ClaudeRun> {
  const project = options.project ?? temporaryFolder('project');
  for (const [path, text] of Object.entries(options.projectFiles ?? {})) {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), text);
  }
  const args = [
    '-p',
    options.message,
    '--output-format',
    'stream-json',
    '--verbose',
    '--allowedTools',
    options.allowedTools.join(','),
  ];
  // The package folder is the plugin folder.
  if (options.plugin !== false) args.push('--plugin-dir', PACKAGE_ROOT);
  if (options.agent !== undefined) args.push('--agent', options.agent);
  if (options.mcpConfig !== undefined)
    args.push('--mcp-config', JSON.stringify(options.mcpConfig));
  if (options.settings !== undefined)
    args.push('--settings', JSON.stringify(options.settings));
  const startedAt = Date.now();
  const child = spawn(CLAUDE_BIN, args, {
    cwd: project,
    env: claudeEnvironment(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 240_000);
  const code = await new Promise<number | null>((done) =>
    child.once('close', (c) => done(c)),
  );
  clearTimeout(timer);
  const events = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, timedOut, events, stdout, stderr, startedAt };
}

/** A run and the model requests it made. */
export type RecordedRun = { run: ClaudeRun; requests: RecordedRequest[] };

/** {@link runClaude} against a fresh loopback model stand-in, with what the stand-in recorded. */
export async function runClaudeRecorded(
  options: Omit<RunClaudeOptions, 'baseUrl'>,
): Promise<RecordedRun> {
  const model = await startModelStandIn();
  try {
    const run = await runClaude({
      ...options,
      baseUrl: model.baseURL.replace(/\/v1$/, ''),
    });
    return { run, requests: [...model.requests] };
  } finally {
    await model.close();
  }
}

/** Runs `claude <args>` (a subcommand such as `plugin validate`) and waits for it. */
export async function claudeCommand(
  args: string[],
  options: { home?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn(CLAUDE_BIN, args, {
    env: claudeEnvironment({ baseUrl: 'http://127.0.0.1:9', ...options }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((done) =>
    child.once('close', (c) => done(c)),
  );
  clearTimeout(timer);
  return { code, output };
}

/**
 * The package as npm would publish it (`npm pack`), served on a loopback
 * HTTP origin that also stands as the npm registry, so that Claude Code's
 * npm plugin source fetches it: the URL of the tarball, and the registry.
 */
export async function servePackedPackage(): Promise<{
  tarballUrl: string;
  registry: string;
  close: () => Promise<void>;
}> {
  const destination = temporaryFolder('pack');
  const child = spawn(
    'npm',
    ['pack', '--silent', '--pack-destination', destination],
    { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let name = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (name += d));
  const code = await new Promise<number | null>((done) =>
    child.once('close', (c) => done(c)),
  );
  if (code !== 0) throw new Error(`npm pack ended with ${code}`);
  const tarball = readFileSync(join(destination, name.trim()));
  const server = createServer((request, response) => {
    if (request.url === `/${name.trim()}`)
      response
        .writeHead(200, { 'content-type': 'application/octet-stream' })
        .end(tarball);
    else response.writeHead(404).end();
  });
  await new Promise<void>((listening) =>
    server.listen(0, '127.0.0.1', () => listening()),
  );
  const { port } = server.address() as AddressInfo;
  const registry = `http://127.0.0.1:${port}/`;
  return {
    tarballUrl: `${registry}${name.trim()}`,
    registry,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

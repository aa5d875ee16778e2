/**
 * Test fixture: runs the real OpenCode binary of either line (OpenCode 1: the
 * pinned `opencode-ai` devDependency; OpenCode 2: the platform binary of the
 * pinned `@opencode/cli`) as `opencode run`, with HOME and the XDG folders in
 * a temporary directory, autoupdate off, sharing disabled, and its model
 * provider pointed at a loopback stand-in. Every run is bounded in time, and
 * its whole process group is killed when it ends, so no OpenCode server
 * outlives it.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The package folder (`packages/opencode`): the plugin, as OpenCode 2's `plugins` list names a local one. */
export const PACKAGE_ROOT = resolve(here, '../..');
/** The repository root, which holds `roles/`. */
export const REPOSITORY_ROOT = resolve(PACKAGE_ROOT, '../..');
/**
 * OpenCode 1's binary, linked by the `opencode-ai` package's postinstall
 * (`node_modules/.bin/opencode` is `@opencode/cli`'s, whose bin has the
 * same name).
 */
const OPENCODE_1_BIN = join(
  PACKAGE_ROOT,
  'node_modules/opencode-ai/bin/opencode.exe',
);

/**
 * OpenCode 2's binary: the platform package `@opencode/cli` brings as an
 * optional dependency (`pnpm install` installs the current platform's). Its
 * `bin` shim needs a postinstall step that links the binary; the platform
 * package's own `bin/opencode` is the binary. On an x64 CPU without AVX2
 * the `-baseline` build runs instead.
 */
function openCode2Bin(): string {
  const cli = createRequire(join(PACKAGE_ROOT, 'package.json')).resolve(
    '@opencode/cli/package.json',
  );
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const avx2 =
    process.arch !== 'x64' ||
    /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
  const name = `@opencode/cli-${os}-${process.arch}${avx2 ? '' : '-baseline'}`;
  return join(
    dirname(createRequire(cli).resolve(`${name}/package.json`)),
    'bin/opencode',
  );
}

/** The built plugin, as a `file://` URL for OpenCode 1's `plugin` list. */
export const PLUGIN_URL = pathToFileURL(
  join(PACKAGE_ROOT, 'dist/index.js'),
).href;

/** A provider block pointing at a stand-in. */
export function anthropicProvider(baseURL: string): Record<string, unknown> {
  return {
    anthropic: { options: { baseURL, apiKey: 'test' } },
  };
}

/** Options of {@link runOpenCode}. */
export type RunOpenCodeOptions = {
  /** OpenCode 1 (`opencode-ai`, the default) or OpenCode 2 (`@opencode/cli`, run as `run --standalone`: a private server, no background service). */
  line?: 1 | 2;
  /** The project folder (created if missing); `opencode.json` is written into it. */
  project: string;
  /** The project's `opencode.json` (updates and sharing are turned off here). */
  config: Record<string, unknown>;
  /** `--agent`; unset: OpenCode's default agent. */
  agent?: string;
  message: string;
  /** Extra environment (HERETEK_* for the plugin). */
  env?: Record<string, string>;
  /** Ceiling for the whole run. Default 300000 ms (a loaded 2-core machine). */
  timeoutMs?: number;
  /** Sample the resident memory of OpenCode and its children every 100 ms. */
  sampleMemory?: boolean;
};

/** What a run left. */
export type OpenCodeRun = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** OpenCode's log (`--print-logs`), where the plugin's lines appear. */
  stderr: string;
  timedOut: boolean;
  /** `Date.now()` when the process was spawned. */
  startedAt: number;
  /** Peak resident memory of OpenCode and its child processes together, in bytes (with `sampleMemory`). */
  peakRssBytes?: number;
};

/** A process and all its descendants, parents first (Linux /proc). */
function processTree(pid: number): number[] {
  const tree = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(
        `/proc/${pid}/task/${task}/children`,
        'utf8',
      ).trim();
      if (children === '') continue;
      for (const child of children.split(' '))
        tree.push(...processTree(Number(child)));
    }
  } catch {
    // The process ended between two reads.
  }
  return tree;
}

/** Resident memory of a process and all its descendants, in bytes. */
function treeRss(pid: number): number {
  let total = 0;
  for (const member of processTree(pid)) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      total += kb === undefined ? 0 : Number(kb) * 1024;
    } catch {
      // The process ended between two reads.
    }
  }
  return total;
}

/** A fresh temporary folder. */
export function temporaryFolder(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `heretek-opencode-${prefix}-`));
}

/**
 * OpenCode installs `@opencode-ai/plugin` into its config folder with npm,
 * from the registry, unless that folder has `node_modules` and a
 * `package-lock.json` listing what its `package.json` asks for: in a fresh
 * HOME, every run would download it (half a minute or more on a loaded
 * 2-core machine). The folder is made as OpenCode leaves it after that
 * install, with this package's own devDependency (the same version) linked
 * in, so runs stay on loopback.
 */
function prepareConfigFolder(configFolder: string): void {
  const plugin = join(PACKAGE_ROOT, 'node_modules/@opencode-ai/plugin');
  const { version } = JSON.parse(
    readFileSync(join(plugin, 'package.json'), 'utf8'),
  ) as { version: string };
  const dependencies = { '@opencode-ai/plugin': version };
  mkdirSync(join(configFolder, 'node_modules/@opencode-ai'), {
    recursive: true,
  });
  symlinkSync(plugin, join(configFolder, 'node_modules/@opencode-ai/plugin'));
  writeFileSync(
    join(configFolder, 'package.json'),
    JSON.stringify({ dependencies }),
  );
  writeFileSync(
    join(configFolder, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies } } }),
  );
}

/** Runs `opencode run` once and waits for it (killed at the timeout). */
export async function runOpenCode(
  options: RunOpenCodeOptions,
): Promise<OpenCodeRun> {
  const line = options.line ?? 1;
  const home = temporaryFolder('home');
  if (line === 1) prepareConfigFolder(join(home, '.config/opencode'));
  mkdirSync(options.project, { recursive: true });
  writeFileSync(
    join(options.project, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        ...(line === 1 ? { autoupdate: false } : { update: 'disable' }),
        share: 'disabled',
        ...options.config,
      },
      null,
      2,
    ),
  );
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    OPENCODE_DISABLE_AUTOUPDATE: 'true',
    OPENCODE_DISABLE_MODELS_FETCH: 'true',
    OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
    ...options.env,
  };
  const args =
    line === 1
      ? ['run', '--print-logs', '--log-level', 'INFO']
      : ['run', '--standalone', '--print-logs', '--log-level', 'info'];
  if (options.agent !== undefined) args.push('--agent', options.agent);
  args.push(options.message);
  const startedAt = Date.now();
  const child = spawn(line === 1 ? OPENCODE_1_BIN : openCode2Bin(), args, {
    cwd: options.project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, killed with all its descendants when the run ends.
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let peakRssBytes = 0;
  const sampler =
    options.sampleMemory === true && child.pid !== undefined
      ? setInterval(() => {
          peakRssBytes = Math.max(peakRssBytes, treeRss(child.pid!));
        }, 100)
      : undefined;
  let timedOut = false;
  const kill = (pids: number[]) => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // It has ended.
      }
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    // OpenCode 2's `run --standalone` starts its server (`opencode serve`)
    // in a process group of its own: every descendant, then the group.
    kill([...processTree(child.pid!), -child.pid!]);
  }, options.timeoutMs ?? 300_000);
  const [code, signal] = await new Promise<
    [number | null, NodeJS.Signals | null]
  >((done) => child.once('close', (c, s) => done([c, s])));
  clearTimeout(timer);
  // Whatever is left of its group (OpenCode's server ends with the run).
  kill([-child.pid!]);
  if (sampler !== undefined) clearInterval(sampler);
  return {
    code,
    signal,
    stdout,
    stderr,
    timedOut,
    startedAt,
    ...(options.sampleMemory === true ? { peakRssBytes } : {}),
  };
}

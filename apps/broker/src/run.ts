import { readFileSync } from 'node:fs';
import {
  DEFAULT_BACKENDS,
  SEED_TOOLS,
  ToolCatalog,
  loadBackends,
  type Backend,
} from '@heretek/catalog';
import { isReadOnlyRole } from '@heretek/prefix';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Broker } from './broker.js';
import {
  BrokerConfigError,
  ENVIRONMENT_HELP,
  loadBrokerConfig,
  type BrokerConfig,
} from './config.js';
import { createGateway } from './gateway.js';
import { stderrLogger } from './logger.js';
import type { ToolGateway } from './types.js';
import { createBrokerServer } from './server.js';
import { VERSION } from './version.js';

/** How long shutdown waits for sessions to end before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Exit codes of the CLI. */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2 } as const;

const USAGE = `heretek-lazy-broker ${VERSION}
An MCP stdio server that exposes three meta-tools (mcp_search_tools,
mcp_inspect_schema, mcp_call_tool) in front of every tool behind an
agentgateway. Start it from an MCP client; it speaks MCP on stdin/stdout and
logs to stderr.

Usage: heretek-lazy-broker [--help | --version]

Environment:
${ENVIRONMENT_HELP.map(([name, fallback, meaning]) => `  ${name.padEnd(28)} ${meaning} (default: ${fallback})`).join('\n')}
`;

/**
 * Runs the broker as a stdio MCP server. Returns an exit code for `--help`,
 * `--version` and configuration errors; otherwise serves until stdin closes.
 */
export async function runServer(options: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
}): Promise<number | undefined> {
  const log = stderrLogger();
  const [first, ...rest] = options.argv;
  if (first === '--help' || first === '-h') {
    process.stdout.write(USAGE);
    return EXIT_CODES.ok;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return EXIT_CODES.ok;
  }
  if (first !== undefined || rest.length > 0) {
    process.stderr.write(
      `heretek-lazy-broker: unknown argument ${JSON.stringify(first)}. Try --help.\n`,
    );
    return EXIT_CODES.usage;
  }

  let config: BrokerConfig;
  let backends: Backend[];
  try {
    config = loadBrokerConfig(options.env);
    backends =
      config.backendsFile === undefined
        ? [...DEFAULT_BACKENDS]
        : loadBackendsFile(config.backendsFile);
  } catch (error) {
    process.stderr.write(
      `heretek-lazy-broker: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return EXIT_CODES.usage;
  }

  // Faults in a backend must never take the broker down or touch stdout. A
  // broken pipe means the client is gone: that is a shutdown, not a fault.
  let shutdown: (reason: string) => void = () => {};
  const isBrokenPipe = (error: unknown) =>
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'EPIPE';
  process.stdout.on('error', (error) =>
    shutdown(`stdout closed (${describe(error)})`),
  );
  process.on('unhandledRejection', (reason) =>
    log(`unhandled rejection: ${describe(reason)}`),
  );
  process.on('uncaughtException', (error) => {
    if (isBrokenPipe(error)) shutdown('client pipe closed');
    else log(`uncaught exception: ${describe(error)}`);
  });

  let gateway: ToolGateway | undefined;
  try {
    gateway = config.offline ? undefined : await createGateway(config);
  } catch (error) {
    process.stderr.write(`heretek-lazy-broker: ${describe(error)}\n`);
    return EXIT_CODES.usage;
  }
  const broker = new Broker({
    role: config.role,
    catalog: seedCatalogFor(backends),
    backends,
    ...(gateway === undefined ? {} : { gateway }),
    gatewayMode: config.gatewayMode,
    discoveryTtlMs: config.discoveryTtlMs,
    ...(config.defaultProfile === undefined
      ? {}
      : { defaultProfile: config.defaultProfile }),
    log,
  });

  let skillsNote = '';
  const server = createBrokerServer({ broker });
  if (config.skillsRoot !== undefined) {
    skillsNote = await serveSkills({
      server,
      workspaceRoot: config.skillsRoot,
      log,
    });
  }

  const handle = serveStdio(() => server, {
    onerror: (error) => log(`transport: ${error.message}`),
  });
  broker.start();

  const source = config.offline
    ? 'offline seed catalog (HERETEK_BROKER_OFFLINE=1)'
    : `gateway ${config.gatewayUrl} (${config.gatewayMode}), seed catalog until discovery answers`;
  log(
    `${VERSION}: serving 3 meta-tools over ${broker.catalog.size} tools from ${backends.length} backends; ` +
      `source: ${source}; role ${config.role}${isReadOnlyRole(config.role) ? ' (read-only)' : ''}${skillsNote}.`,
  );
  log('waiting for an MCP client on stdio');

  await new Promise<void>((resolve) => {
    let closing = false;
    shutdown = (reason) => {
      if (closing) return;
      closing = true;
      log(`shutting down: ${reason}`);
      // Sessions are ended politely, but a hung gateway never keeps the process alive.
      setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
      void Promise.allSettled([handle.close(), broker.close()]).then(() =>
        resolve(),
      );
    };
    process.stdin.once('end', () => shutdown('stdin closed'));
    process.stdin.once('close', () => shutdown('stdin closed'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  return undefined;
}

/** The seed entries of the configured backends, with the configured profiles. */
function seedCatalogFor(backends: readonly Backend[]): ToolCatalog {
  const byTarget = new Map(backends.map((b) => [b.target, b]));
  const tools = SEED_TOOLS.filter((t) => byTarget.has(t.target)).map((t) => ({
    ...t,
    profile: byTarget.get(t.target)!.profile,
  }));
  return new ToolCatalog({ tools });
}

function loadBackendsFile(file: string): Backend[] {
  try {
    readFileSync(file);
  } catch (error) {
    throw new BrokerConfigError([
      `HERETEK_BACKENDS_FILE: cannot read ${file}: ${describe(error)}`,
    ]);
  }
  try {
    return loadBackends({ file });
  } catch (error) {
    throw new BrokerConfigError([`HERETEK_BACKENDS_FILE: ${describe(error)}`]);
  }
}

async function serveSkills(options: {
  server: ReturnType<typeof createBrokerServer>;
  workspaceRoot: string;
  log: (line: string) => void;
}): Promise<string> {
  try {
    // Loaded only when skills are served: the first answer does not need it.
    const { registerVerifiedSkills } = await import('./skills-extension.js');
    const report = await registerVerifiedSkills(options);
    return `; ${report.served.length} verified skills served (${report.served.map((s) => s.name).join(', ') || 'none'})`;
  } catch (error) {
    options.log(`skills: none served: ${describe(error)}`);
    return '; no skills served';
  }
}

function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}

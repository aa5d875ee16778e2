import type { Backend } from '@heretek/catalog';
import { isReadOnlyRole } from '@heretek/prefix';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { callerRoleOption } from './caller-role.js';
import { ClientBridge } from './client-bridge.js';
import type { BrokerConfig } from './config.js';
import { errorText } from './error-text.js';
import { EXIT_CODES } from './exit-codes.js';
import { InputRounds } from './input-rounds.js';
import { META_TOOL_NAMES } from './meta-tools.js';
import { fail } from './one-shot.js';
import { openBroker, type OpenedBroker } from './open-broker.js';
import { stderrLogger } from './logger.js';
import { createBrokerServer, registerMetaTools } from './server.js';
import { startBroker } from './start-broker.js';
import { BrokerStdioTransport } from './stdio-transport.js';
import { VERSION } from './version.js';

/** How long shutdown waits for sessions to end before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 2_000;

type Log = (line: string) => void;

/**
 * Serves MCP on stdio until stdin closes, the client's pipes break, or a
 * signal arrives. The parts are built in one pass, each from the ones before.
 */
export async function serve(
  config: BrokerConfig,
  backends: Backend[],
): Promise<number> {
  const log = stderrLogger();
  const stopped = stopSignals(log);
  // Calls from a 2026-07-28 client kept open while it answers a backend's request.
  const inputRounds = new InputRounds(log);
  const server = createBrokerServer({ backends });
  const bridge = new ClientBridge(server, log, inputRounds);
  let opened: OpenedBroker;
  try {
    opened = await openBroker({
      setup: { config, backends },
      log,
      // A backend request with no call handler of its own goes to the client (2025 path).
      backendRequests: {
        onElicitation: bridge.elicit,
        onSampling: bridge.sample,
      },
      // Loaded below, once the index cache is served.
      deferGateway: true,
    });
  } catch (error) {
    fail(error);
    return EXIT_CODES.usage;
  }
  const { broker, learning } = opened;
  // A backend's log messages go to stderr.
  broker.subscribe((event) => {
    if (event.type === 'backend-log') bridge.logFromBackend(event);
  });
  registerMetaTools(server, {
    broker,
    inputRounds,
    ...callerRoleOption(config),
  });
  const skillsNote =
    config.skillsRoot === undefined
      ? ''
      : await serveSkills({ server, workspaceRoot: config.skillsRoot, log });
  const transport = new BrokerStdioTransport({
    stdin: process.stdin,
    stdout: process.stdout,
    log,
    // Learned uses load after the first tools/list answer, never delaying it.
    onFirstToolsList: () =>
      void learning
        .load()
        .catch((error: unknown) =>
          log(`usage: not loaded: ${errorText(error)}`),
        ),
  });
  const handle = serveStdio(() => server, {
    transport,
    onerror: (error) => log(`transport: ${error.message}`),
  });
  const close = async () => {
    // The transport closes first, so nothing is written after the client
    // left; then discovery and calls in flight are aborted, not waited for.
    await handle.close().catch(() => {});
    inputRounds.close();
    return broker.close();
  };
  const problem = await startBroker(opened);
  if (problem !== undefined) {
    if (problem.kind === 'gateway') fail(problem.error);
    else log(`cannot start: ${errorText(problem.error)}`);
    await close();
    return EXIT_CODES.usage;
  }
  log(startedLine(config, backends, broker.catalog.size, skillsNote));
  log('waiting for an MCP client on stdio');
  await shutDown(await stopped, close, log);
  return EXIT_CODES.ok;
}

/** The reason serving ends: stdin closed, the client's pipe broke, or a signal. Other faults never take the broker down; they are logged. */
function stopSignals(log: Log): Promise<string> {
  return new Promise<string>((stop) => {
    process.stdout.on('error', (error) =>
      stop(`stdout closed (${errorText(error)})`),
    );
    process.on('unhandledRejection', (reason) =>
      log(`unhandled rejection: ${errorText(reason)}`),
    );
    process.on('uncaughtException', (error) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'EPIPE')
        stop('client pipe closed');
      else log(`uncaught exception: ${errorText(error)}`);
    });
    process.stdin.once('end', () => stop('stdin closed'));
    process.stdin.once('close', () => stop('stdin closed'));
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

/** Closes the session (`close`); a hung gateway never keeps the process alive. */
async function shutDown(
  reason: string,
  close: () => Promise<{ callsAborted: number }>,
  log: Log,
): Promise<void> {
  log(`shutting down: ${reason}`);
  setTimeout(() => {
    log(`shutdown: still busy after ${SHUTDOWN_GRACE_MS} ms; exiting anyway`);
    process.exit(EXIT_CODES.ok);
  }, SHUTDOWN_GRACE_MS).unref();
  try {
    const { callsAborted } = await close();
    log(
      `shutdown: aborted discovery and ${callsAborted} call${callsAborted === 1 ? '' : 's'} in flight`,
    );
  } catch (error) {
    log(`shutdown: ${errorText(error)}`);
  }
}

/** The first line on stderr: what is served, from where, for which role. */
function startedLine(
  config: BrokerConfig,
  backends: readonly Backend[],
  tools: number,
  skillsNote: string,
): string {
  const source = config.offline
    ? 'offline seed catalog (HERETEK_BROKER_OFFLINE=1)'
    : `gateway ${config.gatewayUrl} (${config.gatewayMode}), seed catalog until discovery answers`;
  return (
    `${VERSION}: serving ${META_TOOL_NAMES.length} meta-tools over ${tools} tools from ${backends.length} backends; ` +
    `source: ${source}; role ${config.role}${isReadOnlyRole(config.role) ? ' (read-only)' : ''}${
      config.hookRolesDir === undefined
        ? ''
        : `, each call's own from the Claude Code hook's records in ${config.hookRolesDir}`
    }${skillsNote}.`
  );
}

async function serveSkills(options: {
  server: ReturnType<typeof createBrokerServer>;
  workspaceRoot: string;
  log: Log;
}): Promise<string> {
  try {
    // Loaded only when skills are served: the first answer does not need it.
    const { registerVerifiedSkills } = await import('./skills-extension.js');
    const report = await registerVerifiedSkills(options);
    return `; ${report.served.length} verified skills served (${report.served.map((skill) => skill.name).join(', ') || 'none'})`;
  } catch (error) {
    options.log(`skills: none served: ${errorText(error)}`);
    return '; no skills served';
  }
}

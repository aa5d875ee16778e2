import { ToolCatalog, type Backend } from '@heretek/catalog';
import { isReadOnlyRole } from '@heretek/prefix';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/server';
import {
  StdioServerTransport,
  serveStdio,
} from '@modelcontextprotocol/server/stdio';
import { Broker } from './broker.js';
import { CHECK_EXIT, checkReport } from './check.js';
import { ClientBridge } from './client-bridge.js';
import { InputRounds } from './input-rounds.js';
import { ENVIRONMENT_HELP, type BrokerConfig } from './config.js';
import { createGateway } from './gateway.js';
import { EnvelopeGuard } from './envelope-guard.js';
import { LineLimit } from './line-limit.js';
import {
  openBroker,
  readBrokerSetup,
  type OpenedBroker,
} from './open-broker.js';
import { stderrLogger } from './logger.js';
import { createBrokerServer } from './server.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { ToolGateway } from './types.js';
import { UsageLearning } from './usage/usage-learning.js';
import { VERSION } from './version.js';

/** How long shutdown waits for sessions to end before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Longest request line read from stdin; a longer one is dropped and answered with an error. */
export const MAX_REQUEST_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** Exit codes of the CLI. */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2 } as const;

const USAGE = `heretek-lazy-broker ${VERSION}
An MCP stdio server that exposes three meta-tools (mcp_search_tools,
mcp_inspect_schema, mcp_call_tool) in front of every tool behind an
agentgateway. Start it from an MCP client; it speaks MCP on stdin/stdout and
logs to stderr.

Usage: heretek-lazy-broker [--backends <file>] [--check | --pin [tool]]
       heretek-lazy-broker --help | --version

  --check            validate the configuration, list every backend once, print
                     per backend the tools found and the time taken (or why it
                     failed), and exit: 0 every backend answered, 1 some failed,
                     2 gateway unreachable or configuration wrong; also
                     reports the pins file and the usage file (size, uses)
  --pin [tool]       list every backend once, show each tool whose definition
                     is new or differs from its pin (hidden characters
                     spelled out), accept them all (or only <tool>, its
                     qualified <target>_<tool> name) into HERETEK_PINS_FILE,
                     and exit: 0 accepted, 1 some backend failed (what it
                     listed is still accepted), 2 nothing could be accepted
  --backends <file>  JSON backend table [{backend,target,profile}] replacing the
                     12 defaults (overrides HERETEK_BACKENDS_FILE)

Environment:
${ENVIRONMENT_HELP.map(([name, fallback, meaning]) => `  ${name.padEnd(28)} ${meaning} (default: ${fallback})`).join('\n')}
`;

type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'serve' | 'check'; backendsFile: string | undefined }
  | { kind: 'pin'; backendsFile: string | undefined; tool: string | undefined };

function parseArguments(argv: readonly string[]): Command | string {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h'))
    return { kind: 'help' };
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v'))
    return { kind: 'version' };
  let check = false;
  let pin: { tool: string | undefined } | undefined;
  let backendsFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--check' && !check) check = true;
    else if (arg === '--pin' || arg.startsWith('--pin=')) {
      if (pin !== undefined) return '--pin is given twice';
      let tool: string | undefined;
      if (arg.startsWith('--pin=')) tool = arg.slice('--pin='.length);
      else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--'))
        tool = argv[++i];
      if (tool === '') return '--pin= needs a tool name: --pin <tool>';
      pin = { tool };
    } else if (arg === '--backends' || arg.startsWith('--backends=')) {
      const value =
        arg === '--backends' ? argv[++i] : arg.slice('--backends='.length);
      if (value === undefined || value === '' || value.startsWith('--'))
        return '--backends needs a file: --backends <file>';
      if (backendsFile !== undefined) return '--backends is given twice';
      backendsFile = value;
    } else
      return `unknown argument ${JSON.stringify(arg.slice(0, 80))}${
        ['--help', '-h', '--version', '-v'].includes(arg)
          ? ' (it takes no other argument)'
          : ''
      }`;
  }
  if (check && pin !== undefined)
    return '--check and --pin cannot be combined: run one, then the other';
  if (pin !== undefined) return { kind: 'pin', backendsFile, tool: pin.tool };
  return { kind: check ? 'check' : 'serve', backendsFile };
}

/**
 * Runs the broker CLI: `--help`, `--version`, `--check`, or a stdio MCP
 * server that serves until stdin closes or a signal arrives. Returns the
 * process exit code; serving ends with 0.
 */
export async function runServer(options: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
}): Promise<number> {
  const command = parseArguments(options.argv);
  if (typeof command === 'string') {
    process.stderr.write(`heretek-lazy-broker: ${command}. Try --help.\n`);
    return EXIT_CODES.usage;
  }
  if (command.kind === 'help') {
    process.stderr.write(USAGE);
    return EXIT_CODES.ok;
  }
  if (command.kind === 'version') {
    process.stderr.write(`${VERSION}\n`);
    return EXIT_CODES.ok;
  }

  let config: BrokerConfig;
  let backends: Backend[];
  try {
    ({ config, backends } = readBrokerSetup({
      env: options.env,
      ...(command.backendsFile === undefined
        ? {}
        : { backendsFile: command.backendsFile }),
    }));
  } catch (error) {
    process.stderr.write(`heretek-lazy-broker: ${describe(error)}\n`);
    return EXIT_CODES.usage;
  }

  if (command.kind === 'check') return runCheck(config, backends);
  if (command.kind === 'pin') return runPin(config, backends, command.tool);
  return serve(config, backends);
}

/**
 * A line of a one-shot command's report (`--check`, `--pin`). Like every
 * output of the bin that is not MCP, it goes to stderr.
 */
function out(line: string): void {
  process.stderr.write(`${line}\n`);
}

/**
 * A broker that starts with an empty catalog, for commands that discover
 * once and report (`--check`, `--pin`).
 */
function discoveryBroker(
  config: BrokerConfig,
  backends: Backend[],
  gateway: ToolGateway,
  trust: TrustLayer | undefined,
): Broker {
  return new Broker({
    role: config.role,
    catalog: new ToolCatalog({ tools: [] }),
    backends,
    gateway,
    gatewayMode: config.gatewayMode,
    trust,
  });
}

/** `--check`: one discovery, a per-backend report on stdout, an exit code. */
async function runCheck(
  config: BrokerConfig,
  backends: Backend[],
): Promise<number> {
  // The pins file is read, never written: --check pins nothing on its own.
  const { TrustLayer, describePins, formatPinsDescription } =
    await import('./trust/index.js');
  const { formatUsageDescription } = await import('./usage/usage-log.js');
  let trust: TrustLayer | undefined;
  try {
    trust = await TrustLayer.open({
      policy: config.pinPolicy,
      pinsFile: config.pinsFile,
      pinsReadOnly: true,
    });
  } catch (error) {
    process.stderr.write(`heretek-lazy-broker: ${describe(error)}\n`);
    return CHECK_EXIT.unreachableOrInvalid;
  }
  const learning = new UsageLearning({ file: config.usageFile });
  const reportFiles = async () => {
    out(
      trust.pins === undefined
        ? `pins: off (HERETEK_PIN_POLICY=off): no tool is pinned or checked`
        : `${formatPinsDescription(describePins(trust.pins))}; policy ${trust.policy}${config.pinsReadOnly ? ', HERETEK_PINS_READ_ONLY=1' : ''}`,
    );
    out(formatUsageDescription(await learning.describe()));
  };
  if (config.offline) {
    out(
      `configuration valid; offline (HERETEK_BROKER_OFFLINE=1): ${backends.length} backends from the seed catalog, no gateway to check`,
    );
    await reportFiles();
    return CHECK_EXIT.allAnswered;
  }
  let gateway: ToolGateway;
  try {
    gateway = await createGateway(config);
  } catch (error) {
    process.stderr.write(`heretek-lazy-broker: ${describe(error)}\n`);
    return CHECK_EXIT.unreachableOrInvalid;
  }
  out(
    `checking gateway ${config.gatewayUrl} (${config.gatewayMode}), role ${config.role}, ${backends.length} backends`,
  );
  const broker = discoveryBroker(config, backends, gateway, trust);
  const started = performance.now();
  try {
    const outcomes = await broker.discover();
    const report = checkReport(
      outcomes,
      Math.round(performance.now() - started),
    );
    for (const line of report.lines) out(line);
    await reportFiles();
    return report.exitCode;
  } finally {
    await broker.close();
  }
}

/**
 * `--pin [tool]`: one discovery through the trust layer, then what is new or
 * changed (hidden characters spelled out) on stdout, accepted into the pins
 * file. Exit 0 when accepted, 1 when some backend failed (what the others
 * listed is still accepted), 2 when nothing could be accepted.
 */
async function runPin(
  config: BrokerConfig,
  backends: Backend[],
  tool: string | undefined,
): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`heretek-lazy-broker: ${message}\n`);
    return EXIT_CODES.usage;
  };
  if (config.pinPolicy === 'off')
    return fail(
      '--pin: HERETEK_PIN_POLICY is off, so no tool is pinned. Set it to refuse or warn.',
    );
  if (config.offline)
    return fail(
      '--pin: the broker is offline (HERETEK_BROKER_OFFLINE=1); pins are taken from what the gateway lists. Unset HERETEK_BROKER_OFFLINE.',
    );
  const { TrustLayer, formatPendingPins } = await import('./trust/index.js');
  let trust: TrustLayer;
  let gateway: ToolGateway;
  try {
    trust = await TrustLayer.open({
      policy: config.pinPolicy,
      pinsFile: config.pinsFile,
      pinsReadOnly: config.pinsReadOnly,
    });
    gateway = await createGateway(config);
  } catch (error) {
    return fail(describe(error));
  }
  const pins = trust.pins!;
  const broker = discoveryBroker(config, backends, gateway, trust);
  try {
    const outcomes = await broker.discover();
    const failed = outcomes.filter((o) => !o.ok);
    for (const o of failed)
      out(
        `backend ${o.target} did not answer (${o.error}); its tools were not reviewed`,
      );
    if (failed.length === outcomes.length)
      return fail('--pin: no backend answered; nothing was accepted.');
    // Tools seen for the first time were pinned by this discovery (trust on
    // first use) unless the file is read-only; they are named, not shown.
    const firstSeen = broker.catalog
      .list()
      .map((entry) => entry.name)
      .filter(
        (name) =>
          (tool === undefined || name === tool) &&
          pins.status(name)?.state === 'new',
      )
      .sort();
    let accepted;
    try {
      out(formatPendingPins(pins.pending(tool === undefined ? {} : { tool })));
      accepted = await pins.accept(tool === undefined ? {} : { tool });
    } catch (error) {
      return fail(describe(error));
    }
    if (firstSeen.length > 0)
      out(
        `${firstSeen.length} tool${firstSeen.length === 1 ? '' : 's'} pinned on first sight: ${firstSeen.join(', ')}`,
      );
    out(
      `accepted ${accepted.length} tool${accepted.length === 1 ? '' : 's'} into ${pins.path}${
        failed.length > 0
          ? `; ${failed.length} backend${failed.length === 1 ? '' : 's'} did not answer`
          : ''
      }`,
    );
    return failed.length > 0 ? EXIT_CODES.failure : EXIT_CODES.ok;
  } finally {
    await broker.close();
  }
}

/** Serves MCP on stdio until stdin closes, the client's pipes break, or a signal arrives. */
async function serve(
  config: BrokerConfig,
  backends: Backend[],
): Promise<number> {
  const log = stderrLogger();

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

  // Calls from a 2026-07-28 client kept open while it answers a backend's request.
  const inputRounds = new InputRounds();
  const bridge = new ClientBridge(log, inputRounds);
  let opened: OpenedBroker;
  try {
    opened = await openBroker({
      setup: { config, backends },
      log,
      // What a backend sends back during a call goes to the client or to stderr.
      hooks: {
        onElicitation: bridge.elicit,
        onSampling: bridge.sample,
        onLog: bridge.logFromBackend,
      },
    });
  } catch (error) {
    process.stderr.write(`heretek-lazy-broker: ${describe(error)}\n`);
    return EXIT_CODES.usage;
  }
  const { broker, learning, trust } = opened;

  let skillsNote = '';
  const server = createBrokerServer({ broker, inputRounds });
  bridge.attach(server);
  if (config.skillsRoot !== undefined) {
    skillsNote = await serveSkills({
      server,
      workspaceRoot: config.skillsRoot,
      log,
    });
  }

  // A request line over the limit is dropped (and answered, when its id shows)
  // instead of reaching the SDK's reader, which would close the transport.
  // A request line the SDK's reader would drop without a word (a usable id
  // but an envelope its schema refuses) is answered with Invalid Request.
  const refuse = (id: string | number, message: string) => {
    transport
      .send({ jsonrpc: '2.0', id, error: { code: -32600, message } })
      .catch(() => {});
  };
  const transport: StdioServerTransport = new StdioServerTransport(
    process.stdin
      .pipe(
        new LineLimit(MAX_REQUEST_LINE_BYTES, ({ bytes, id }) => {
          log(
            `request line of ${bytes} bytes dropped: the limit is ${MAX_REQUEST_LINE_BYTES} bytes${
              id === undefined ? ' (no id found: not answered)' : ''
            }`,
          );
          if (id === undefined) return;
          refuse(
            id,
            `Request too large: ${bytes} bytes in one line; the limit is ${MAX_REQUEST_LINE_BYTES} bytes. Nothing was done.`,
          );
        }),
      )
      .pipe(
        new EnvelopeGuard(({ id, problem }) => {
          log(`invalid request ${JSON.stringify(id)} answered: ${problem}`);
          refuse(id, `Invalid Request: ${problem}. Nothing was done.`);
        }),
      ) as unknown as NodeJS.ReadStream,
    process.stdout,
    { maxBufferSize: MAX_REQUEST_LINE_BYTES + 64 * 1024 },
  );
  // The SDK's own JSON-RPC errors quote the request (an unknown tool name, a
  // bad parameter): cap them too, so no error carries a wall of caller input.
  // Learned uses are read once the first tools/list has been answered, so the
  // usage file never delays the first answer.
  let learningLoaded = false;
  const loadLearning = () => {
    if (learningLoaded) return;
    learningLoaded = true;
    learning
      .load()
      .catch((error: unknown) => log(`usage: not loaded: ${describe(error)}`));
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(capErrorMessage(message));
    if (
      !learningLoaded &&
      Array.isArray((message as { result?: { tools?: unknown } }).result?.tools)
    )
      loadLearning();
  };
  const handle = serveStdio(() => server, {
    transport,
    onerror: (error) => log(`transport: ${error.message}`),
  });
  // Discovery starts at once; each listing waits for the pins file before it
  // is catalogued. A pins file that cannot be trusted is never overwritten:
  // the broker stops.
  broker.start();
  if (trust !== undefined) {
    let pinsProblem: string | undefined;
    try {
      await trust;
    } catch (error) {
      pinsProblem = describe(error);
    }
    if (pinsProblem !== undefined) {
      log(`cannot start: ${pinsProblem}`);
      await handle.close().catch(() => {});
      await broker.close();
      return EXIT_CODES.usage;
    }
  }

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
      // A hung gateway never keeps the process alive.
      setTimeout(() => {
        log(
          `shutdown: still busy after ${SHUTDOWN_GRACE_MS} ms; exiting anyway`,
        );
        process.exit(EXIT_CODES.ok);
      }, SHUTDOWN_GRACE_MS).unref();
      // The transport closes first, so nothing is written after the client left;
      // then discovery and calls in flight are aborted, not waited for.
      void handle
        .close()
        .catch(() => {})
        .then(() => inputRounds.close())
        .then(() => broker.close())
        .then(
          ({ callsAborted }) =>
            log(
              `shutdown: aborted discovery and ${callsAborted} call${callsAborted === 1 ? '' : 's'} in flight`,
            ),
          (error: unknown) => log(`shutdown: ${describe(error)}`),
        )
        .finally(resolve);
    };
    process.stdin.once('end', () => shutdown('stdin closed'));
    process.stdin.once('close', () => shutdown('stdin closed'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  return EXIT_CODES.ok;
}

/** Longest JSON-RPC error message sent, in characters; longer ones are cut with their length noted. */
const MAX_ERROR_MESSAGE_CHARS = 1_000;

function capErrorMessage<M>(message: M): M {
  const error = (message as { error?: { message?: unknown } }).error;
  if (
    typeof error?.message !== 'string' ||
    error.message.length <= MAX_ERROR_MESSAGE_CHARS
  )
    return message;
  return {
    ...message,
    error: {
      ...error,
      message: `${error.message.slice(0, MAX_ERROR_MESSAGE_CHARS)}… (${error.message.length} characters)`,
    },
  };
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

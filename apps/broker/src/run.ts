import { parseArgs } from 'node:util';
import { runCheck } from './check.js';
import { environmentHelp } from './config.js';
import { EXIT_CODES } from './exit-codes.js';
import { META_TOOL_NAMES } from './meta-tools.js';
import { fail } from './one-shot.js';
import { readBrokerSetup, type BrokerSetup } from './open-broker.js';
import { runPin } from './pin.js';
import { serve } from './serve.js';
import { VERSION } from './version.js';

/** The `--help` text (made when asked for: serving never needs it). */
const usage = () => `heretek-lazy-broker ${VERSION}
An MCP stdio server that exposes ${META_TOOL_NAMES.length} meta-tools (${META_TOOL_NAMES.join(', ')})
in front of every tool behind an agentgateway. Start it from an MCP client; it
speaks MCP on stdin/stdout and logs to stderr.

Usage: heretek-lazy-broker [--backends <file>] [--check | --pin [tool | target]]
       heretek-lazy-broker --help | --version

  --check            validate the configuration, list every backend once, print
                     per backend the tools found and the time taken (or why it
                     failed), and exit: 0 every backend answered, 1 some failed,
                     2 gateway unreachable or configuration wrong; also
                     reports the pins file and the usage file (size, uses)
  --pin [tool | target]
                     list every backend once, show each tool whose definition
                     is new or differs from its pin (hidden characters
                     spelled out), accept them all (or only <tool>, its
                     qualified <target>_<tool> name, or every tool of
                     <target>) into HERETEK_PINS_FILE, and exit: 0 accepted,
                     1 some backend failed (what it listed is still
                     accepted), 2 nothing could be accepted
  --backends <file>  JSON backend table [{backend,target,profile}] replacing the
                     12 defaults (overrides HERETEK_BACKENDS_FILE)

Environment:
${environmentHelp().join('\n')}
`;

type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'serve' | 'check'; backendsFile: string | undefined }
  | { kind: 'pin'; backendsFile: string | undefined; tool: string | undefined };

/** An argument as the person typed it, for an error message. */
const quoted = (arg: string) => JSON.stringify(arg.slice(0, 80));

/**
 * The command the arguments ask for, or what is wrong with them. `--pin`
 * takes an optional tool name (the next argument, or `--pin=<tool>`), which
 * `parseArgs` has no type for: the tokens it returns are read in order.
 */
function parseArguments(argv: readonly string[]): Command | string {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h'))
    return { kind: 'help' };
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v'))
    return { kind: 'version' };
  const { tokens } = parseArgs({
    args: [...argv],
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      check: { type: 'boolean' },
      pin: { type: 'boolean' },
      backends: { type: 'string' },
    },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  let check = false;
  let pin: { tool: string | undefined } | undefined;
  let backendsFile: string | undefined;
  for (const [i, token] of tokens.entries()) {
    const previous = tokens[i - 1];
    if (token.kind === 'positional') {
      // A tool name follows a bare `--pin` at once.
      if (
        pin === undefined ||
        pin.tool !== undefined ||
        previous?.kind !== 'option' ||
        previous.name !== 'pin' ||
        previous.inlineValue === true
      )
        return `unknown argument ${quoted(token.value)}`;
      pin = { tool: token.value };
    } else if (token.kind === 'option-terminator') {
      return `unknown argument ${quoted('--')}`;
    } else if (token.name === 'check' && !check && token.value === undefined) {
      check = true;
    } else if (token.name === 'pin') {
      if (pin !== undefined) return '--pin is given twice';
      if (token.value === '') return '--pin= needs a tool name: --pin <tool>';
      pin = { tool: token.value };
    } else if (token.name === 'backends') {
      const value = token.value;
      if (
        value === undefined ||
        value === '' ||
        (!token.inlineValue && value.startsWith('--'))
      )
        return '--backends needs a file: --backends <file>';
      if (backendsFile !== undefined) return '--backends is given twice';
      backendsFile = value;
    } else {
      const arg = argv[token.index]!;
      return `unknown argument ${quoted(arg)}${
        token.name === 'help' || token.name === 'version'
          ? ' (it takes no other argument)'
          : ''
      }`;
    }
  }
  if (check && pin !== undefined)
    return '--check and --pin cannot be combined: run one, then the other';
  if (pin !== undefined) return { kind: 'pin', backendsFile, tool: pin.tool };
  return { kind: check ? 'check' : 'serve', backendsFile };
}

/** Runs the broker CLI (`--help`, `--version`, `--check`, `--pin`, or the stdio server); returns the process exit code. */
export async function runServer(options: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
}): Promise<number> {
  const command = parseArguments(options.argv);
  if (typeof command === 'string') {
    process.stderr.write(`heretek-lazy-broker: ${command}. Try --help.\n`);
    return EXIT_CODES.usage;
  }
  if (command.kind === 'help' || command.kind === 'version') {
    process.stderr.write(command.kind === 'help' ? usage() : `${VERSION}\n`);
    return EXIT_CODES.ok;
  }
  let setup: BrokerSetup;
  try {
    setup = readBrokerSetup({
      env: options.env,
      backendsFile: command.backendsFile,
    });
  } catch (error) {
    fail(error);
    return EXIT_CODES.usage;
  }
  const { config, backends } = setup;
  if (command.kind === 'check') return runCheck(config, backends);
  if (command.kind === 'pin') return runPin(config, backends, command.tool);
  return serve(config, backends);
}

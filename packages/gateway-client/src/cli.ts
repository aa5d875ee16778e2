#!/usr/bin/env node
/**
 * `heretek-gateway`: check a gateway route by hand. A thin layer over
 * {@link GatewayClient}, configured by the broker's environment.
 */
import { parseArgs } from 'node:util';
import { gatewayOptionsFromEnv } from './cli-env.js';
import { GatewayError } from './errors.js';
import { GatewayClient } from './gateway-client.js';
import { VERSION } from './version.js';

const USAGE = `Usage:
  heretek-gateway tools <target>                       print every tool of <target> as JSON lines {"name","description","readOnly"}
  heretek-gateway call <target> <tool> [--args '<json>'] [--task]
                                                       call a tool and print the result as JSON;
                                                       --task calls it task-augmented (for taskSupport: required);
                                                       progress and backend logs go to stderr
  heretek-gateway --help | --version

Environment (same as the broker):
  HERETEK_GATEWAY_URL         gateway base URL (default http://127.0.0.1:3000)
  HERETEK_GATEWAY_MODE        per-target | multiplexed (default per-target)
  HERETEK_GATEWAY_TOKEN       bearer token (optional, never printed)
  HERETEK_GATEWAY_TIMEOUT_MS  per-request timeout (default 30000)
  HERETEK_BROKER_ROLE         sent as x-heretek-role (default director)

Exit codes: 0 ok, 1 tool result with isError or a gateway error (code on stderr), 2 usage or configuration error.
`;

class UsageError extends Error {}

const write = (text: string) => void process.stdout.write(text);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      args: { type: 'string' },
      task: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
  if (values.help || values.version) {
    write(values.help ? USAGE : `${VERSION}\n`);
    return 0;
  }
  const [command, target, tool, ...rest] = positionals;
  if (command !== 'tools' && command !== 'call')
    throw new UsageError(
      command ? `Unknown command '${command}'.` : 'No command given.',
    );
  if (
    !target ||
    (command === 'tools' ? tool !== undefined : !tool || rest.length > 0)
  )
    throw new UsageError(
      command === 'tools'
        ? 'tools takes exactly one target.'
        : 'call takes a target and a tool name.',
    );
  let callArguments: unknown = {};
  try {
    callArguments = JSON.parse(values.args ?? '{}');
  } catch (error) {
    throw new UsageError(
      `--args is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (
    typeof callArguments !== 'object' ||
    callArguments === null ||
    Array.isArray(callArguments)
  )
    throw new UsageError('--args must be a JSON object.');

  const client = new GatewayClient({
    ...gatewayOptionsFromEnv(process.env),
    onLog: (entry) =>
      console.error(
        `heretek-gateway: log [${entry.target}] ${entry.level}${entry.logger ? ` (${entry.logger})` : ''}: ${JSON.stringify(entry.data)}`,
      ),
  });
  try {
    if (command === 'tools') {
      const tools = await client.listTools({ target });
      for (const entry of tools) {
        write(
          `${JSON.stringify({ name: entry.name, description: entry.description ?? '', readOnly: entry.annotations?.readOnlyHint === true })}\n`,
        );
      }
      return 0;
    }
    const result = await client.callTool({
      target,
      tool: tool as string,
      arguments: callArguments as Record<string, unknown>,
      task: values.task === true,
      onProgress: ({ progress, total, message }) =>
        console.error(
          `heretek-gateway: progress ${progress}${total === undefined ? '' : `/${total}`}${message ? `: ${message}` : ''}`,
        ),
    });
    write(`${JSON.stringify(result, null, 2)}\n`);
    if (result.isError) {
      console.error(
        `heretek-gateway: tool '${tool}' of target '${target}' returned isError`,
      );
      return 1;
    }
    return 0;
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError &&
        (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
    ) {
      console.error(`heretek-gateway: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (GatewayError.isInstance(error)) {
      console.error(
        `heretek-gateway: error [${error.code}]${error.target ? ` target=${error.target}` : ''}: ${error.message}`,
      );
      process.exitCode = error.code === 'INVALID_CONFIG' ? 2 : 1;
    } else {
      console.error(
        `heretek-gateway: unexpected failure: ${error instanceof Error ? error.message : String(error)}`,
      );
      process.exitCode = 1;
    }
  },
);

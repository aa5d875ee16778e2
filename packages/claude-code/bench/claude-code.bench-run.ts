// `pnpm bench`: the plugin in the real Claude Code against loopback stand-ins.
//
// 1. A delegated session: the main thread hands work to each of the six
//    roles through the Agent tool; each does a search, an inspect and a call
//    through the broker. Anthropic's prompt caching is emulated over the
//    recorded requests (the emulation the OpenCode plugin's bench uses),
//    with the plugin and with six ordinary project subagents whose bodies
//    are the six whole role prompts (they begin alike: layers 1+2), beside
//    the same broker as an MCP server.
// 2. Start-up: spawn to the first model request, with the plugin and with
//    Claude Code alone, interleaved, medians.
//
// Token counts are o200k_base estimates (js-tiktoken) of each block's JSON,
// the same counter for both set-ups. Runs are sequential.
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ROLE_NAMES, assemblePrefixCachedPrompt } from '@heretek/prefix';
import { getEncoding } from 'js-tiktoken';
import { afterAll, beforeAll, it } from 'vitest';
import { emulateAnthropicCache } from '#broker-fixtures/anthropic-cache.js';
import {
  startGhidraBackend,
  type GhidraBackend,
} from '#broker-fixtures/ghidra-backend.js';
import {
  delegationLine,
  scriptLine as call,
} from '#broker-fixtures/model-stand-in.js';
import { CLAUDE_CODE_TOOLS } from '../src/layout.js';
import { BROKER_TOOLS } from '../src/plugin-files.js';
import {
  PACKAGE_ROOT,
  REPOSITORY_ROOT,
  runClaudeRecorded,
  type RecordedRun,
  type RunClaudeOptions,
} from '../src/__fixtures__/run-claude.js';

const encoder = getEncoding('o200k_base');
const countTokens = (text: string) => encoder.encode(text).length;

/** One role's work: a search, an inspect and a read-only call, through the tools named `tools`. */
const work = (tools: readonly string[]) =>
  [
    call(tools[0]!, { query: 'list functions' }),
    call(tools[1]!, { name: 'ghidra_list_functions' }),
    call(tools[2]!, { name: 'ghidra_list_functions', arguments: {} }),
  ].join('\n');

const session = (agentOf: (role: string) => string, tools: readonly string[]) =>
  ROLE_NAMES.map((role) =>
    delegationLine({
      tool: 'Agent',
      role,
      subagentType: agentOf(role),
      prompt: work(tools),
    }),
  ).join('\n');

let ghidra: GhidraBackend;
const results: Record<string, unknown> = {};

async function record(
  options: Omit<RunClaudeOptions, 'baseUrl' | 'env'>,
): Promise<RecordedRun> {
  const recorded = await runClaudeRecorded({ ...options, env: ghidra.env });
  const { run } = recorded;
  if (run.code !== 0 || run.timedOut)
    throw new Error(`claude ended with ${run.code}: ${run.stderr}`);
  return recorded;
}

/** Six project subagents with the whole role prompt as body, the same tools line, the broker as a plain MCP server. */
function ordinaryAgents(): Pick<
  RunClaudeOptions,
  'projectFiles' | 'mcpConfig'
> {
  const tools = BROKER_TOOLS.map((name) =>
    name.replace('plugin_heretek_broker', 'heretek'),
  );
  const projectFiles: Record<string, string> = {};
  for (const role of ROLE_NAMES) {
    const prompt = assemblePrefixCachedPrompt({
      role,
      workspaceRoot: REPOSITORY_ROOT,
      activeProfile: 'core',
    }).systemPrompt;
    projectFiles[`.claude/agents/${role}.md`] = [
      '---',
      `name: ${role}`,
      `description: The ${role} role.`,
      `tools: ${[...CLAUDE_CODE_TOOLS, ...tools].join(', ')}`,
      '---',
      prompt,
    ].join('\n');
  }
  return {
    projectFiles,
    mcpConfig: {
      mcpServers: {
        heretek: {
          command: 'node',
          args: [join(PACKAGE_ROOT, 'broker/cli.js')],
          env: { HERETEK_BROKER_ROLE: 'staff-backend' },
          alwaysLoad: true,
        },
      },
    },
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[middle]!
    : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const share = (value: number) => Math.round(value * 1000) / 10;

beforeAll(async () => {
  ghidra = await startGhidraBackend();
});

afterAll(async () => {
  await ghidra?.close();
  results.machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
    node: process.version,
  };
  console.log(JSON.stringify(results, null, 2));
});

it('a delegated session: input read from the emulated Anthropic cache, with the plugin and with six ordinary subagents', async () => {
  const plugin = await record({
    message: session((role) => `heretek:${role}`, BROKER_TOOLS),
    allowedTools: ['Agent', ...BROKER_TOOLS],
  });
  const ordinaryTools = BROKER_TOOLS.map((name) =>
    name.replace('plugin_heretek_broker', 'heretek'),
  );
  const ordinary = await record({
    plugin: false,
    ...ordinaryAgents(),
    message: session((role) => role, ordinaryTools),
    allowedTools: ['Agent', ...ordinaryTools],
  });
  const report = (recorded: RecordedRun) => {
    const bodies = recorded.requests
      .filter((r) => Array.isArray(r.body.tools))
      .map((r) => r.body);
    const cache = emulateAnthropicCache(bodies, { countTokens });
    // A subagent's first request: no answer of the model yet, and no Agent
    // tool (the main thread's).
    const firsts = cache.requests.filter((_, index) => {
      const body = bodies[index]!;
      return (
        !(body.messages as Array<{ role: string }>).some(
          (m) => m.role === 'assistant',
        ) &&
        !(body.tools as Array<{ name: string }>).some((t) => t.name === 'Agent')
      );
    });
    return {
      requests: bodies.length,
      inputTokens: cache.input,
      readTokens: cache.read,
      writtenTokens: cache.written,
      readSharePercent: share(cache.readShare),
      subagentFirstRequests: firsts.map((r) => ({
        input: r.input,
        readPercent: share(r.read / r.input),
      })),
    };
  };
  results.cache = { plugin: report(plugin), ordinary: report(ordinary) };
});

it('start-up to the first model request: with the plugin, with the broker as a plain MCP server, and Claude Code alone', async () => {
  const runs: Record<string, number[]> = { plugin: [], broker: [], alone: [] };
  const { mcpConfig } = ordinaryAgents();
  for (let round = 0; round < 5; round++) {
    for (const variant of ['plugin', 'broker', 'alone'] as const) {
      const recorded = await record({
        plugin: variant === 'plugin',
        ...(variant === 'broker' ? { mcpConfig } : {}),
        message: 'hello',
        allowedTools: [],
      });
      runs[variant]!.push(
        (recorded.requests[0]?.receivedAt ?? Number.NaN) -
          recorded.run.startedAt,
      );
    }
  }
  results.startup = Object.fromEntries(
    Object.entries(runs).map(([variant, times]) => [
      variant,
      { firstRequestMsMedian: median(times), firstRequestMs: times },
    ]),
  );
});

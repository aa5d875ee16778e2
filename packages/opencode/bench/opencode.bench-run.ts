// `pnpm bench`: the plugin in the real OpenCode against loopback stand-ins.
//
// 1. A scripted multi-agent session: director hands work to each of the five
//    other roles through the task tool; each does a search, an inspect and a
//    call through the meta-tools. Anthropic's prompt caching is emulated over
//    the recorded requests (see src/__fixtures__/anthropic-cache.ts), with the
//    plugin and with the same six role prompts set as plain OpenCode agent
//    prompts beside the stdio broker as an MCP server.
// 2. The first request's input tokens with the 527 LiveMCPBench tools served
//    by a loopback MCP server: behind the plugin, and as a direct MCP server.
// 3. Start-up (spawn to the first model request), peak memory of OpenCode and
//    its children, and the time from a meta-tool call's answer to the request
//    that carries its result, for the plugin, the stdio broker and OpenCode
//    alone.
//
// Token counts are o200k_base estimates (js-tiktoken) of each block's JSON,
// the same counter for every variant. Runs are sequential.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLE_NAMES, assemblePrefixCachedPrompt } from '@heretek/prefix';
import { getEncoding } from 'js-tiktoken';
import { afterAll, beforeAll, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from '#broker-fixtures/mcp-backends.js';
import { emulateAnthropicCache } from '../src/__fixtures__/anthropic-cache.js';
import {
  agentRequests,
  startModelStandIn,
  type RecordedRequest,
} from '../src/__fixtures__/model-stand-in.js';
import {
  PACKAGE_ROOT,
  PLUGIN_URL,
  REPOSITORY_ROOT,
  anthropicProvider,
  runOpenCode,
  temporaryFolder,
} from '../src/__fixtures__/run-opencode.js';

const encoder = getEncoding('o200k_base');
const countTokens = (text: string) => encoder.encode(text).length;

type LiveTool = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  server: string;
};

const LIVE: LiveTool[] = readFileSync(
  join(PACKAGE_ROOT, '../catalog/bench/data/livemcpbench/tools.jsonl'),
  'utf8',
)
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as LiveTool);

/**
 * A draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` (one LiveMCPBench
 * tool has one) in its 2020-12 form, which the MCP SDK's servers accept.
 */
function modernSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(modernSchema);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value))
    out[key] = modernSchema(inner);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag] === true && typeof out[bound] === 'number') {
      out[flag] = out[bound];
      delete out[bound];
    } else delete out[flag];
  }
  return out;
}

/** A LiveMCPBench server name as an agentgateway target name. */
const targetOf = (server: string) =>
  server.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');

const BROKER_BIN = join(REPOSITORY_ROOT, 'apps/broker/dist/cli.js');

type Recorded = {
  run: Awaited<ReturnType<typeof runOpenCode>>;
  requests: RecordedRequest[];
};

let backends: McpBackends;
let heretekEnv: Record<string, string>;
const results: Record<string, unknown> = {};

beforeAll(async () => {
  const byTarget: Record<string, FixtureTool[]> = {};
  for (const tool of LIVE) {
    (byTarget[targetOf(tool.server)] ??= []).push({
      name: tool.name.slice(tool.name.indexOf('__') + 2),
      description: tool.description,
      inputSchema: modernSchema(tool.inputSchema) as Record<string, unknown>,
    });
  }
  backends = await startMcpBackends(byTarget);
  const state = temporaryFolder('bench-state');
  const backendsFile = join(state, 'backends.json');
  writeFileSync(
    backendsFile,
    JSON.stringify(
      Object.keys(byTarget).map((target) => ({
        backend: target,
        target,
        profile: 'core',
      })),
    ),
  );
  heretekEnv = {
    HERETEK_GATEWAY_URL: backends.url,
    HERETEK_BACKENDS_FILE: backendsFile,
    HERETEK_PINS_FILE: join(state, 'pins.json'),
    HERETEK_PIN_POLICY: 'off',
    HERETEK_USAGE_FILE: 'off',
  };
}, 120_000);

afterAll(async () => {
  await backends?.close();
  const out = join(PACKAGE_ROOT, 'bench/results.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written ${out}`);
});

async function record(
  options: Parameters<typeof runOpenCode>[0],
): Promise<Recorded> {
  const model = await startModelStandIn();
  try {
    const run = await runOpenCode({
      ...options,
      timeoutMs: 600_000,
      sampleMemory: true,
      config: {
        model: 'anthropic/claude-sonnet-4-5',
        provider: anthropicProvider(model.baseURL),
        ...options.config,
      },
    });
    if (run.timedOut || run.code !== 0)
      throw new Error(
        `OpenCode did not finish (code ${run.code}): ${run.stderr.slice(-2000)}`,
      );
    return { run, requests: [...model.requests] };
  } finally {
    await model.close();
  }
}

/** Five tools with only required string arguments, one for each role the director hands work to. */
function scriptTools(): Array<{ name: string; query: string; args: object }> {
  const picked: Array<{ name: string; query: string; args: object }> = [];
  const seen = new Set<string>();
  for (const tool of LIVE) {
    const required = (tool.inputSchema.required ?? []) as string[];
    const properties = (tool.inputSchema.properties ?? {}) as Record<
      string,
      { type?: string }
    >;
    const target = targetOf(tool.server);
    if (
      seen.has(target) ||
      required.length === 0 ||
      !required.every((k) => properties[k]?.type === 'string') ||
      !/^[\x20-\x7e]+$/.test(tool.description)
    )
      continue;
    seen.add(target);
    const bare = tool.name.slice(tool.name.indexOf('__') + 2);
    picked.push({
      name: `${target}_${bare}`,
      query: bare.replaceAll('_', ' '),
      args: Object.fromEntries(required.map((k) => [k, 'example'])),
    });
    if (picked.length === 5) break;
  }
  return picked;
}

/** The director's script: hand one search-inspect-call to each other role. */
function sessionScript(prefix: string): string {
  const call = (name: string, input: unknown) =>
    `@tool ${prefix}${name} ${JSON.stringify(input)}`;
  const tools = scriptTools();
  return ROLE_NAMES.filter((role) => role !== 'director')
    .map((role, i) => {
      const tool = tools[i]!;
      const work = [
        call('mcp_search_tools', { query: tool.query, limit: 5 }),
        call('mcp_inspect_schema', { name: tool.name }),
        call('mcp_call_tool', { name: tool.name, arguments: tool.args }),
      ].join('\n');
      return `@tool task ${JSON.stringify({
        description: `work for ${role}`,
        prompt: work,
        subagent_type: role,
      })}`;
    })
    .join('\n');
}

/** Median time from a tool call's answer to the request carrying its result. */
function callLatencyMs(recorded: Recorded, toolPrefix: string): number[] {
  const times: number[] = [];
  const requests = agentRequests(recorded.requests);
  for (const request of requests) {
    const messages = request.body.messages as Array<{
      role: string;
      content: unknown;
    }>;
    const last = messages.at(-1);
    const previous = messages.at(-2);
    if (
      last === undefined ||
      previous === undefined ||
      !Array.isArray(last.content) ||
      !Array.isArray(previous.content)
    )
      continue;
    const use = (
      previous.content as Array<{ type: string; name?: string }>
    ).find((b) => b.type === 'tool_use');
    if (use?.name?.startsWith(`${toolPrefix}mcp_`) !== true) continue;
    // The request whose answer was that tool call: the latest one answered before this one arrived.
    const answered = requests
      .filter((r) => r.answeredAt <= request.receivedAt && r !== request)
      .at(-1);
    if (answered !== undefined)
      times.push(request.receivedAt - answered.answeredAt);
  }
  return times;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

const startupMs = (recorded: Recorded) =>
  (recorded.requests[0]?.receivedAt ?? Number.NaN) - recorded.run.startedAt;

const mib = (bytes: number | undefined) =>
  Math.round(((bytes ?? 0) / 1024 / 1024) * 10) / 10;

function plainAgents(): Record<string, unknown> {
  return Object.fromEntries(
    ROLE_NAMES.map((role) => [
      role,
      {
        mode: role === 'director' ? 'primary' : 'all',
        prompt: assemblePrefixCachedPrompt({
          role,
          workspaceRoot: REPOSITORY_ROOT,
          activeProfile: 'core',
        }).systemPrompt,
        permission: { task: 'allow', todowrite: 'deny' },
      },
    ]),
  );
}

const stdioBroker = (role: string) => ({
  'heretek-lazy-broker': {
    type: 'local',
    command: ['node', BROKER_BIN],
    environment: { ...heretekEnv, HERETEK_BROKER_ROLE: role },
  },
});

it('multi-agent session: share of input read from the emulated Anthropic cache', async () => {
  const withPlugin = await record({
    project: temporaryFolder('bench-plugin'),
    agent: 'director',
    env: heretekEnv,
    config: { plugin: [PLUGIN_URL] },
    message: sessionScript(''),
  });
  const plain = await record({
    project: temporaryFolder('bench-plain'),
    agent: 'director',
    env: {},
    config: { agent: plainAgents(), mcp: stdioBroker('staff-backend') },
    message: sessionScript('heretek-lazy-broker_'),
  });
  const report = (recorded: Recorded) => {
    const bodies = agentRequests(recorded.requests).map((r) => r.body);
    const cache = emulateAnthropicCache(bodies, { countTokens });
    return {
      requests: bodies.length,
      inputTokens: cache.input,
      readTokens: cache.read,
      writtenTokens: cache.written,
      readShare: Math.round(cache.readShare * 1000) / 1000,
      firstRequestPerRole: ROLE_NAMES.map((role) => {
        const index = bodies.findIndex((b) =>
          JSON.stringify(b.system).includes(`# Role: ${role}\\n`),
        );
        const r = cache.requests[index];
        return {
          role,
          readShare:
            r === undefined
              ? null
              : Math.round((r.read / r.input) * 1000) / 1000,
        };
      }),
    };
  };
  results.session = {
    plugin: report(withPlugin),
    plainPrompts: report(plain),
  };
  results.calls = {
    pluginMedianMs: median(callLatencyMs(withPlugin, '')),
    pluginCalls: callLatencyMs(withPlugin, '').length,
    stdioBrokerMedianMs: median(callLatencyMs(plain, 'heretek-lazy-broker_')),
    stdioBrokerCalls: callLatencyMs(plain, 'heretek-lazy-broker_').length,
  };
  console.log(JSON.stringify(results.session, null, 2));
  console.log(JSON.stringify(results.calls, null, 2));
}, 1_500_000);

it('first request with 527 LiveMCPBench tools: behind the plugin and as a direct MCP server; start-up and memory', async () => {
  const firstTokens = (recorded: Recorded) => {
    const body = agentRequests(recorded.requests)[0]!.body;
    return {
      tools: (body.tools as unknown[]).length,
      inputTokens: emulateAnthropicCache([body], { countTokens }).input,
    };
  };
  // Three rounds, the four set-ups interleaved: start-up and memory are medians.
  const variants = {
    alone: { env: {}, config: {} },
    plugin: { env: heretekEnv, config: { plugin: [PLUGIN_URL] } },
    direct: {
      env: {},
      config: { mcp: { live: { type: 'remote', url: `${backends.url}/mcp` } } },
    },
    stdioBroker: { env: {}, config: { mcp: stdioBroker('director') } },
  };
  const rounds: Array<Record<string, Recorded>> = [];
  for (let round = 0; round < 3; round++) {
    const runs: Record<string, Recorded> = {};
    for (const [name, variant] of Object.entries(variants)) {
      runs[name] = await record({
        project: temporaryFolder(`bench-${name}`),
        ...variant,
        message: 'hello',
      });
    }
    rounds.push(runs);
  }
  results.firstRequest = Object.fromEntries(
    Object.keys(variants).map((name) => [name, firstTokens(rounds[0]![name]!)]),
  );
  results.startup = Object.fromEntries(
    Object.keys(variants).map((name) => {
      const runs = rounds.map((r) => r[name]!);
      return [
        name,
        {
          firstRequestMsMedian: median(runs.map(startupMs)),
          firstRequestMs: runs.map(startupMs),
          peakRssMiBMedian: mib(
            median(runs.map((r) => r.run.peakRssBytes ?? 0)),
          ),
          peakRssMiB: runs.map((r) => mib(r.run.peakRssBytes)),
        },
      ];
    }),
  );
  console.log(JSON.stringify(results.firstRequest, null, 2));
  console.log(JSON.stringify(results.startup, null, 2));
}, 1_500_000);

// `pnpm bench`: the plugin in the real OpenCode against loopback stand-ins.
//
// 1. A scripted multi-agent session: director hands work to each of the five
//    other roles through the task tool; each does a search, an inspect and a
//    call through the meta-tools. Anthropic's prompt caching is emulated over
//    the recorded requests (see the broker's test fixture
//    apps/broker/src/__fixtures__/anthropic-cache.ts), with the plugin and
//    with the same six role prompts set as plain OpenCode agent prompts
//    beside the stdio broker as an MCP server.
// 2. The first request's input tokens with the 527 LiveMCPBench tools served
//    by a loopback MCP server: behind the plugin, and as a direct MCP server.
// 3. Start-up (spawn to the first model request), peak memory of OpenCode and
//    its children, and the time from a meta-tool call's answer to the request
//    that carries its result, for the plugin, the stdio broker and OpenCode
//    alone, and OpenCode's own Code Mode (OPENCODE_EXPERIMENTAL_CODE_MODE=1 in
//    1.18.33) in front of the same tools as a direct MCP server. Each
//    variant's first-request input tokens too.
// 4. Search quality: `tools.$codemode.search` (driven through Code Mode's
//    `execute` tool, one script running every query) against the broker's
//    search, nDCG@10 on LiveMCPBench (95 tasks, 527 tools) and MetaTool
//    (1,960 short requests, 199 tools), both served by the loopback MCP server.
//
// Token counts are o200k_base estimates (js-tiktoken) of each block's JSON,
// the same counter for every variant. Runs are sequential.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLE_NAMES, assemblePrefixCachedPrompt } from '@heretek/prefix';
import { getEncoding } from 'js-tiktoken';
import { openBroker, readBrokerSetup } from '@heretek/broker';
import { afterAll, beforeAll, it } from 'vitest';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from '#broker-fixtures/mcp-backends.js';
import { emulateAnthropicCache } from '#broker-fixtures/anthropic-cache.js';
import {
  agentRequests,
  delegationLine,
  scriptLine,
  startModelStandIn,
  type RecordedRequest,
} from '#broker-fixtures/model-stand-in.js';
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

/** A JSON Lines file of the catalog's vendored benchmark sets. */
function benchData<T>(set: string, file: string): T[] {
  return readFileSync(
    join(PACKAGE_ROOT, `../catalog-lab/data/${set}/${file}`),
    'utf8',
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}

const LIVE = benchData<LiveTool>('livemcpbench', 'tools.jsonl');

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
const RESULTS = join(PACKAGE_ROOT, 'bench/results.json');
/** The figures of the last run of each part: a run of some parts (`-t`) keeps the others'. */
const results: Record<string, unknown> = existsSync(RESULTS)
  ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
  : {};

beforeAll(async () => {
  ({ backends, env: heretekEnv } = await serveSet(LIVE, {
    serverOf: (tool) => tool.server,
    state: 'bench-state',
  }));
}, 120_000);

afterAll(async () => {
  await backends?.close();
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written ${RESULTS}`);
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
    scriptLine(`${prefix}${name}`, input);
  const tools = scriptTools();
  return ROLE_NAMES.filter((role) => role !== 'director')
    .map((role, i) => {
      const tool = tools[i]!;
      const work = [
        call('mcp_search_tools', { query: tool.query, limit: 5 }),
        call('mcp_inspect_schema', { name: tool.name }),
        call('mcp_call_tool', { name: tool.name, arguments: tool.args }),
      ].join('\n');
      return delegationLine({ tool: 'task', role, prompt: work });
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

/** A session's requests under the emulated Anthropic cache: the totals, and each role's first request. */
function sessionReport(recorded: Recorded) {
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
          r === undefined ? null : Math.round((r.read / r.input) * 1000) / 1000,
      };
    }),
  };
}

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
  results.session = {
    plugin: sessionReport(withPlugin),
    plainPrompts: sessionReport(plain),
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

/** The input tokens and tools of a run's first agent request. */
const firstTokens = (recorded: Recorded) => {
  const body = agentRequests(recorded.requests)[0]!.body;
  return {
    tools: (body.tools as unknown[]).length,
    inputTokens: emulateAnthropicCache([body], { countTokens }).input,
  };
};

type Variant = Pick<Parameters<typeof runOpenCode>[0], 'env' | 'config'>;

/**
 * Five rounds of `hello` runs, the variants interleaved in each round:
 * start-up (spawn to the first model request) and peak memory, medians with
 * the five runs, and the plugin's against OpenCode alone.
 */
async function startupRounds(line: 1 | 2, variants: Record<string, Variant>) {
  const rounds: Array<Record<string, Recorded>> = [];
  for (let round = 0; round < 5; round++) {
    const runs: Record<string, Recorded> = {};
    for (const [name, variant] of Object.entries(variants))
      runs[name] = await record({
        line,
        project: temporaryFolder(`bench-v${line}-${name}`),
        ...variant,
        message: 'hello',
      });
    rounds.push(runs);
  }
  const startup = Object.fromEntries(
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
  ) as Record<
    string,
    {
      firstRequestMsMedian: number;
      firstRequestMs: number[];
      peakRssMiBMedian: number;
      peakRssMiB: number[];
    }
  >;
  const pluginAgainstAlone = {
    firstRequestRatio:
      Math.round(
        (startup.plugin!.firstRequestMsMedian /
          startup.alone!.firstRequestMsMedian) *
          100,
      ) / 100,
    peakRssDifferenceMiB: mib(
      (startup.plugin!.peakRssMiBMedian - startup.alone!.peakRssMiBMedian) *
        1024 *
        1024,
    ),
  };
  return { rounds, startup, pluginAgainstAlone };
}

it('first request with 527 LiveMCPBench tools: behind the plugin and as a direct MCP server; start-up and memory', async () => {
  const { rounds, startup, pluginAgainstAlone } = await startupRounds(1, {
    alone: { env: {}, config: {} },
    plugin: { env: heretekEnv, config: { plugin: [PLUGIN_URL] } },
    direct: {
      env: {},
      config: { mcp: { live: { type: 'remote', url: `${backends.url}/mcp` } } },
    },
    stdioBroker: { env: {}, config: { mcp: stdioBroker('director') } },
    codeMode: {
      env: { OPENCODE_EXPERIMENTAL_CODE_MODE: '1' },
      config: { mcp: { live: { type: 'remote', url: `${backends.url}/mcp` } } },
    },
  });
  results.firstRequest = Object.fromEntries(
    Object.keys(startup).map((name) => [name, firstTokens(rounds[0]![name]!)]),
  );
  results.startup = startup;
  results.pluginAgainstAlone = pluginAgainstAlone;
  console.log(JSON.stringify(results.firstRequest, null, 2));
  console.log(JSON.stringify(results.startup, null, 2));
  console.log(JSON.stringify(results.pluginAgainstAlone, null, 2));
}, 1_500_000);

type Query = { id: string; query: string; relevant: string[] };

/** A set's tool name (`server__tool`) as the loopback gateway's multiplexed name. */
const gatewayName = (name: string) => {
  const cut = name.indexOf('__');
  return `${targetOf(name.slice(0, cut))}_${name.slice(cut + 2)}`;
};

/** nDCG@10 with binary relevance from the 1-based ranks of the relevant hits. */
function ndcgAt10(ranks: number[], relevant: number): number {
  const gain = (rank: number) => 1 / Math.log2(rank + 1);
  const ideal = Array.from({ length: Math.min(relevant, 10) }, (_, i) =>
    gain(i + 1),
  ).reduce((a, b) => a + b, 0);
  return (
    ranks.filter((r) => r <= 10).reduce((sum, r) => sum + gain(r), 0) / ideal
  );
}

const mean = (values: number[]) =>
  Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;

/**
 * The `execute` script that runs Code Mode's search for each query and
 * returns the ranks of the relevant tools in its top 10 (`;` between queries).
 */
function codeModeScript(queries: Query[], line: 1 | 2): string {
  const pairs = queries.map((q) => [q.query, q.relevant.map(gatewayName)]);
  // OpenCode 1: `tools.$codemode.search`, a promise; OpenCode 2: `search`, synchronous.
  const search = line === 1 ? 'await tools.$codemode.search' : 'search';
  return `const queries = ${JSON.stringify(pairs)};
const out = [];
for (const [query, relevant] of queries) {
  const ranks = [];
  const result = ${search}({ query, limit: 10 });
  for (let i = 0; i < result.items.length && i < 10; i++) {
    const m = /^tools\\.live(?:\\.(.+)|\\["(.+)"\\])$/.exec(result.items[i].path);
    if (m && relevant.includes(m[1] ?? m[2])) ranks.push(i + 1);
  }
  out.push(ranks.join(","));
}
return out.join(";");`;
}

/** The `@tool execute` line of a script: at most about 40 kB, so the message stays under the 128 kB limit of one argument. */
const executeLine = (queries: Query[], line: 1 | 2) =>
  scriptLine('execute', { code: codeModeScript(queries, line) });

/** The queries in runs whose `execute` line fits in one command-line argument. */
function codeModeRuns(queries: Query[], line: 1 | 2): Query[][] {
  const runs: Query[][] = [[]];
  for (const query of queries) {
    const current = runs.at(-1)!;
    if (
      current.length > 0 &&
      executeLine([...current, query], line).length > 40_000
    )
      runs.push([query]);
    else current.push(query);
  }
  return runs;
}

/** Code Mode's search in the real OpenCode, one `execute` script per run: the ranks of each query's relevant tools. */
async function codeModeRanks(
  url: string,
  queries: Query[],
  line: 1 | 2,
): Promise<number[][]> {
  const ranks: number[][] = [];
  for (const run of codeModeRuns(queries, line)) {
    const recorded = await record({
      line,
      project: temporaryFolder('bench-codemode-search'),
      ...(line === 1
        ? {
            env: { OPENCODE_EXPERIMENTAL_CODE_MODE: '1' },
            config: { mcp: { live: { type: 'remote', url } } },
            message: executeLine(run, line),
          }
        : {
            env: {},
            config: { mcp: { servers: { live: { type: 'remote', url } } } },
            message: `${WAIT_FOR_MCP}\n${executeLine(run, line)}`,
          }),
    });
    const result = toolResultTexts(agentRequests(recorded.requests).at(-1)!);
    const cells = (result.at(-1) ?? '').split(';');
    if (
      cells.length !== run.length ||
      cells.some((cell) => !/^(\d+(,\d+)*)?$/.test(cell))
    )
      throw new Error(`Code Mode answered ${result.join('\n').slice(0, 2000)}`);
    for (const cell of cells)
      ranks.push(cell === '' ? [] : cell.split(',').map(Number));
  }
  return ranks;
}

/** The tool results a request carries, as text. */
function toolResultTexts(request: RecordedRequest): string[] {
  return (request.body.messages as Array<{ content: unknown }>).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<{ type: string; content?: unknown }>)
          .filter((b) => b.type === 'tool_result')
          .map((b) => String(b.content))
      : [],
  );
}

/** The broker's search over the same backends: the ranks of each query's relevant tools. */
async function brokerRanks(
  env: Record<string, string>,
  queries: Query[],
): Promise<number[][]> {
  const opened = await openBroker({
    setup: readBrokerSetup({ env }),
    log: () => {},
  });
  try {
    await opened.broker.discover();
    const ranks: number[][] = [];
    for (const query of queries) {
      const relevant = new Set(query.relevant.map(gatewayName));
      const result = await opened.broker.searchTools({
        query: query.query,
        limit: 10,
      });
      ranks.push(
        result.hits.flatMap((hit, i) =>
          relevant.has(hit.name) ? [i + 1] : [],
        ),
      );
    }
    return ranks;
  } finally {
    await opened.broker.close();
  }
}

/**
 * Serves a set's tools behind the loopback gateway, with a backends file for
 * the broker; a tool's server is its name's part before `__` unless
 * `serverOf` says otherwise.
 */
async function serveSet(
  tools: LiveTool[],
  {
    serverOf = (tool) => tool.name.slice(0, tool.name.indexOf('__')),
    state: stateName = 'bench-search-state',
  }: { serverOf?: (tool: LiveTool) => string; state?: string } = {},
): Promise<{ backends: McpBackends; env: Record<string, string> }> {
  const byTarget: Record<string, FixtureTool[]> = {};
  for (const tool of tools) {
    (byTarget[targetOf(serverOf(tool))] ??= []).push({
      name: tool.name.slice(tool.name.indexOf('__') + 2),
      description: tool.description,
      inputSchema: modernSchema(tool.inputSchema) as Record<string, unknown>,
    });
  }
  const served = await startMcpBackends(byTarget);
  const state = temporaryFolder(stateName);
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
  return {
    backends: served,
    env: {
      HERETEK_GATEWAY_URL: served.url,
      HERETEK_BACKENDS_FILE: backendsFile,
      HERETEK_PINS_FILE: join(state, 'pins.json'),
      HERETEK_PIN_POLICY: 'off',
      HERETEK_USAGE_FILE: 'off',
    },
  };
}

/** Code Mode's search in OpenCode `line` against the broker's, nDCG@10 on both sets. */
async function searchQuality(line: 1 | 2): Promise<Record<string, unknown>> {
  const quality: Record<string, unknown> = {};
  for (const set of ['livemcpbench', 'metatool']) {
    const queries = benchData<Query>(set, 'queries.jsonl');
    const served = await serveSet(benchData<LiveTool>(set, 'tools.jsonl'));
    try {
      const score = (ranks: number[][]) =>
        mean(ranks.map((r, i) => ndcgAt10(r, queries[i]!.relevant.length)));
      quality[set] = {
        queries: queries.length,
        codeModeNdcg10: score(
          await codeModeRanks(`${served.backends.url}/mcp`, queries, line),
        ),
        brokerNdcg10: score(await brokerRanks(served.env, queries)),
      };
    } finally {
      await served.backends.close();
    }
  }
  console.log(JSON.stringify(quality, null, 2));
  return quality;
}

it("search quality: Code Mode's search against the broker's, nDCG@10 on LiveMCPBench and MetaTool", async () => {
  results.searchQuality = await searchQuality(1);
}, 1_800_000);

// OpenCode 2 (2.1.2, `run --standalone`). The first model request leaves
// before a configured MCP server has connected (its tools, or Code Mode's
// catalog of them, are missing from it); a run that must see them first
// waits in a shell call until OpenCode's log says the server connected.

/** A shell call that returns once OpenCode 2's log says an MCP server connected (at most 60 s). */
const WAIT_FOR_MCP = scriptLine('shell', {
  description: 'wait for the MCP server',
  command:
    'for i in $(seq 600); do grep -q "mcp connected" "$XDG_DATA_HOME/opencode/log/opencode.log" && exit 0; sleep 0.1; done; exit 1',
});

/** The director's script in OpenCode 2: the same work handed out through the subagent tool. */
function sessionScriptV2(): string {
  const tools = scriptTools();
  return ROLE_NAMES.filter((role) => role !== 'director')
    .map((role, i) => {
      const tool = tools[i]!;
      const prompt = [
        scriptLine('mcp_search_tools', { query: tool.query, limit: 5 }),
        scriptLine('mcp_inspect_schema', { name: tool.name }),
        scriptLine('mcp_call_tool', { name: tool.name, arguments: tool.args }),
      ].join('\n');
      return scriptLine('subagent', {
        agent: role,
        description: `work for ${role}`,
        prompt,
      });
    })
    .join('\n');
}

/** The MCP server of the 527 tools in OpenCode 2's configuration, behind Code Mode unless `codemode` is false. */
const liveServer = (codemode: boolean) => ({
  mcp: {
    servers: { live: { type: 'remote', url: `${backends.url}/mcp`, codemode } },
  },
});

const stdioBrokerV2 = () => ({
  mcp: {
    servers: {
      'heretek-lazy-broker': {
        type: 'local',
        command: ['node', BROKER_BIN],
        environment: { ...heretekEnv, HERETEK_BROKER_ROLE: 'director' },
        codemode: false,
      },
    },
  },
});

it('OpenCode 2: multi-agent session: share of input read from the emulated Anthropic cache', async () => {
  const recorded = await record({
    line: 2,
    project: temporaryFolder('bench-v2-plugin'),
    agent: 'director',
    env: heretekEnv,
    config: { plugins: [PACKAGE_ROOT] },
    message: sessionScriptV2(),
  });
  const openCode2 = (results.openCode2 ??= {}) as Record<string, unknown>;
  openCode2.session = sessionReport(recorded);
  console.log(JSON.stringify(openCode2.session, null, 2));
}, 1_500_000);

it('OpenCode 2: start-up and memory with 70 backends behind the plugin; the request that first carries 527 tools behind one MCP server', async () => {
  const { rounds, startup, pluginAgainstAlone } = await startupRounds(2, {
    alone: { env: {}, config: {} },
    plugin: { env: heretekEnv, config: { plugins: [PACKAGE_ROOT] } },
  });
  const firstRequest: Record<string, unknown> = {
    alone: { firstRequest: firstTokens(rounds[0]!.alone!) },
    plugin: { firstRequest: firstTokens(rounds[0]!.plugin!) },
  };
  const carrying = {
    codeMode: { env: {}, config: liveServer(true) },
    direct: { env: {}, config: liveServer(false) },
    stdioBroker: { env: {}, config: stdioBrokerV2() },
  };
  for (const [name, variant] of Object.entries(carrying)) {
    const recorded = await record({
      line: 2,
      project: temporaryFolder(`bench-v2-tokens-${name}`),
      ...variant,
      message: WAIT_FOR_MCP,
    });
    const after = agentRequests(recorded.requests)[1]!.body;
    firstRequest[name] = {
      firstRequest: firstTokens(recorded),
      afterConnecting: {
        tools: (after.tools as unknown[]).length,
        inputTokens: emulateAnthropicCache([after], { countTokens }).input,
      },
    };
  }
  const openCode2 = (results.openCode2 ??= {}) as Record<string, unknown>;
  openCode2.startup = startup;
  openCode2.pluginAgainstAlone = pluginAgainstAlone;
  openCode2.firstRequest = firstRequest;
  console.log(JSON.stringify(openCode2, null, 2));
}, 1_500_000);

it("OpenCode 2: search quality: Code Mode's search against the broker's, nDCG@10 on LiveMCPBench and MetaTool", async () => {
  const openCode2 = (results.openCode2 ??= {}) as Record<string, unknown>;
  openCode2.searchQuality = await searchQuality(2);
}, 1_800_000);

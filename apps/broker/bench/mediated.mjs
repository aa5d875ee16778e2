// Broker-mediated against direct: 500 sequential calls of a trivial loopback
// tool (`echo` on target `core` of the stand-in gateway), once with the MCP SDK
// client straight to the gateway and once through the built broker over stdio
// (`mcp_call_tool` -> `core_echo`). Variants run interleaved in rounds so a
// loaded machine weighs on all of them alike. The other rows split the extra
// time into its parts:
//   raw-stdio-echo     the pipe hop alone (a child that echoes JSON-RPC lines)
//   sdk-stdio-echo     pipe + the SDK's stdio server handling one tool call
//   broker-no-gateway  pipe + SDK server + broker work that never leaves the
//                      process (mcp_inspect_schema on a catalogued tool)
//   broker-raw         the broker call path again, from a bare JSON-RPC peer
//                      instead of the SDK client (client-side cost)
//   gateway-client     the broker's own GatewayClient in this process, straight
//                      to the gateway (its HTTP client against the SDK's)
//   sdk-proxy          a do-nothing SDK v2 stdio proxy (fixtures/sdk-proxy.mjs:
//                      `mcp_call_tool` passed to the gateway with an SDK
//                      client, nothing else), from the SDK client and from
//                      the bare peer: the floor a broker call is held to
//
//   CALLS=500 ROUNDS=10 node bench/mediated.mjs
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { GatewayClient } from '@heretek/gateway-client';
import { DEFAULT_TARGETS } from './gateway.mjs';
import {
  benchOptions,
  BROKER_CLI,
  StdioPeer,
  machine,
  percentile,
  processCpuMs,
  round,
  spawnGateway,
  BENCH_STATE_HOME,
} from './lib.mjs';

const { CALLS, ROUNDS, WARMUP } = benchOptions({
  CALLS: 500,
  ROUNDS: 10,
  WARMUP: 50,
});
const fixture = (name) =>
  fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

// The gateway runs in its own process, as a real one does, so the direct path
// crosses one process boundary and the mediated path two.
const gateway = await spawnGateway(
  Object.fromEntries(DEFAULT_TARGETS.map((t) => [t, {}])),
);
const brokerEnv = {
  HERETEK_GATEWAY_URL: gateway.url,
  HERETEK_GATEWAY_MODE: 'per-target',
  HERETEK_BROKER_ROLE: 'director',
};

const check = (text, token, variant) => {
  if (text !== token)
    throw new Error(
      `${variant}: expected ${token}, got ${JSON.stringify(text)}`,
    );
};
const textOf = (result) => result?.content?.[0]?.text;

// --- the variants: each is { name, call(token) -> Promise<void>, close() } ---
async function direct() {
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/core`)),
  );
  return {
    name: 'direct (SDK client -> gateway)',
    call: async (token) =>
      check(
        textOf(await client.callTool({ name: 'echo', arguments: { token } })),
        token,
        'direct',
      ),
    close: () => client.close(),
  };
}

async function sdkStdio(name, script) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script],
    env: {
      PATH: process.env.PATH ?? '',
      XDG_STATE_HOME: BENCH_STATE_HOME,
      ...brokerEnv,
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-broker', version: '1.0.0' });
  await client.connect(transport);
  // An agent searches before it calls. The first search waits for start-up
  // discovery only up to a bound, so search until the tool is catalogued.
  for (let i = 0; script === BROKER_CLI; i++) {
    const result = await client.callTool({
      name: 'mcp_search_tools',
      arguments: { query: 'echo a token back' },
    });
    if (textOf(result)?.includes('core_echo')) break;
    if (i > 600)
      throw new Error('discovery did not catalogue core_echo in 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    call: async (token) => {
      const result = await client.callTool({
        name: 'mcp_call_tool',
        arguments: { name: 'core_echo', arguments: { token } },
      });
      check(textOf(result), token, name);
    },
    close: () => client.close(),
    pid: transport.pid,
  };
}

async function rawPeer(name, args, env, params) {
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? '',
      XDG_STATE_HOME: BENCH_STATE_HOME,
      ...env,
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const peer = new StdioPeer(child);
  if (!args[0].endsWith('raw-echo.mjs')) await peer.initialize();
  if (args[0] === BROKER_CLI) await peer.awaitDiscovery(['core_echo']);
  return {
    name,
    call: async (token) => {
      const reply = await peer.request('tools/call', params(token));
      if (reply.error)
        throw new Error(`${name}: ${JSON.stringify(reply.error)}`);
      if (params(token).name === 'mcp_call_tool')
        check(textOf(reply.result), token, name);
    },
    close: () => peer.close(),
    pid: child.pid,
  };
}

async function gatewayClient() {
  const client = new GatewayClient({
    url: gateway.url,
    mode: 'per-target',
    role: 'director',
    timeoutMs: 30_000,
  });
  return {
    name: 'gateway-client (broker HTTP client, in process)',
    call: async (token) =>
      check(
        textOf(
          await client.callTool({
            target: 'core',
            tool: 'echo',
            arguments: { token },
          }),
        ),
        token,
        'gateway-client',
      ),
    close: () => client.close(),
  };
}

const callParams = (token) => ({
  name: 'mcp_call_tool',
  arguments: { name: 'core_echo', arguments: { token } },
});
const variants = [
  await direct(),
  await sdkStdio('broker (SDK client -stdio-> broker -> gateway)', BROKER_CLI),
  await rawPeer('raw-stdio-echo', [fixture('raw-echo.mjs')], {}, callParams),
  await rawPeer(
    'sdk-stdio-echo',
    [fixture('sdk-echo-server.mjs')],
    {},
    callParams,
  ),
  await rawPeer(
    'broker-no-gateway (mcp_inspect_schema)',
    [BROKER_CLI],
    brokerEnv,
    () => ({
      name: 'mcp_inspect_schema',
      arguments: { name: 'core_echo' },
    }),
  ),
  await rawPeer(
    'broker-raw (bare JSON-RPC peer -> broker -> gateway)',
    [BROKER_CLI],
    brokerEnv,
    callParams,
  ),
  await gatewayClient(),
  await sdkStdio(
    'sdk-proxy (SDK client -stdio-> do-nothing SDK proxy -> gateway)',
    fixture('sdk-proxy.mjs'),
  ),
  await rawPeer(
    'sdk-proxy-raw (bare JSON-RPC peer -> do-nothing SDK proxy -> gateway)',
    [fixture('sdk-proxy.mjs')],
    brokerEnv,
    callParams,
  ),
];

// Warm-up: connections, sessions, discovery, JIT.
for (const v of variants)
  for (let i = 0; i < WARMUP; i++) await v.call(`warm-${i}`);

const samples = variants.map(() => []);
// CPU time spent per variant in each process: this one (the client), the
// variant's child (broker or echo peer) and the gateway.
const cpu = variants.map(() => ({ client: 0, child: 0, gateway: 0 }));
const perRound = Math.ceil(CALLS / ROUNDS);
let token = 0;
for (let r = 0; r < ROUNDS; r++) {
  for (const [j, v] of variants.entries()) {
    const before = {
      client: process.cpuUsage(),
      child: v.pid ? processCpuMs(v.pid) : 0,
      gateway: processCpuMs(gateway.pid),
    };
    for (let i = 0; i < perRound && samples[j].length < CALLS; i++) {
      const t = `t${token++}`;
      const start = performance.now();
      await v.call(t);
      samples[j].push(performance.now() - start);
    }
    const used = process.cpuUsage(before.client);
    cpu[j].client += (used.user + used.system) / 1000;
    cpu[j].child += v.pid ? processCpuMs(v.pid) - before.child : 0;
    cpu[j].gateway += processCpuMs(gateway.pid) - before.gateway;
  }
}
for (const v of variants) await v.close();
await gateway.close();

const rows = variants.map((v, j) => ({
  variant: v.name,
  calls: samples[j].length,
  p50Ms: round(percentile(samples[j], 50), 3),
  p99Ms: round(percentile(samples[j], 99), 3),
  meanMs: round(samples[j].reduce((a, b) => a + b, 0) / samples[j].length, 3),
  cpuMsPerCall: {
    client: round(cpu[j].client / samples[j].length, 3),
    ...(v.pid ? { child: round(cpu[j].child / samples[j].length, 3) } : {}),
    gateway: round(cpu[j].gateway / samples[j].length, 3),
  },
}));
const [
  d,
  b,
  rawEcho,
  sdkEcho,
  noGateway,
  brokerRaw,
  inProcess,
  proxy,
  proxyRaw,
] = rows;
const ms = (n) => round(n, 3);
// Where the mediated call's time goes, from the p50s above (each part is a
// difference of two rows, so on a loaded machine they are estimates).
const breakdown = {
  pipeHopMs: rawEcho.p50Ms,
  sdkStdioServerMs: ms(sdkEcho.p50Ms - rawEcho.p50Ms),
  brokerWorkWithoutGatewayMs: ms(noGateway.p50Ms - sdkEcho.p50Ms),
  brokerGatewayClientCallMs: inProcess.p50Ms,
  callPipelineRestMs: ms(brokerRaw.p50Ms - noGateway.p50Ms - inProcess.p50Ms),
  sdkStdioClientMs: ms(b.p50Ms - brokerRaw.p50Ms),
  brokerCpuMsPerCall: b.cpuMsPerCall.child,
  brokerCpuInItsGatewayClientMsPerCall: inProcess.cpuMsPerCall.client,
};
console.log(
  JSON.stringify(
    {
      bench: 'mediated-vs-direct',
      machine: machine(),
      callsPerVariant: CALLS,
      rows,
      ratio: {
        p50: round(b.p50Ms / d.p50Ms, 2),
        p99: round(b.p99Ms / d.p99Ms, 2),
        target: 1.2,
      },
      againstProxy: {
        p50: round(b.p50Ms / proxy.p50Ms, 3),
        p50BarePeer: round(brokerRaw.p50Ms / proxyRaw.p50Ms, 3),
        target: 1.05,
      },
      breakdown,
    },
    null,
    2,
  ),
);

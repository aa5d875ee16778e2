// Discovery at registry scale: BACKENDS targets x TOOLS tools behind the
// stand-in gateway (its own process, loopback). In one run:
//
// - a plain SDK client lists every route, CONCURRENCY at a time: the floor;
// - the broker from a fresh state folder: time from spawn until every
//   backend is searchable, while a probe sends mcp_inspect_schema every
//   100 ms (every request's round trip is recorded; "slow" is over 1 s);
// - broker RSS (peak and current) once discovery is done, and after the searches;
// - search round trips (p50/p99) over the full catalog;
// - a backend that says its tools changed (tools/list_changed on its
//   session's stream): time until the new tool is searchable;
// - the broker restarted on the same state folder (index cache) and the same
//   listings: time from spawn until every backend is searchable.
//
//   node --expose-gc bench/scale.mjs                      # 1,000 x 100
//   BACKENDS=100 TOOLS=50 node --expose-gc bench/scale.mjs
//   ONLY=restart node --expose-gc bench/scale.mjs         # first start, re-listing, restart
//   ONLY=fresh node --expose-gc bench/scale.mjs           # plain client, first start, searches
//
// ONLY=restart skips the plain client and the search round trips; ONLY=fresh
// skips the re-listing and the restart. STATE_DIR
// keeps the state folder (pins, index cache) there, and a later run on it
// skips the first start. The broker runs with bench/fixtures/loop-blocks.mjs
// preloaded: the longest event-loop block (CPU ms) while the searches ran and
// after discovery are in the figures. LOG=1 prints the broker's stderr (each
// block of 5 ms or more among it) with the time since spawn; CPU_PROF=<dir> writes each broker's CPU profile there;
// BROKER_NODE_ARGS passes flags to the broker (split at spaces), e.g.
// `--max-semi-space-size=8` or `--heapsnapshot-signal=SIGUSR2`; PIN_POLICY
// sets its HERETEK_PIN_POLICY (`off` leaves the trust layer's pins out).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import * as lib from './lib.mjs';

const { percentile, round } = lib;
const ONLY_RESTART = process.env.ONLY === 'restart';
const ONLY_FRESH = process.env.ONLY === 'fresh';
lib.requireBuilt();
/** Options from the environment, with their defaults. */
const { BACKENDS, TOOLS, CONCURRENCY, TIMEOUT_MS, SEARCHES } =
  Object.fromEntries(
    Object.entries({
      BACKENDS: 1000,
      TOOLS: 100,
      CONCURRENCY: 16,
      TIMEOUT_MS: 300_000,
      SEARCHES: 300,
    }).map(([name, fallback]) => [name, lib.intFromEnv(name, fallback)]),
  );
/** Extra Node flags for the broker, split at spaces. */
const BROKER_NODE_ARGS = (process.env.BROKER_NODE_ARGS ?? '')
  .split(' ')
  .filter(Boolean);
/** Preloaded into the broker: reports each stretch of CPU time the event loop was held. */
const LOOP_BLOCKS = new URL('./fixtures/loop-blocks.mjs', import.meta.url).href;
/** CPU time (ms) of the longest event-loop block reported in `stderr` from offset `from` on. */
const longestBlock = (stderr, from = 0) =>
  Math.max(
    0,
    ...[...stderr.slice(from).matchAll(/loop-block ([\d.]+) ms cpu/g)].map(
      (m) => Number(m[1]),
    ),
  );
/** Targets per group word: one search (limit 200) finds a whole group's echo tools. */
const GROUP = 150;

const LIVE = 'live';
// The live target comes first, so its session is among the first to open a
// standalone stream (the broker holds HERETEK_GATEWAY_MAX_STREAMS of them,
// default 100; MAX_STREAMS sets it here).
const targets = [
  LIVE,
  ...Array.from(
    { length: BACKENDS - 1 },
    (_, i) => `s${String(i).padStart(4, '0')}`,
  ),
];
/** A word no other tool uses, one per group of targets: zqaa, zqab, ... */
const groupWord = (index) =>
  `zq${String.fromCharCode(97 + Math.floor(index / 26))}${String.fromCharCode(97 + (index % 26))}`;
const groups = new Map();
targets.forEach((target, i) => {
  const word = groupWord(Math.floor(i / GROUP));
  if (!groups.has(word)) groups.set(word, []);
  groups.get(word).push(target);
});
const gatewayTargets = Object.fromEntries(
  targets.map((target, i) => [
    target,
    {
      extraTools: TOOLS - 1,
      echoWord: groupWord(Math.floor(i / GROUP)),
      ...(target === LIVE ? { live: true } : {}),
    },
  ]),
);

const work =
  process.env.STATE_DIR ?? mkdtempSync(join(tmpdir(), 'heretek-bench-scale-'));
mkdirSync(work, { recursive: true });
const backendsFile = join(work, 'backends.json');
writeFileSync(
  backendsFile,
  JSON.stringify(
    targets.map((target) => ({ backend: target, target, profile: 'core' })),
  ),
);
const stateHome = join(work, 'state');
const prepared = existsSync(join(stateHome, 'heretek', 'index-cache.bin'));

/** The floor: a plain SDK client per route, CONCURRENCY routes at a time. */
async function plainClientListing(url) {
  const started = performance.now();
  let next = 0;
  let tools = 0;
  const worker = async () => {
    while (next < targets.length) {
      const target = targets[next++];
      const client = new Client({ name: 'bench-plain', version: '1.0.0' });
      // The SDK's 60 s request timeout is too short for a loaded machine.
      const timeout = { timeout: TIMEOUT_MS };
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp/${target}`)),
        timeout,
      );
      let cursor;
      do {
        const page = await client.listTools(
          cursor ? { cursor } : undefined,
          timeout,
        );
        tools += page.tools.length;
        cursor = page.nextCursor;
      } while (cursor);
      await client.close();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { ms: performance.now() - started, tools };
}

/** Times every request sent to the broker; "slow" ones waited over a second. */
function timed(broker, latencies) {
  return async (method, params) => {
    const sent = performance.now();
    // In the order sent: the first is the first operation.
    const slot = latencies.push(Number.NaN) - 1;
    const reply = await broker.request(method, params);
    latencies[slot] = performance.now() - sent;
    return reply;
  };
}

/** Sends mcp_inspect_schema through `send` every 100 ms until stopped. */
function inspectEvery100ms(send) {
  let done = false;
  const running = (async () => {
    while (!done) {
      await send('tools/call', {
        name: 'mcp_inspect_schema',
        arguments: { name: `${targets[0]}_echo` },
      });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: () => {
      done = true;
      return running;
    },
  };
}

const search = async (send, query, limit = 200) => {
  const reply = await send('tools/call', {
    name: 'mcp_search_tools',
    arguments: { query, limit },
  });
  if (reply.error) throw new Error(`search failed: ${JSON.stringify(reply)}`);
  return reply.result?.content?.map((c) => c.text ?? '').join('\n') ?? '';
};

/**
 * Spawns the broker and waits until every backend's echo tool is found by
 * its group's search, while a probe inspects a tool every 100 ms.
 */
async function untilSearchable(gatewayUrl, label) {
  const latencies = [];
  const started = performance.now();
  const broker = lib.spawnBroker(
    {
      HERETEK_GATEWAY_URL: gatewayUrl,
      HERETEK_BACKENDS_FILE: backendsFile,
      HERETEK_BROKER_ROLE: 'director',
      HERETEK_USAGE_FILE: 'off',
      HERETEK_GATEWAY_TIMEOUT_MS: '120000',
      XDG_STATE_HOME: stateHome,
      ...(process.env.MAX_STREAMS
        ? { HERETEK_GATEWAY_MAX_STREAMS: process.env.MAX_STREAMS }
        : {}),
      ...(process.env.PIN_POLICY
        ? { HERETEK_PIN_POLICY: process.env.PIN_POLICY }
        : {}),
    },
    {
      nodeArgs: [
        ...(process.env.CPU_PROF
          ? ['--cpu-prof', '--cpu-prof-dir', process.env.CPU_PROF]
          : []),
        '--import',
        LOOP_BLOCKS,
        ...BROKER_NODE_ARGS,
      ],
    },
  );
  // The broker's CPU time (user + system) when it logs that the index cache
  // is served: the work before the first answer over every cached tool,
  // which the machine's load stretches less than the wall time.
  let cpuMsUntilServed;
  let mainThreadCpuMsUntilServed;
  broker.child.stderr.on('data', (chunk) => {
    if (cpuMsUntilServed === undefined && /backends served from/.test(chunk)) {
      cpuMsUntilServed = lib.processCpuMs(broker.child.pid);
      mainThreadCpuMsUntilServed = mainThreadCpuMs(broker.child.pid);
    }
  });
  if (process.env.LOG === '1')
    broker.child.stderr.on('data', (chunk) => {
      const at = round((performance.now() - started) / 1000, 2);
      for (const line of String(chunk).split('\n'))
        if (line !== '') process.stderr.write(`${label} +${at}s ${line}\n`);
    });
  await broker.initialize();
  const send = timed(broker, latencies);
  const probe = inspectEvery100ms(send);
  const missing = new Map([...groups].map(([w, t]) => [w, new Set(t)]));
  const deadline = Date.now() + TIMEOUT_MS;
  while (missing.size > 0) {
    for (const [word, left] of missing) {
      const sentAt = performance.now();
      const text = await search(send, word);
      if (process.env.LOG === '1')
        process.stderr.write(
          `${label} +${round((sentAt - started) / 1000, 3)}s search "${word}" answered in ${round(performance.now() - sentAt, 1)} ms\n`,
        );
      for (const target of left)
        if (text.includes(`${target}_echo`)) left.delete(target);
      if (left.size === 0) missing.delete(word);
    }
    if (missing.size === 0) break;
    if (Date.now() > deadline) {
      await probe.stop();
      const left = [...missing.values()].reduce((n, s) => n + s.size, 0);
      process.stderr.write(broker.stderr().slice(-4000));
      throw new Error(
        `${label}: ${left} backends not searchable after ${TIMEOUT_MS} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const searchableMs = performance.now() - started;
  const mainThreadCpuMsUntilSearchable = mainThreadCpuMs(broker.child.pid);
  const stderrAtSearchable = broker.stderr().length;
  await probe.stop();
  return {
    broker,
    send,
    started,
    searchableMs,
    latencies,
    cpuMsUntilServed,
    mainThreadCpuMsUntilServed,
    mainThreadCpuMsUntilSearchable,
    stderrAtSearchable,
  };
}

/**
 * After a restart, once every backend is searchable: the rediscovery that
 * follows, until the broker logs that every backend was listed again. A
 * search every 250 ms and an inspect every 100 ms are timed meanwhile
 * (requests waiting over 1 s behind the rediscovery are counted), and the
 * broker's RSS is read once it is done.
 */
async function whileRediscovering({ broker, send }) {
  const started = performance.now();
  const listed = () =>
    /discovery: \d+\/\d+ backends listed.*/.exec(broker.stderr());
  const latencies = [];
  const measured = timed(broker, latencies);
  const probe = inspectEvery100ms(measured);
  const words = [...groups.keys()];
  for (let i = 0; !listed() && performance.now() - started < TIMEOUT_MS; i++) {
    await search(measured, words[i % words.length], 10);
    await new Promise((r) => setTimeout(r, 250));
  }
  await probe.stop();
  const rediscoveryMs = performance.now() - started;
  return {
    rediscoveryAfterSearchableMs: round(rediscoveryMs, 0),
    duringRediscovery: {
      requests: latencies.length,
      slowOver1s: latencies.filter((ms) => ms > 1_000).length,
      maxMs: latencies.length === 0 ? 0 : round(Math.max(...latencies), 1),
      p99Ms: latencies.length === 0 ? 0 : round(percentile(latencies, 99), 1),
    },
    rssAfterRediscovery: await rss(broker.child.pid),
    rediscoveryLine: listed()?.[0] ?? 'not within the timeout',
  };
}

/**
 * Round trips of the requests sent while discovery ran. The first operation
 * waits, by design, for start-up discovery (at most 3 s) or the index
 * cache's import, so it is shown apart from the rest.
 */
const requestFigures = ([first, ...rest]) => ({
  firstOperationMs: round(first, 1),
  laterRequests: rest.length,
  slowOver1s: rest.filter((ms) => ms > 1_000).length,
  maxMs: round(Math.max(...rest), 1),
  p99Ms: round(percentile(rest, 99), 1),
});

/**
 * Waits until every file exists and none has changed (size, modification
 * time) for `quietMs` (default 2 s), at most 120 s; resolves how long it
 * waited.
 */
async function filesSettled(files, quietMs = 2_000) {
  const { stat } = await import('node:fs/promises');
  const started = performance.now();
  const stamp = async () =>
    (
      await Promise.all(
        files.map((file) =>
          stat(file).then(
            (s) => `${s.size}:${s.mtimeMs}`,
            () => 'missing',
          ),
        ),
      )
    ).join(' ');
  let last = await stamp();
  let since = performance.now();
  while (performance.now() - started < 120_000) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await stamp();
    if (now !== last || now.includes('missing')) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) break;
  }
  return performance.now() - started;
}

/** CPU time (user + system) of a process's main thread so far, in ms, from /proc (Linux). */
function mainThreadCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Resident set of a running process in MB (current and peak), from /proc. */
async function rss(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const mb = (key) =>
    round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]) / 1024, 1);
  return { currentMb: mb('VmRSS'), peakMb: mb('VmHWM') };
}

const gateway = await lib.spawnGateway(gatewayTargets, {
  script: 'table-gateway.mjs',
});
try {
  const plain =
    ONLY_RESTART || prepared
      ? undefined
      : await plainClientListing(gateway.url);
  if (plain !== undefined)
    process.stderr.write(
      `bench scale: plain client listed ${plain.tools} tools in ${round(plain.ms, 0)} ms\n`,
    );
  const first = prepared
    ? undefined
    : await startAndRelist(gateway, {
        searches: !ONLY_RESTART,
        relist: !ONLY_FRESH,
      });

  const restarted = ONLY_FRESH
    ? undefined
    : await untilSearchable(gateway.url, 'restart');
  const rediscovery =
    restarted === undefined ? undefined : await whileRediscovering(restarted);
  // Backends whose listing changed are written to the index cache a second
  // after the rediscovery (the write itself takes seconds under load): let
  // that end, so a later run on STATE_DIR restarts on every backend.
  if (restarted !== undefined)
    await filesSettled([join(stateHome, 'heretek', 'index-cache.bin')], 8_000);
  const restartStderr = restarted?.broker.stderr() ?? '';
  await restarted?.broker.close(process.env.CPU_PROF ? 120_000 : undefined);

  console.log(
    JSON.stringify(
      {
        bench: 'scale',
        machine: lib.machine(),
        backends: BACKENDS,
        toolsPerBackend: TOOLS,
        ...(plain === undefined
          ? {}
          : { tools: plain.tools, plainClientListingMs: round(plain.ms, 0) }),
        ...(first === undefined ? {} : first.figures(plain)),
        ...(restarted === undefined
          ? {}
          : {
              restart: {
                searchableMs: round(restarted.searchableMs, 0),
                brokerCpuMsUntilCacheServed: restarted.cpuMsUntilServed,
                // The main thread's alone (worker threads left out): the
                // work on the way to the first answers.
                mainThreadCpuMs: {
                  untilCacheServed: restarted.mainThreadCpuMsUntilServed,
                  untilSearchable: restarted.mainThreadCpuMsUntilSearchable,
                },
                target: 2000,
                met: restarted.searchableMs <= 2000,
                whileDiscovering: requestFigures(restarted.latencies),
                ...rediscovery,
                cacheLine:
                  /index cache: .*/.exec(restartStderr)?.[0] ??
                  'no index cache line',
              },
            }),
      },
      null,
      2,
    ),
  );
} finally {
  await gateway.close();
  if (process.env.STATE_DIR === undefined)
    rmSync(work, { recursive: true, force: true });
}

/**
 * The broker from a fresh state folder until every backend is searchable,
 * its RSS, search round trips (unless `searches` is false) and a backend
 * re-listed through tools/list_changed; the broker is closed after, its
 * index cache written.
 */
async function startAndRelist(gateway, { searches, relist }) {
  const first = await untilSearchable(gateway.url, 'first start');
  process.stderr.write(
    `bench scale: broker searchable after ${round(first.searchableMs, 0)} ms\n`,
  );
  // Let discovery's last log lines settle and its background writes (the
  // pins file and the index cache) end, so the searches below measure the
  // broker after discovery.
  await new Promise((r) => setTimeout(r, 3_000));
  const settledMs = await filesSettled([
    join(stateHome, 'heretek', 'pins.json'),
    join(stateHome, 'heretek', 'index-cache.bin'),
  ]);
  const memory = await rss(first.broker.child.pid);
  const gatewayAfterDiscovery = await gateway.stats();

  const searchLatencies = [];
  const measured = timed(first.broker, searchLatencies);
  const queries = [
    'echo a token back',
    'placeholder tool 42',
    ...[...groups.keys()],
    `${targets[7]} placeholder`,
    'listing size tool',
  ];
  const blocksFrom = first.broker.stderr().length;
  const cpuBefore = lib.processCpuMs(first.broker.child.pid);
  const searchesStarted = performance.now();
  for (let i = 0; searches && i < SEARCHES; i++) {
    const sentAt = performance.now();
    await search(measured, queries[i % queries.length], 10);
    const ms = performance.now() - sentAt;
    if (process.env.LOG === '1' && ms > 20)
      process.stderr.write(
        `first start +${round((sentAt - first.started) / 1000, 3)}s search ${i} answered in ${round(ms, 1)} ms\n`,
      );
  }
  const searchesMs = performance.now() - searchesStarted;
  const searchCpuMs = lib.processCpuMs(first.broker.child.pid) - cpuBefore;
  const afterSearches = searches
    ? await rss(first.broker.child.pid)
    : undefined;
  const searchBlockMs = longestBlock(first.broker.stderr(), blocksFrom);

  // A backend says its tools changed: until the new tool is searchable.
  const changedAt = performance.now();
  if (relist) gateway.addTool(LIVE, 'fresh_quokka_counter');
  let relistedMs;
  for (; relist;) {
    const text = await search(first.send, 'fresh quokka counter', 10);
    if (text.includes(`${LIVE}_fresh_quokka_counter`)) {
      relistedMs = performance.now() - changedAt;
      break;
    }
    if (performance.now() - changedAt > 60_000) {
      relistedMs = Number.POSITIVE_INFINITY;
      process.stderr.write(
        'bench scale: the re-listed tool was not searchable within 60 s\n',
      );
      break;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  // The cache is written a second after the catalog's last change.
  await new Promise((r) => setTimeout(r, 2_500));
  const firstStderr = first.broker.stderr();
  await first.broker.close(process.env.CPU_PROF ? 120_000 : undefined);
  return {
    figures: (plain) => ({
      firstStart: {
        searchableMs: round(first.searchableMs, 0),
        ...(plain === undefined
          ? {}
          : {
              overPlainClient: round(first.searchableMs / plain.ms, 2),
              target: `<= 1.5 x plain + 3000 ms = ${round(1.5 * plain.ms + 3000, 0)} ms`,
              met: first.searchableMs <= 1.5 * plain.ms + 3000,
            }),
        whileDiscovering: requestFigures(first.latencies),
      },
      brokerRss: {
        ...memory,
        ...(afterSearches && { afterSearchesMb: afterSearches.currentMb }),
        targetMb: 400,
        met: (afterSearches ?? memory).currentMb <= 400,
      },
      gatewayAfterDiscovery,
      ...(searches
        ? {
            searchRoundTripMs: {
              afterWritesSettledMs: round(settledMs, 0),
              searches: SEARCHES,
              p50: round(percentile(searchLatencies, 50), 2),
              p99: round(percentile(searchLatencies, 99), 2),
              target: 20,
              // The broker's own CPU time per search (user + system, from
              // /proc) and its share of the searches' wall time: a p99 far
              // above the CPU per search is time spent waiting for a core.
              brokerCpuMsPerSearch: round(searchCpuMs / SEARCHES, 2),
              brokerCpuShare: round(searchCpuMs / searchesMs, 2),
              // The longest the event loop was held (CPU ms) while they ran.
              longestLoopBlockCpuMs: searchBlockMs,
            },
            // The longest the event loop was held (CPU ms) after discovery
            // made every backend searchable, writes of the index cache and
            // the pins file included.
            longestLoopBlockAfterSearchableCpuMs: longestBlock(
              firstStderr,
              first.stderrAtSearchable,
            ),
          }
        : {}),
      ...(relist
        ? {
            listChangedSearchableMs: Number.isFinite(relistedMs)
              ? round(relistedMs, 0)
              : 'not within 60 s',
          }
        : {}),
      discoveryLines: firstStderr
        .split('\n')
        .filter((l) => /discovery: \d+\/\d+ backends listed/.test(l)),
    }),
  };
}

// Cold start: spawn the built bin offline, pipeline initialize +
// notifications/initialized + tools/list on stdin, and time until the
// tools/list answer arrives. A minimal SDK v2 stdio server with one tool
// (bench/fixtures/sdk-echo-server.mjs), answering the same requests, and
// `node -e 0` run alternately in the same loop: the broker's ratio to the
// SDK server is the figure (target x1.1). Peak RSS comes from GNU time
// (`%M`) when /usr/bin/time exists.
//
//   node bench/cold-start.mjs            # 30 runs of each
//   RUNS=50 node bench/cold-start.mjs
//   BIN=path/to/cli.js node bench/cold-start.mjs   # another build
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import {
  benchOptions,
  BROKER_CLI,
  firstRequests,
  machine,
  offlineEnv,
  percentile,
  round,
} from './lib.mjs';

const { RUNS } = benchOptions({
  RUNS: 30,
});
/** The broker's cold start at most this many times the SDK server's (p50). */
const TARGET_RATIO = 1.1;
// BIN=<path>[,<path>...] measures other builds of the bin (e.g. an unbundled
// one) in the same interleaved loop, so a before/after shares the machine's load.
const BINS = (process.env.BIN || BROKER_CLI).split(',');
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const scratch = mkdtempSync(join(tmpdir(), 'broker-cold-'));

const REQUESTS = firstRequests('cold-start-bench');

function spawnMeasured(args, rssFile) {
  const env = offlineEnv();
  return GNU_TIME
    ? spawn(
        GNU_TIME,
        ['-f', '%M %U %S', '-o', rssFile, process.execPath, ...args],
        {
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      )
    : spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Peak RSS (MB) and CPU time (user + system, ms) of the child, from GNU time. */
function readUsage(file) {
  if (!GNU_TIME) return {};
  const [kb, user, sys] = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .pop()
    .split(' ')
    .map(Number);
  return { rssMb: kb / 1024, cpuMs: (user + sys) * 1000 };
}

/** `node -e 0`: spawn to exit. */
async function baseline(i) {
  const rssFile = join(scratch, `base-${i}`);
  const start = performance.now();
  const child = spawnMeasured(['-e', '0'], rssFile);
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  return { ms: performance.now() - start, ...readUsage(rssFile) };
}

const SDK_SERVER = fileURLToPath(
  new URL('./fixtures/sdk-echo-server.mjs', import.meta.url),
);

/**
 * A stdio server (the broker, or the SDK server with its `tools` tools):
 * spawn to the tools/list reply; then stdin closes and it exits.
 */
async function broker(bin, i, tools = 3) {
  const rssFile = join(scratch, `${tools}-${i}`);
  const start = performance.now();
  const child = spawnMeasured([bin], rssFile);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.write(REQUESTS);
  let buffer = '';
  let listed;
  const ms = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`no tools/list answer in 10 s; stderr:\n${stderr}`)),
      10_000,
    );
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      for (const line of buffer.split('\n').slice(0, -1)) {
        const message = JSON.parse(line);
        if (message.id === 2) {
          clearTimeout(timer);
          listed = message.result?.tools?.map((t) => t.name);
          resolve(performance.now() - start);
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) =>
      reject(
        new Error(`broker exited ${code} before answering; stderr:\n${stderr}`),
      ),
    );
  });
  child.stdin.end();
  await exited;
  if (listed?.length !== tools)
    throw new Error(`tools/list gave ${JSON.stringify(listed)}`);
  return { ms, ...readUsage(rssFile) };
}

const base = [];
const sdk = [];
const brk = BINS.map(() => []);
// One warm-up of each fills the page cache; it is not counted.
await baseline(-1);
await broker(SDK_SERVER, -1, 1);
for (const bin of BINS) await broker(bin, -1);
for (let i = 0; i < RUNS; i++) {
  base.push(await baseline(i));
  sdk.push(await broker(SDK_SERVER, i, 1));
  for (const [j, bin] of BINS.entries()) brk[j].push(await broker(bin, i));
}
rmSync(scratch, { recursive: true, force: true });

const summary = (runs) => {
  const ms = runs.map((r) => r.ms);
  const rss = runs.map((r) => r.rssMb).filter((x) => x !== undefined);
  const cpu = runs.map((r) => r.cpuMs).filter((x) => x !== undefined);
  return {
    p50Ms: round(percentile(ms, 50), 1),
    p95Ms: round(percentile(ms, 95), 1),
    minMs: round(Math.min(...ms), 1),
    cpuMsP50: cpu.length ? round(percentile(cpu, 50), 0) : 'n/a',
    peakRssMbP50: rss.length ? round(percentile(rss, 50), 1) : 'n/a',
    peakRssMbMax: rss.length ? round(Math.max(...rss), 1) : 'n/a',
  };
};
const b = summary(base);
const s = summary(sdk);
const report = {
  bench: 'cold-start',
  runs: RUNS,
  machine: machine(),
  baseline: { command: 'node -e 0', ...b },
  sdkServer: {
    command: 'node bench/fixtures/sdk-echo-server.mjs, initialize + tools/list',
    ...s,
  },
  brokers: BINS.map((bin, j) => {
    const k = summary(brk[j]);
    const ratio = round(k.p50Ms / s.p50Ms, 2);
    return {
      command: `HERETEK_BROKER_OFFLINE=1 node ${bin}, initialize + tools/list`,
      ...k,
      overBaselineP50Ms: round(k.p50Ms - b.p50Ms, 1),
      overSdkServerP50: ratio,
      meetsTarget: ratio <= TARGET_RATIO,
    };
  }),
  targetOverSdkServer: TARGET_RATIO,
};
console.log(JSON.stringify(report, null, 2));

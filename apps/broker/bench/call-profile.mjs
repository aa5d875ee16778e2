// Where the broker spends its CPU on the call path: runs the built bin under
// `node --cpu-prof` in front of the stand-in gateway (its own process), sends
// CALLS sequential `mcp_call_tool` requests from a bare JSON-RPC peer, and
// sums the broker's self time by owner and by function (mapped back to the
// sources through the bundle's source map). Start-up is profiled too; the
// call path is what remains once the start-up owners are discounted, so the
// run is long enough to dominate.
//
//   CALLS=3000 node bench/call-profile.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TARGETS } from './gateway.mjs';
import {
  benchOptions,
  BROKER_CLI,
  StdioPeer,
  machine,
  round,
  spawnGateway,
  summarizeProfile,
  BENCH_STATE_HOME,
} from './lib.mjs';

const { CALLS } = benchOptions({
  CALLS: 3000,
});
const BIN = process.env.BIN || BROKER_CLI;
const gateway = await spawnGateway(
  Object.fromEntries(DEFAULT_TARGETS.map((t) => [t, {}])),
);
const dir = mkdtempSync(join(tmpdir(), 'broker-call-prof-'));
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, BIN],
  {
    env: {
      PATH: process.env.PATH ?? '',
      XDG_STATE_HOME: BENCH_STATE_HOME,
      HERETEK_GATEWAY_URL: gateway.url,
      HERETEK_BROKER_ROLE: 'director',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  },
);
let stderrBytes = 0;
child.stderr.on('data', (c) => (stderrBytes += c.length));
const peer = new StdioPeer(child);
await peer.initialize();
await peer.awaitDiscovery(DEFAULT_TARGETS.map((t) => `${t}_echo`));
const started = performance.now();
for (let i = 0; i < CALLS; i++) {
  const token = `t${i}`;
  const reply = await peer.request('tools/call', {
    name: 'mcp_call_tool',
    arguments: { name: 'core_echo', arguments: { token } },
  });
  const text = reply.result?.content?.[0]?.text;
  if (text !== token) throw new Error(`call ${i}: ${JSON.stringify(reply)}`);
}
const elapsed = performance.now() - started;
await peer.close();
await gateway.close();
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
// KEEP_PROFILE=1 keeps the .cpuprofile (path printed) for a closer look.
if (process.env.KEEP_PROFILE)
  process.stderr.write(`profile: ${join(dir, file)}\n`);
else rmSync(dir, { recursive: true, force: true });
const { total, byOwner, byFunction } = summarizeProfile(profile, { top: 30 });
console.log(
  JSON.stringify(
    {
      bench: 'call-profile',
      machine: machine(),
      calls: CALLS,
      wallMsPerCall: round(elapsed / CALLS, 3),
      brokerStderrBytesPerCall: round(stderrBytes / CALLS, 1),
      profiledMs: total,
      selfTimeByOwner: byOwner,
      selfTimeByFunction: byFunction,
    },
    null,
    2,
  ),
);

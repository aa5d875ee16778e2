// Where a cold start spends its CPU: runs the bin once offline under
// `node --cpu-prof`, answers initialize + tools/list, and sums the profile's
// self time by package (bundled code is mapped back through dist/cli.js.map),
// node's own module loader, GC and idle.
//
//   node bench/cold-start-profile.mjs
//   BIN=path/to/cli.js node bench/cold-start-profile.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BROKER_CLI,
  PROTOCOL_VERSION,
  machine,
  requireBuilt,
  summarizeProfile,
  BENCH_STATE_HOME,
} from './lib.mjs';

requireBuilt();
const BIN = process.env.BIN || BROKER_CLI;
const dir = mkdtempSync(join(tmpdir(), 'broker-prof-'));
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', BIN],
  {
    env: {
      PATH: process.env.PATH ?? '',
      XDG_STATE_HOME: BENCH_STATE_HOME,
      HERETEK_BROKER_OFFLINE: '1',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  },
);
child.stdin.write(
  [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'cold-start-profile', version: '1.0.0' },
      },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ]
    .map((m) => `${JSON.stringify(m)}\n`)
    .join(''),
);
let out = '';
child.stdout.setEncoding('utf8').on('data', (c) => {
  out += c;
  if (out.includes('"id":2')) child.stdin.end();
});
await new Promise((resolve) => child.once('exit', resolve));
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
rmSync(dir, { recursive: true, force: true });

const { total, byOwner, byFunction } = summarizeProfile(profile, { top: 20 });
console.log(
  JSON.stringify(
    {
      bench: 'cold-start-profile',
      bin: BIN,
      machine: machine(),
      profiledMs: total,
      selfTimeByOwner: byOwner,
      selfTimeByFunction: byFunction,
    },
    null,
    2,
  ),
);

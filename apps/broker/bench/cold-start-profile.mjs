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
  firstRequests,
  machine,
  offlineEnv,
  requireBuilt,
  summarizeProfile,
} from './lib.mjs';

requireBuilt();
const BIN = process.env.BIN || BROKER_CLI;
const dir = mkdtempSync(join(tmpdir(), 'broker-prof-'));
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', BIN],
  {
    env: offlineEnv(),
    stdio: ['pipe', 'pipe', 'ignore'],
  },
);
child.stdin.write(firstRequests('cold-start-profile'));
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

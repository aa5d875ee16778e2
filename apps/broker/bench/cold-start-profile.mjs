// Where a cold start spends its CPU: runs the bin once offline under
// `node --cpu-prof`, answers initialize + tools/list, and sums the profile's
// self time by package (bundled code is mapped back through dist/cli.js.map),
// node's own module loader, GC and idle.
//
//   node bench/cold-start-profile.mjs
//   BIN=path/to/cli.js node bench/cold-start-profile.mjs
import { spawn } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  existsSync,
} from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BROKER_CLI,
  PROTOCOL_VERSION,
  machine,
  requireBuilt,
  round,
} from './lib.mjs';

requireBuilt();
const BIN = process.env.BIN || BROKER_CLI;
const dir = mkdtempSync(join(tmpdir(), 'broker-prof-'));
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', BIN],
  {
    env: { PATH: process.env.PATH ?? '', HERETEK_BROKER_OFFLINE: '1' },
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

const maps = new Map();
function sourceMapFor(url) {
  if (!maps.has(url)) {
    let map;
    try {
      const path = fileURLToPath(url);
      if (existsSync(`${path}.map`))
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = undefined;
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

/** A short owner name for a source path: package name, workspace package, or broker source. */
function owner(path) {
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const ws = /(?:^|\/)(packages|apps)\/([^/]+)\/src\//.exec(path);
  if (ws)
    return ws[1] === 'apps' && ws[2] === 'broker'
      ? 'broker src'
      : `@heretek/${ws[2]}`;
  return path;
}

function classify(node) {
  const { url, functionName, lineNumber, columnNumber } = node.callFrame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle (waiting for I/O)';
  if (functionName === '(program)') return 'V8/native (parse, compile, other)';
  if (url === '') return `native: ${functionName || '(anonymous)'}`;
  if (url.startsWith('node:internal/modules')) return 'node module loader';
  if (url.startsWith('node:')) return 'node core';
  if (url.startsWith('file://')) {
    const map = sourceMapFor(url);
    if (map) {
      const entry = map.findEntry(lineNumber, columnNumber);
      if (entry?.originalSource) return owner(entry.originalSource);
    }
    return owner(fileURLToPath(url));
  }
  return url;
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const totals = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const key = classify(
    byId.get(profile.samples[i]).callFrame ? byId.get(profile.samples[i]) : {},
  );
  totals.set(key, (totals.get(key) ?? 0) + (deltas[i] ?? 0) / 1000);
}
const total = (profile.endTime - profile.startTime) / 1000;
const rows = [...totals]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 25)
  .map(([name, ms]) => ({
    name,
    ms: round(ms, 1),
    share: `${round((100 * ms) / total, 1)}%`,
  }));
console.log(
  JSON.stringify(
    {
      bench: 'cold-start-profile',
      bin: BIN,
      machine: machine(),
      profiledMs: round(total, 1),
      selfTime: rows,
    },
    null,
    2,
  ),
);

// Two builds of this client in one process, against one loopback SDK server:
// 20 interleaved blocks of `calls` sequential tools/call each (the order
// alternates per block), so machine load hits both alike. Prints CPU and wall
// time per call and the p50 of each build.
// Usage: node bench/ab.mjs <build-a.js> <build-b.js> [calls per block=200] [json=0|1]
// A build is this package's dist/index.js, or a bundle of another revision's
// src/index.ts (esbuild --bundle --platform=node --format=esm with the runtime
// dependencies external).
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { gatewayEcho, startServer } from './server.mjs';
const [pathA, pathB, callsArg, jsonArg] = process.argv.slice(2);
if (!pathA || !pathB) {
  console.error(
    'usage: node bench/ab.mjs <build-a.js> <build-b.js> [calls] [json=0|1]',
  );
  process.exit(2);
}
const CALLS = Number(callsArg ?? 200);
const json = jsonArg === '1';
const server = await startServer({ json });

const make = async (path) => {
  const { GatewayClient } = await import(pathToFileURL(resolve(path)).href);
  return gatewayEcho(GatewayClient, server.url).call;
};
const clients = { a: await make(pathA), b: await make(pathB) };
for (const c of Object.values(clients))
  for (let i = 0; i < 200; i++) await c('warm');
const totals = {
  a: { cpu: 0, wall: 0, n: 0, p: [] },
  b: { cpu: 0, wall: 0, n: 0, p: [] },
};
for (let block = 0; block < 20; block++) {
  for (const name of block % 2 ? ['a', 'b'] : ['b', 'a']) {
    const c = clients[name];
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) {
      const s = process.hrtime.bigint();
      await c(`t${i}`);
      totals[name].p.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    const cpu = process.cpuUsage(cpu0);
    totals[name].cpu += (cpu.user + cpu.system) / 1000;
    totals[name].wall += Number(process.hrtime.bigint() - t0) / 1e6;
    totals[name].n += CALLS;
  }
}
for (const [name, t] of Object.entries(totals)) {
  t.p.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      build: name === 'a' ? pathA : pathB,
      json,
      calls: t.n,
      cpuPerCallMs: Number((t.cpu / t.n).toFixed(4)),
      wallPerCallMs: Number((t.wall / t.n).toFixed(4)),
      p50Ms: Number(t.p[Math.floor(t.p.length / 2)].toFixed(4)),
    }),
  );
}
process.exit(0);

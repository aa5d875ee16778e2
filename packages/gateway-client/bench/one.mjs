// One client per process (nothing else loaded into it): p50 / p99 / mean and CPU per call.
// Usage, after a build: node bench/one.mjs <sdk|gateway> [calls=2000] [json=0|1]
// Alternate the two a few times and compare medians: an in-process comparison
// cannot show costs one client imposes on the whole process.
import { Agent, fetch as undiciFetch } from 'undici';
import { gatewayEcho, sdkEcho, startServer } from './server.mjs';
const [which, callsArg, jsonArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 2000);
const json = jsonArg === '1';
const server = await startServer({ json });
const url = server.url;
let call, close;
if (which === 'sdk') {
  const agent = new Agent();
  const sdk = await sdkEcho(url, 'b', (u, i) =>
    undiciFetch(u, { ...i, dispatcher: agent }),
  );
  call = sdk.call;
  close = async () => {
    await sdk.client.close();
    await agent.close();
  };
} else {
  const { GatewayClient } = await import(
    process.env.GATEWAY_CLIENT_DIST ?? '../dist/index.js'
  );
  const g = gatewayEcho(GatewayClient, url);
  call = g.call;
  close = () => g.gateway.close();
}
for (let i = 0; i < 200; i++) await call('warm');
const samples = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < CALLS; i++) {
  const s = process.hrtime.bigint();
  const r = await call(`t${i}`);
  samples.push(Number(process.hrtime.bigint() - s) / 1e6);
  if (r.content[0].text !== `t${i}`) throw new Error('crossed');
}
const cpu = process.cpuUsage(cpu0);
const cpuPerCall = (cpu.user + cpu.system) / 1000 / CALLS;
samples.sort((a, b) => a - b);
const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
console.log(
  JSON.stringify({
    which,
    json,
    p50: samples[Math.floor(samples.length / 2)],
    p99: samples[Math.floor(samples.length * 0.99)],
    mean,
    cpuPerCall,
  }),
);
await close();
await server.close();

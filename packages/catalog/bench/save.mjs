// Saving the whole catalog at 1,000 targets x 100 tools: saveCatalog (one
// synchronous call) against saveCatalogAsync in the same run, the CPU of each
// and the longest the event loop waited between two turns while the async
// save ran (a timer of setImmediate turns stands in for requests).
//
//   node --expose-gc bench/save.mjs     (after a build; BENCH_TARGETS, BENCH_TOOLS)
import os from 'node:os';

const { ToolCatalog } = await import(
  new URL('../dist/index.js', import.meta.url).href
);

const TARGETS = Number(process.env.BENCH_TARGETS ?? 1000);
const TOOLS = Number(process.env.BENCH_TOOLS ?? 100);
const seed = ToolCatalog.fromSeed().list();
const changes = new Map();
for (let target = 0; target < TARGETS; target += 1) {
  const tools = [];
  for (let slot = 0; slot < TOOLS; slot += 1) {
    const tool = seed[(target + slot) % seed.length];
    tools.push({
      ...tool,
      target: `t${target}`,
      tool: `${tool.tool}_${slot}`,
      name: `t${target}_${tool.tool}_${slot}`,
      description: `${tool.description} variant ${target} ${slot} w${(target * 7 + slot) % 997}`,
    });
  }
  changes.set(`t${target}`, tools);
}
const catalog = new ToolCatalog();
catalog.replaceBackends(changes);
const keys = new Map(
  [...changes.keys()].map((target) => [target, `k${target}`]),
);
const cpu = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
};

let started = cpu();
const once = catalog.saveCatalog(keys);
const syncCpu = cpu() - started;

let longest = 0;
let last = performance.now();
let running = true;
const turn = () => {
  if (!running) return;
  const now = performance.now();
  longest = Math.max(longest, now - last);
  last = now;
  setImmediate(turn);
};
setImmediate(turn);
started = cpu();
last = performance.now();
const sliced = await catalog.saveCatalogAsync(keys);
running = false;
const asyncCpu = cpu() - started;

process.stdout.write(
  `${catalog.size} tools, ${(once.length / 1e6).toFixed(1)} MB saved; ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}\n` +
    `saveCatalog: ${syncCpu.toFixed(2)} s CPU in one call\n` +
    `saveCatalogAsync: ${asyncCpu.toFixed(2)} s CPU, longest wait between turns ${longest.toFixed(0)} ms, same bytes: ${Buffer.from(once).equals(Buffer.from(sliced))}\n`,
);

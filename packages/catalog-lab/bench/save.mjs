// Saving the whole catalog at 1,000 targets x 100 tools with saveCatalogStream,
// written to a file a piece at a time: its CPU, the longest the event loop
// waited between two turns while it ran (a timer of setImmediate turns stands
// in for requests), and the most memory (heap used plus array buffers) above
// what it was before it began, sampled at each turn.
//
//   node --expose-gc bench/save.mjs     (after a build; BENCH_TARGETS, BENCH_TOOLS)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { writeSavedCatalog } from './write-saved.mjs';
import path from 'node:path';

import { ToolCatalog } from '@heretek/catalog';

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

const used = () => {
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
};

/**
 * Runs `work` while a timer of setImmediate turns measures the longest wait, in wall time
 * and in this thread's CPU time (what the save itself held the event loop for, whatever
 * the machine's load), and the most memory above the start.
 */
async function measured(work) {
  globalThis.gc?.();
  const base = used();
  let longest = 0;
  let longestCpu = 0;
  let most = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let running = true;
  const turn = () => {
    if (!running) return;
    const now = performance.now();
    longest = Math.max(longest, now - last);
    const nowCpu = process.cpuUsage();
    longestCpu = Math.max(
      longestCpu,
      (nowCpu.user + nowCpu.system - lastCpu.user - lastCpu.system) / 1000,
    );
    lastCpu = nowCpu;
    most = Math.max(most, used() - base);
    last = now;
    setImmediate(turn);
  };
  setImmediate(turn);
  const started = cpu();
  const result = await work();
  running = false;
  return {
    result,
    cpu: cpu() - started,
    longest,
    longestCpu,
    mostMb: most / 1e6,
  };
}

const folder = mkdtempSync(path.join(os.tmpdir(), 'catalog-save-'));
const file = path.join(folder, 'saved.bin');
const streamed = await measured(async () => {
  const stream = await catalog.saveCatalogStream(keys);
  await writeSavedCatalog(stream, file);
});
const bytes = statSync(file).size;
rmSync(folder, { recursive: true, force: true });

process.stdout.write(
  `${catalog.size} tools, ${(bytes / 1e6).toFixed(1)} MB saved; ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}\n` +
    `saveCatalogStream, to a file: ${streamed.cpu.toFixed(2)} s CPU, longest wait between turns ${streamed.longest.toFixed(0)} ms wall, ${streamed.longestCpu.toFixed(0)} ms CPU, at most ${streamed.mostMb.toFixed(1)} MB more heap and array buffers\n`,
);

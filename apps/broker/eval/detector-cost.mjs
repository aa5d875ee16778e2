#!/usr/bin/env node
// What flagging costs at discovery, per description version: for N tools
// (the 760 real tools repeated under distinct servers to 100,000 by
// default), the work discovery does for each listed tool without flagging
// (clean the description and schema texts, hash the definition) against the
// same work plus the detector (find the signals in every text, score them)
// and the index the `other-tool` signal reads. Medians of RUNS runs after a
// warm-up, with the spread; the ratio is with / without.
//
// Run from apps/broker (after `pnpm install`; the catalog must be built):
//   node eval/detector-cost.mjs            # 100,000 tools, 5 runs
//   TOOLS=10000 RUNS=7 node eval/detector-cost.mjs
import os from 'node:os';
import process from 'node:process';
import { loadTrustModules } from './load-trust.mjs';
import { loadRealTools } from './real-tools.mjs';

const COUNT = Number(process.env.TOOLS ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 5);
const rules = await loadTrustModules();
const review = await loadTrustModules('review-tool');
const hashing = await loadTrustModules('definition-hash');
const real = await loadRealTools();

const tools = Array.from({ length: COUNT }, (_, index) => {
  const tool = real[index % real.length];
  const copy = Math.floor(index / real.length);
  const target = copy === 0 ? tool.target : `${tool.target}-${copy}`;
  return { ...tool, target, name: `${target}_${tool.bareName}` };
});

/** Discovery's per-tool trust work: clean, hash; and with `flag`, the detector. */
function discover(flag) {
  const context = flag ? new rules.ShadowingIndex() : undefined;
  let flagged = 0;
  const cleaned = tools.map((tool) => {
    const { inputSchema, sanitized } = review.cleanListedTool(tool);
    hashing.definitionHash({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema ?? {},
    });
    return { tool, inputSchema, sanitized };
  });
  if (!flag) return 0;
  // One listing per target, as discovery indexes them.
  const byTarget = new Map();
  for (const entry of cleaned) {
    const list = byTarget.get(entry.tool.target) ?? [];
    list.push(entry.tool);
    byTarget.set(entry.tool.target, list);
  }
  for (const [target, list] of byTarget)
    context.replaceTarget(target, [], list);
  for (const { tool, inputSchema, sanitized } of cleaned) {
    const flags = rules.flagTool({
      tool,
      description: sanitized.text,
      tagText: sanitized.tagText,
      inputSchema,
      context,
    });
    if (flags.length > 0) flagged += 1;
  }
  return flagged;
}

function measure(flag) {
  discover(flag); // warm-up
  const times = [];
  let flagged = 0;
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    flagged = discover(flag);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)],
    min: times[0],
    max: times.at(-1),
    flagged,
  };
}

const without = measure(false);
const withFlags = measure(true);
const format = ({ median, min, max }) =>
  `${(median / 1000).toFixed(2)} s (${(min / 1000).toFixed(2)} to ${(max / 1000).toFixed(2)})`;
process.stdout.write(
  [
    `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}, Node ${process.version}`,
    `${COUNT.toLocaleString('en')} tools, median of ${RUNS} runs (min to max):`,
    `  clean + hash:             ${format(without)}`,
    `  clean + hash + flagging:  ${format(withFlags)} (${withFlags.flagged} flagged)`,
    `  flagging alone: ${(((withFlags.median - without.median) * 1000) / COUNT).toFixed(1)} µs per tool; ratio ${(withFlags.median / without.median).toFixed(2)}x`,
  ].join('\n') + '\n',
);

#!/usr/bin/env node
// What the trust layer costs at discovery: cleaning, rule checks and the
// definition hash (RFC 8785 canonical JSON + SHA-256, as definitionHash) for
// the 760 real tools of LiveMCPBench, MetaTool and the seed, repeated to 1,000
// and 10,000 tools under distinct names and servers. The shadowing context is
// built once per run over all tools, as the broker does.
//
// Then the pins file at the same sizes: the first discovery (pin every tool,
// write the file), opening the file again (parse and check every hash), and a
// discovery of unchanged tools (hash and compare).
//
// Run from apps/broker:  node eval/trust-cost.mjs
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import canonicalize from 'canonicalize';
import { loadTrustModules } from './load-trust.mjs';
import { loadRealTools, reviewDescription } from './real-tools.mjs';

const trust = await loadTrustModules();

const real = await loadRealTools();

function toolsOf(count) {
  return Array.from({ length: count }, (_, index) => {
    const tool = real[index % real.length];
    const copy = Math.floor(index / real.length);
    const target = copy === 0 ? tool.target : `${tool.target}-${copy}`;
    return { ...tool, target, name: `${target}_${tool.bareName}` };
  });
}

function review(tools) {
  const context = trust.createShadowingContext(tools);
  let flagged = 0;
  for (const tool of tools) {
    const { flags } = reviewDescription(trust, tool, context);
    if (flags.length > 0) flagged += 1;
    createHash('sha256')
      .update(
        canonicalize({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema ?? {},
          annotations: {},
        }),
      )
      .digest('hex');
  }
  return flagged;
}

const lines = [
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, Node ${process.version}`,
];
for (const count of [1_000, 10_000]) {
  const tools = toolsOf(count);
  review(tools); // warm-up
  const times = [];
  for (let run = 0; run < 5; run += 1) {
    const started = performance.now();
    review(tools);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  lines.push(
    `${count} tools: clean + rules + hash median ${times[2].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[4].toFixed(1)}), ${((times[2] * 1000) / count).toFixed(1)} µs per tool`,
  );
}
const median = (values) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const directory = await mkdtemp(path.join(os.tmpdir(), 'heretek-pins-cost-'));
try {
  for (const count of [1_000, 10_000]) {
    const definitions = toolsOf(count).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
    const first = [];
    const open = [];
    const again = [];
    let size = 0;
    for (let run = 0; run < 5; run += 1) {
      const file = path.join(directory, `pins-${count}-${run}.json`);
      let started = performance.now();
      const store = await trust.PinStore.open({ path: file });
      await store.observe(definitions);
      first.push(performance.now() - started);
      started = performance.now();
      const reopened = await trust.PinStore.open({ path: file });
      open.push(performance.now() - started);
      started = performance.now();
      await reopened.observe(definitions);
      again.push(performance.now() - started);
      size = (await stat(file)).size;
    }
    lines.push(
      `${count} tools, pins file ${(size / 1024 / 1024).toFixed(1)} MiB: first discovery ${median(first).toFixed(0)} ms, open ${median(open).toFixed(0)} ms, unchanged discovery ${median(again).toFixed(0)} ms (medians of 5)`,
    );
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}
process.stdout.write(`${lines.join('\n')}\n`);

#!/usr/bin/env node
// What guarding a tool result costs per call (src/trust/result-guard.ts:
// hidden characters removed from text items, the text rules checked, a note
// appended when one trips), against the work the broker does on every result
// anyway: serializing it as the JSON-RPC answer it writes to stdout. Both are
// timed in the same run on the same results; the ratio is (guard + serialize)
// / serialize.
//
// Results: honest text of 200 B, 10 KB and 1 MB (the real tools'
// descriptions the rules do not flag, concatenated), the 10 KB text with a false-error attack at
// its end (the flagged path), and an image (passes unchanged). Medians of 7
// runs of enough calls to last about 50 ms each.
//
// Run from apps/broker:  node eval/result-guard-cost.mjs
import os from 'node:os';
import process from 'node:process';
import { loadTrustModules } from './load-trust.mjs';
import { loadMsb } from './msb/msb-data.mjs';
import { loadRealTools } from './real-tools.mjs';

const guard = await loadTrustModules('result-guard');
// Honest text: the real tools' descriptions, without the one the rules flag.
const prose = (await loadRealTools())
  .map((tool) => tool.description)
  .filter(
    (text) =>
      text !== '' &&
      guard.guardResult({ content: [{ type: 'text', text }] }).flags.length ===
        0,
  )
  .join('\n');
const attack = loadMsb().results.find(
  (sample) => sample.kind === 'false_error',
).text;

function textOf(bytes) {
  let text = prose;
  while (Buffer.byteLength(text) < bytes) text += `\n${prose}`;
  return text.slice(0, bytes);
}

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const cases = [
  ['text 200 B', text(textOf(200))],
  ['text 10 KB', text(textOf(10_000))],
  ['text 1 MB', text(textOf(1_000_000))],
  ['text 10 KB + attack (flagged)', text(`${textOf(10_000)}\n${attack}`)],
  [
    'image 100 KB',
    {
      content: [
        { type: 'image', data: 'A'.repeat(100_000), mimeType: 'image/png' },
      ],
    },
  ],
];

const serialize = (result) => JSON.stringify({ jsonrpc: '2.0', id: 1, result });

function timePerCall(work) {
  let calls = 1;
  for (;;) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < calls; index += 1) work();
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (elapsed >= 50) return elapsed / calls;
    calls *= 2;
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const format = (ms) =>
  ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`;

const lines = [
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
  '| result | serialize only | guard + serialize | ratio | flags |',
  '| --- | --- | --- | --- | --- |',
];
for (const [name, result] of cases) {
  const plain = [];
  const guarded = [];
  for (let run = 0; run < 7; run += 1) {
    plain.push(timePerCall(() => serialize(result)));
    guarded.push(
      timePerCall(() => serialize(guard.guardResult(result).result)),
    );
  }
  const flags = guard.guardResult(result).flags.map((flag) => flag.rule);
  lines.push(
    `| ${name} | ${format(median(plain))} | ${format(median(guarded))} | ${(median(guarded) / median(plain)).toFixed(2)}x | ${flags.join(', ') || '-'} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);

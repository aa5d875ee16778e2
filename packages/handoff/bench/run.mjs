// Micro-benchmarks of @heretek/handoff (imports the built dist), each against
// a baseline measured in the same run. Usage: pnpm turbo run bench --filter @heretek/handoff
import { createHash } from 'node:crypto';
import os from 'node:os';
import canonicalize from 'canonicalize';
import {
  agentCardFor,
  createHandoff,
  handoffDigest,
  parseHandoff,
  serializeHandoff,
} from '../dist/index.js';

const envelope = createHandoff({
  from: 'director',
  to: 'staff-backend',
  intent: 'mutating',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  createdAt: '2026-01-31T12:00:00.000Z',
  task: {
    title: 'Add rate limiting to POST /login',
    details:
      'Five attempts per minute per IP; answer 429 with Retry-After. '.repeat(
        8,
      ),
    acceptanceCriteria: [
      'a sixth attempt within a minute gets 429',
      'existing login tests pass',
    ],
  },
  contextSummary:
    'QA saw brute force in the logs; the QA report has the failing check. '.repeat(
      10,
    ),
  artifacts: [
    {
      name: 'QA report',
      uri: 'reports/qa/login.md',
      digest: `sha256:${'a'.repeat(64)}`,
      mediaType: 'text/markdown',
    },
    {
      name: 'failing test',
      uri: 'test/login-rate.test.ts',
      digest: `sha256:${'b'.repeat(64)}`,
    },
    {
      name: 'CI log',
      uri: 'https://ci.example.com/runs/1/log.txt',
      digest: `sha256:${'c'.repeat(64)}`,
    },
  ],
  constraints: {
    rules: ['do not change the public API'],
    allowedTargets: ['core'],
    maxToolCalls: 40,
  },
});
const text = serializeHandoff(envelope);

/** ops/s, median of `rounds` rounds of `iterations` calls, after a warm-up. */
function measure(fn, { iterations = 2000, rounds = 7 } = {}) {
  for (let i = 0; i < iterations; i++) fn();
  const rates = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rates.push(iterations / seconds);
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)];
}

const sha256 = (value) => createHash('sha256').update(value).digest('hex');
const cases = [
  [
    'handoffDigest (validate + JCS + SHA-256)',
    () => handoffDigest(envelope),
    'JSON.stringify + SHA-256 (no validation, key order kept)',
    () => sha256(JSON.stringify(envelope)),
  ],
  [
    'canonicalize (RFC 8785) alone',
    () => canonicalize(envelope),
    'JSON.stringify alone',
    () => JSON.stringify(envelope),
  ],
  [
    'parseHandoff(JSON text) (strict zod validation)',
    () => parseHandoff(text),
    'JSON.parse alone',
    () => JSON.parse(text),
  ],
  [
    'agentCardFor (validate options + build v1.0 card)',
    () =>
      agentCardFor('staff-backend', {
        baseUrl: 'https://agents.example.com/a2a',
      }),
    'structuredClone of a built card',
    (() => {
      const card = agentCardFor('staff-backend', {
        baseUrl: 'https://agents.example.com/a2a',
      });
      return () => structuredClone(card);
    })(),
  ],
];

const cpus = os.cpus();
process.stdout.write(
  `@heretek/handoff bench: Node ${process.version}, ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), envelope ${Buffer.byteLength(text)} bytes canonical\n\n`,
);
process.stdout.write(
  '| operation | ops/s | baseline | baseline ops/s | cost vs baseline |\n|---|---:|---|---:|---:|\n',
);
for (const [name, fn, baselineName, baseline] of cases) {
  const rate = measure(fn);
  const baseRate = measure(baseline);
  process.stdout.write(
    `| ${name} | ${Math.round(rate).toLocaleString('en-US')} | ${baselineName} | ${Math.round(baseRate).toLocaleString('en-US')} | ${(baseRate / rate).toFixed(1)}x |\n`,
  );
}

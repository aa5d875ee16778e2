// Hybrid ranking's own cost at 10,000 tools, apart from the embedding
// endpoint: a whole search with vectors against the same search without, at
// several vector dimensions (seeded random unit vectors;
// the endpoint's time is not part of either).
//
//   node bench/fusion.mjs          (after a build; BENCH_TOOLS, BENCH_ROUNDS)
import { readFileSync } from 'node:fs';
import os from 'node:os';

import { ToolCatalog, toolEntryFromMcpTool } from '@heretek/catalog';
const { targetFromServerName } = await import(
  new URL('../dist/index.js', import.meta.url).href
);

const TOOLS = Number(process.env.BENCH_TOOLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 400);
const lines = (file) =>
  readFileSync(new URL(`../data/livemcpbench/${file}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
const sourceTools = lines('tools.jsonl');
const queries = lines('queries.jsonl').map((row) => row.query);

// LiveMCPBench's tools again and again, each copy on servers of its own.
const entries = Array.from({ length: TOOLS }, (_, index) => {
  const tool = sourceTools[index % sourceTools.length];
  const copy = Math.floor(index / sourceTools.length);
  const target = `${targetFromServerName(tool.server)}${copy === 0 ? '' : `-${copy}`}`;
  return toolEntryFromMcpTool({
    backend: { backend: target, target, profile: 'core' },
    tool: { ...tool, name: tool.name.slice(tool.name.indexOf('__') + 2) },
  });
});
const catalog = new ToolCatalog({ tools: entries });

let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31 - 0.5;
};
const unitVector = (dimensions) => {
  const vector = Float32Array.from({ length: dimensions }, random);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
};

/** CPU milliseconds of each call, p50 and p99 of the best of three rounds. */
function time(run) {
  const rounds = [0, 1, 2].map(() => {
    const times = [];
    for (let index = 0; index < ROUNDS; index += 1) {
      const before = process.cpuUsage();
      run(index);
      const used = process.cpuUsage(before);
      times.push((used.user + used.system) / 1000);
    }
    times.sort((left, right) => left - right);
    return {
      p50: times[Math.floor(0.5 * times.length)],
      p99: times[Math.min(times.length - 1, Math.floor(0.99 * times.length))],
    };
  });
  return rounds.sort((left, right) => left.p99 - right.p99)[0];
}

const fmt = (value) => value.toFixed(3);
process.stdout.write(
  `${TOOLS} tools, ${ROUNDS} calls a round, best of 3 rounds; ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}\n\n`,
);

// A whole search with vectors against the same search without, and against
// the similarity pass it replaced (every similarity exact: the float32 matrix
// times the query, four products a step, summed in doubles) in the same run.
process.stdout.write(
  '\n| search over LiveMCPBench tasks | p50 ms | p99 ms (CPU) | p50 ratio to lexical |\n|---|---|---|---|\n',
);
const lexicalTime = time((index) =>
  catalog.search({ query: queries[index % queries.length], limit: 10 }),
);
process.stdout.write(
  `| lexical | ${fmt(lexicalTime.p50)} | ${fmt(lexicalTime.p99)} | 1 |\n`,
);

/** Every similarity exact, as the pass before the 8-bit kernel computed them. */
function everySimilarity(matrix, query, dimensions, out) {
  for (let row = 0; row < out.length; row += 1) {
    const offset = row * dimensions;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    for (let d = 0; d < dimensions; d += 4) {
      a += query[d] * matrix[offset + d];
      b += query[d + 1] * matrix[offset + d + 1];
      c += query[d + 2] * matrix[offset + d + 2];
      e += query[d + 3] * matrix[offset + d + 3];
    }
    out[row] = a + b + c + e;
  }
}

for (const dimensions of [100, 768, 1536]) {
  const vectors = new Map(
    entries.map((entry) => [entry.name, unitVector(dimensions)]),
  );
  const queryVectors = queries.map(() => unitVector(dimensions));
  const tool = (name) => vectors.get(name);
  const result = time((index) =>
    catalog.search({
      query: queries[index % queries.length],
      limit: 10,
      vectors: { query: queryVectors[index % queries.length], tool },
    }),
  );
  process.stdout.write(
    `| hybrid, ${dimensions} dimensions | ${fmt(result.p50)} | ${fmt(result.p99)} | ${(result.p50 / lexicalTime.p50).toFixed(1)} |\n`,
  );
  const matrix = new Float32Array(TOOLS * dimensions);
  entries.forEach((entry, row) =>
    matrix.set(vectors.get(entry.name), row * dimensions),
  );
  const out = new Float64Array(TOOLS);
  const pass = time((index) =>
    everySimilarity(
      matrix,
      queryVectors[index % queries.length],
      dimensions,
      out,
    ),
  );
  process.stdout.write(
    `| the former pass alone: every similarity exact, ${dimensions} dimensions | ${fmt(pass.p50)} | ${fmt(pass.p99)} | ${(pass.p50 / lexicalTime.p50).toFixed(1)} |\n`,
  );
}

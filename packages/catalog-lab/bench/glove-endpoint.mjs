#!/usr/bin/env node
// An OpenAI-compatible embeddings endpoint for tests, on 127.0.0.1: POST
// <url>/embeddings with { model, input: string | string[] } answers each input
// with the SIF-weighted average of its words' GloVe vectors (the vocabulary
// of the vendored benchmark sets, data/glove), unit length.
//
//   node glove-endpoint.mjs [--port <n>] [--delay-ms <n>] [--garbage]
//
// Prints {"url":"http://127.0.0.1:<port>/v1"} on its first stdout line, then
// one line per request: {"request":n,"inputs":k}. GET <url>/stats answers
// {"requests","inputs","single"} (single: one-input requests by their text).
// --delay-ms holds every answer back, POST <url>/delay {"ms":n} changes that
// while it runs; --garbage answers 200 with vectors that are not numbers.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { URL, fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DATA = fileURLToPath(new URL('../data/glove/', import.meta.url));

/** Words of a text as the vectors were extracted: camelCase split, lower-case, letters and digits. */
export function words(text) {
  return (
    String(text)
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? []
  );
}

/** The vendored vectors: word -> { vector (Float32Array), weight (SIF) }. */
export function loadVectors() {
  const rows = readFileSync(`${DATA}vocabulary.tsv`, 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
  const bytes = readFileSync(`${DATA}vectors.i8`);
  const quantized = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const dimensions = quantized.length / rows.length;
  // SIF weight a / (a + p(w)); p(w) from the word's GloVe frequency rank (Zipf).
  const a = 1e-3;
  const harmonic = Math.log(400_000) + 0.5772;
  const table = new Map();
  rows.forEach((row, index) => {
    const [word, rank, scale] = row.split('\t');
    const vector = new Float32Array(dimensions);
    for (let d = 0; d < dimensions; d += 1)
      vector[d] = quantized[index * dimensions + d] * Number(scale);
    const p = 1 / ((Number(rank) + 1) * harmonic);
    table.set(word, { vector, weight: a / (a + p) });
  });
  return { table, dimensions };
}

/** The unit-length SIF average of a text's known words (zeros when none is known). */
export function embed(text, { table, dimensions }) {
  const sum = new Float32Array(dimensions);
  for (const word of words(text)) {
    const known = table.get(word);
    if (known === undefined) continue;
    for (let d = 0; d < dimensions; d += 1)
      sum[d] += known.weight * known.vector[d];
  }
  let norm = 0;
  for (let d = 0; d < dimensions; d += 1) norm += sum[d] * sum[d];
  norm = Math.sqrt(norm);
  return Array.from(sum, (value) => (norm === 0 ? 0 : value / norm));
}

function serve(options) {
  const vectors = loadVectors();
  let requests = 0;
  let inputs = 0;
  let delayMs = options.delayMs;
  const single = {};
  const server = createServer((request, response) => {
    const reply = (status, body) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'GET' && request.url === '/v1/stats')
      return reply(200, { requests, inputs, single });
    const route =
      request.method === 'POST' &&
      (request.url === '/v1/embeddings' || request.url === '/v1/delay')
        ? request.url
        : undefined;
    if (route === undefined)
      return reply(404, { error: { message: 'not found' } });
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400, { error: { message: 'body is not JSON' } });
      }
      if (route === '/v1/delay') {
        delayMs = Number(body.ms);
        return reply(200, { delayMs });
      }
      const list = typeof body.input === 'string' ? [body.input] : body.input;
      if (!Array.isArray(list) || typeof body.model !== 'string')
        return reply(400, { error: { message: 'give model and input' } });
      requests += 1;
      inputs += list.length;
      if (list.length === 1) single[list[0]] = (single[list[0]] ?? 0) + 1;
      process.stdout.write(
        `${JSON.stringify({ request: requests, inputs: list.length, authorization: request.headers.authorization ?? null })}\n`,
      );
      const data = list.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: options.garbage
          ? ['not', 'a', 'vector']
          : embed(text, vectors),
      }));
      setTimeout(
        () =>
          reply(200, {
            object: 'list',
            data,
            model: body.model,
            usage: { prompt_tokens: 0, total_tokens: 0 },
          }),
        delayMs,
      );
    });
  });
  server.listen(options.port, '127.0.0.1', () => {
    const { port } = server.address();
    process.stdout.write(
      `${JSON.stringify({ url: `http://127.0.0.1:${port}/v1` })}\n`,
    );
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      'delay-ms': { type: 'string', default: '0' },
      garbage: { type: 'boolean', default: false },
    },
  });
  serve({
    port: Number(values.port),
    delayMs: Number(values['delay-ms']),
    garbage: values.garbage,
  });
}

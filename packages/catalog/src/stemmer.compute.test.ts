import { readFileSync } from 'node:fs';
import winkNlpUtils from 'wink-nlp-utils';
import { describe, expect, it } from 'vitest';
import { splitWords, stemWord } from './tokenizer.js';

const data = new URL('../../catalog-lab/data/', import.meta.url);

describe('stemmer', () => {
  it('gives the stems of wink-nlp-utils on every word of both benchmark sets', () => {
    const words = new Set<string>();
    for (const file of [
      'livemcpbench/tools.jsonl',
      'livemcpbench/queries.jsonl',
      'metatool/tools.jsonl',
      'metatool/queries.jsonl',
      'metatool/usage.jsonl',
    ])
      for (const word of splitWords(readFileSync(new URL(file, data), 'utf8')))
        if (/^[a-z]{3,}$/.test(word)) words.add(word);
    expect(words.size).toBeGreaterThan(10_000);
    const differing = [...words].filter(
      (word) => stemWord(word) !== winkNlpUtils.string.stem(word),
    );
    expect(differing).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { PlainBm25 } from './plain-bm25.js';

const document = (name: string, description: string) => ({
  name,
  description,
  server: 's',
  inputSchema: {},
});

describe('PlainBm25', () => {
  const index = new PlainBm25({
    documents: [
      document('s__a', 'weather report'),
      document('s__b', 'weather forecast for a city'),
      document('s__c', 'weather report'),
      document('s__d', 'stock prices'),
      document('s__e', 'weather forecast forecast'),
    ],
  });

  it('ranks by score, ties by position, and keeps only the best `limit`', () => {
    expect(index.search({ query: 'weather forecast', limit: 10 })).toEqual([
      4, 1, 0, 2,
    ]);
    expect(index.search({ query: 'weather report', limit: 2 })).toEqual([0, 2]);
    expect(index.search({ query: 'weather', limit: 0 })).toEqual([]);
    expect(index.search({ query: 'nothing here', limit: 5 })).toEqual([]);
  });
});

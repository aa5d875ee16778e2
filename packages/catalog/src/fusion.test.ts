import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startGloveEndpoint } from './__fixtures__/glove.js';
import { ToolCatalog } from './catalog.js';
import { openAiEmbeddings } from './embeddings.js';
import { embedBenchmark } from './eval-embeddings.js';
import { loadBenchmark } from './evaluate.js';
import { DEFAULT_FUSION, fuseRankings, type Fusion } from './fusion.js';
import { seededRandom } from './random.js';

const LIVEMCPBENCH = fileURLToPath(
  new URL('../bench/data/livemcpbench', import.meta.url),
);

const lexical = { positions: [4, 2, 7], scores: [10, 5, 1] };
const vector = { positions: [2, 4, 7, 9], similarities: [0.9, 0.1, 0.5, 0.7] };
const fuse = (fusion: Partial<Fusion>, limit = 10) =>
  fuseRankings({
    lexical,
    vector,
    limit,
    fusion: { ...DEFAULT_FUSION, ...fusion },
  });

describe('fuseRankings', () => {
  it('at weight 0 keeps the lexical order, at weight 1 takes the vector order', () => {
    expect(fuse({ weight: 0 }).positions.slice(0, 3)).toEqual([4, 2, 7]);
    expect(fuse({ weight: 1 }).positions).toEqual([2, 9, 7, 4]);
    expect(fuse({ method: 'rrf', weight: 0 }).positions.slice(0, 3)).toEqual([
      4, 2, 7,
    ]);
    expect(fuse({ method: 'rrf', weight: 1 }).positions).toEqual([2, 9, 7, 4]);
  });

  it('interpolates BM25 over its best score with the similarity scaled to 0..1', () => {
    const { positions, scores } = fuse({ weight: 0.5 });
    // 2: 0.5*0.5 + 0.5*1 = 0.75; 4: 0.5*1 + 0 = 0.5; 9: 0.5*0.75 = 0.375; 7: 0.05 + 0.25 = 0.3
    expect(positions).toEqual([2, 4, 9, 7]);
    expect(scores.map((score) => Number(score.toFixed(4)))).toEqual([
      0.75, 0.5, 0.375, 0.3,
    ]);
  });

  it('adds weighted reciprocal ranks with rrf', () => {
    const { positions, scores } = fuse({ method: 'rrf', weight: 0.5, rrfK: 1 });
    // vector ranks: 2 (1st), 9 (2nd), 7 (3rd), 4 (4th); 7: 0.5/4 + 0.5/4 beats 9: 0.5/3
    expect(positions).toEqual([2, 4, 7, 9]);
    expect(scores[0]).toBeCloseTo(0.5 / 3 + 0.5 / 2);
    expect(scores[1]).toBeCloseTo(0.5 / 2 + 0.5 / 5);
  });

  it('returns at most limit positions, ties broken by position', () => {
    expect(fuse({ weight: 0.5 }, 2).positions).toEqual([2, 4]);
    const tied = fuseRankings({
      lexical: { positions: [], scores: [] },
      vector: { positions: [8, 3, 5], similarities: [0.5, 0.5, 0.5] },
      limit: 2,
      fusion: DEFAULT_FUSION,
    });
    expect(tied.positions).toEqual([3, 5]);
  });

  it('works with one side empty', () => {
    expect(
      fuseRankings({
        lexical,
        vector: { positions: [], similarities: [] },
        limit: 5,
        fusion: DEFAULT_FUSION,
      }).positions,
    ).toEqual([4, 2, 7]);
  });
});

/**
 * The fusion by its definition, every similarity ranked by comparing it with every
 * other: what `fuseRankings` must equal, positions and scores.
 */
function fuseByDefinition(input: Parameters<typeof fuseRankings>[0]) {
  const { lexical, vector, fusion, limit } = input;
  const weight = Math.min(1, Math.max(0, fusion.weight));
  const fused = new Map<number, number>();
  const add = (position: number, value: number) =>
    fused.set(position, (fused.get(position) ?? 0) + value);
  Array.from(lexical.positions).forEach((position, rank) =>
    add(position, (1 - weight) / (fusion.rrfK + rank + 1)),
  );
  const similarities = Array.from(vector.similarities);
  Array.from(vector.positions).forEach((position, slot) => {
    const rank = similarities.filter(
      (other) => other > (similarities[slot] as number),
    ).length;
    add(position, weight / (fusion.rrfK + rank + 1));
  });
  const best = [...fused]
    .sort(([left, a], [right, b]) => b - a || left - right)
    .slice(0, limit);
  return {
    positions: best.map(([position]) => position),
    scores: best.map(([, score]) => score),
  };
}

describe('fuseRankings with rrf (the best similarities picked without a full sort)', () => {
  it('equals ranking every similarity, over random rankings with ties', () => {
    const ranking = fc
      .record({
        tools: fc.integer({ min: 1, max: 120 }),
        lexicalShare: fc.double({ min: 0, max: 1, noNaN: true }),
        vectorShare: fc.double({ min: 0, max: 1, noNaN: true }),
        // Few distinct values make ties; many make none.
        levels: fc.constantFrom(2, 5, 1000, 2 ** 30),
        weight: fc.constantFrom(0, 0.3, 0.5, 1),
        rrfK: fc.constantFrom(1, 60),
        limit: fc.integer({ min: 0, max: 25 }),
        seed: fc.integer(),
      })
      .map((draw) => {
        const next = seededRandom(draw.seed);
        const shuffled = Array.from({ length: draw.tools }, (_, index) => [
          next(),
          index,
        ])
          .sort(([a], [b]) => (a as number) - (b as number))
          .map(([, index]) => index as number);
        const lexicalPositions = shuffled.slice(
          0,
          Math.round(draw.lexicalShare * Math.min(50, draw.tools)),
        );
        const vectorPositions = [...shuffled]
          .sort(() => next() - 0.5)
          .slice(0, Math.round(draw.vectorShare * draw.tools));
        return {
          lexical: {
            positions: lexicalPositions,
            scores: lexicalPositions.map((_, rank) => 50 - rank),
          },
          vector: {
            positions: vectorPositions,
            similarities: vectorPositions.map(
              () => Math.floor(next() * draw.levels) / draw.levels - 0.5,
            ),
          },
          limit: draw.limit,
          fusion: {
            method: 'rrf' as const,
            weight: draw.weight,
            rrfK: draw.rrfK,
          },
        };
      });
    fc.assert(
      fc.property(ranking, (input) => {
        expect(fuseRankings(input)).toEqual(fuseByDefinition(input));
      }),
      { numRuns: 500 },
    );
  });

  it('equals ranking every similarity on GloVe vectors of LiveMCPBench', async () => {
    const endpoint = await startGloveEndpoint();
    try {
      const data = loadBenchmark({ directory: LIVEMCPBENCH });
      const vectors = await embedBenchmark({
        data,
        provider: openAiEmbeddings({ url: endpoint.url, model: 'glove' }),
      });
      const catalog = new ToolCatalog({ tools: data.entries });
      const names = data.entries.map((entry) => entry.name);
      const toolVectors = names.map((name) => vectors.tools.get(name)!);
      let compared = 0;
      data.queries.forEach((query, index) => {
        const queryVector = vectors.queries[index]!;
        const hits = catalog.search({ query: query.query, limit: 50 }).hits;
        const input = {
          lexical: {
            positions: hits.map((hit) => names.indexOf(hit.name)),
            scores: hits.map((hit) => hit.score),
          },
          vector: {
            positions: names.map((_, position) => position),
            similarities: toolVectors.map((tool) =>
              tool.reduce((sum, value, d) => sum + value * queryVector[d]!, 0),
            ),
          },
          limit: 10,
          fusion: { ...DEFAULT_FUSION, method: 'rrf' as const },
        };
        for (const weight of [0.3, 0.7]) {
          const weighted = { ...input, fusion: { ...input.fusion, weight } };
          expect(fuseRankings(weighted)).toEqual(fuseByDefinition(weighted));
          compared += 1;
        }
      });
      expect(compared).toBe(2 * data.queries.length);
    } finally {
      await endpoint.stop();
    }
  }, 60_000);
});

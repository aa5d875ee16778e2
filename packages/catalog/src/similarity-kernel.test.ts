import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { interpolate } from './fusion.js';
import { vectorSide, type VectorSideInput } from './hybrid.js';
import { seededRandom } from './__fixtures__/random.js';
import { SIMILARITY_KERNEL } from './similarity-kernel-bytes.js';
import { QuantizedRows, type VectorMatrix } from './similarity-kernel.js';

/** A matrix of `size` rows of `dimensions` random values (some rows missing, some all zero). */
function randomMatrix(options: {
  size: number;
  dimensions: number;
  seed: number;
  /** Rows are this much alike (0: independent), so similarities crowd together. */
  shared: number;
}): VectorMatrix {
  const { size, dimensions, seed, shared } = options;
  const next = seededRandom(seed);
  const common = Float32Array.from({ length: dimensions }, () => next() - 0.5);
  const rows: (Float32Array | undefined)[] = new Array(size);
  const exact = new Float32Array(size * dimensions);
  const quantized = new QuantizedRows({ size, dimensions });
  for (let position = 0; position < size; position += 1) {
    const draw = next();
    if (draw < 0.05) continue;
    const row =
      draw < 0.07
        ? new Float32Array(dimensions)
        : Float32Array.from(
            common,
            (value) => shared * value + (next() - 0.5) * (1 + 9 * draw),
          );
    exact.set(row, position * dimensions);
    rows[position] = exact.subarray(
      position * dimensions,
      (position + 1) * dimensions,
    );
    quantized.setRow(position, row);
  }
  return { rows, exact, quantized };
}

/**
 * Every tool's exact similarity, the oracle: each computed alone (a scope of
 * one tool is below the size at which {@link vectorSide} bounds anything).
 */
function exactSimilarities(input: VectorSideInput): {
  positions: number[];
  similarities: number[];
} {
  const positions = [...input.scope];
  const similarities = positions.map(
    (position) =>
      vectorSide({ ...input, scope: Int32Array.of(position) })
        .similarities[0] as number,
  );
  return { positions, similarities };
}

describe('the similarity kernel', () => {
  it('is the compilation of similarity-kernel.wat', async () => {
    const { compileKernel } = (await import(
      // @ts-expect-error: a build script without types
      '../scripts/build-kernel.mjs'
    )) as { compileKernel: () => Promise<Buffer> };
    expect((await compileKernel()).toString('base64')).toBe(SIMILARITY_KERNEL);
    expect(
      readFileSync(new URL('./similarity-kernel.wat', import.meta.url), 'utf8'),
    ).toContain('dotRows');
  });

  it('bounds every dot product: the exact one lies within the bound of the 8-bit one', () => {
    for (const dimensions of [1, 31, 100, 768, 1536]) {
      const matrix = randomMatrix({
        size: 300,
        dimensions,
        seed: dimensions,
        shared: 0.5,
      });
      const next = seededRandom(dimensions + 1);
      const query = Float32Array.from(
        { length: dimensions },
        () => next() - 0.5,
      );
      const products = matrix.quantized.products(query);
      const { similarities, positions } = exactSimilarities({
        matrix,
        query,
        norm: 1,
        scope: Int32Array.from(
          matrix.rows.flatMap((row, position) =>
            row === undefined ? [] : [position],
          ),
        ),
        lexical: new Uint8Array(300),
        limit: 10,
        fusion: { weight: 0.3 },
      });
      let widest = 0;
      positions.forEach((position, slot) => {
        const estimate =
          products.queryScale *
          (matrix.quantized.scales[position] as number) *
          (products.products[position] as number);
        const bound = matrix.quantized.productBound(position, products);
        expect(
          Math.abs((similarities[slot] as number) - estimate),
        ).toBeLessThanOrEqual(bound);
        widest = Math.max(
          widest,
          bound / (Math.abs(similarities[slot] as number) + 1e-9),
        );
      });
      expect(widest).toBeGreaterThan(0);
    }
  });
});

describe('vectorSide (hybrid search computing few similarities exactly)', () => {
  it('fuses exactly as every exact similarity would, positions and scores', () => {
    const draws = fc.record({
      size: fc.integer({ min: 256, max: 1200 }),
      dimensions: fc.constantFrom(1, 7, 32, 100, 300),
      shared: fc.constantFrom(0, 3, 30),
      lexical: fc.integer({ min: 0, max: 50 }),
      limit: fc.constantFrom(0, 1, 10, 50),
      weight: fc.constantFrom(0, 0.05, 0.3, 1),
      seed: fc.integer(),
    });
    fc.assert(
      fc.property(draws, (draw) => {
        const matrix = randomMatrix(draw);
        const next = seededRandom(draw.seed ^ 0x5bd1e995);
        // The query near the shared direction too, half the time.
        const query = Float32Array.from(
          { length: draw.dimensions },
          () => next() - 0.5 + (next() < 0.5 ? 0 : 0.1 * draw.shared),
        );
        const norm = Math.hypot(...query);
        if (!(norm > 0)) return;
        const scope = Int32Array.from(
          matrix.rows.flatMap((row, position) =>
            row === undefined || next() < 0.1 ? [] : [position],
          ),
        );
        const lexicalPositions = Array.from({ length: draw.lexical }, () =>
          Math.floor(next() * draw.size),
        ).filter((position, index, all) => all.indexOf(position) === index);
        const lexical = new Uint8Array(draw.size);
        for (const position of lexicalPositions) lexical[position] = 1;
        const input = {
          matrix,
          query,
          norm,
          scope,
          lexical,
          limit: draw.limit,
          fusion: { weight: draw.weight },
        };
        const lexicalSide = {
          positions: lexicalPositions,
          scores: lexicalPositions.map((_, rank) => 30 - rank / 2),
        };
        const side = vectorSide(input);
        const fused = interpolate({
          lexical: lexicalSide,
          vector: side,
          limit: draw.limit,
          fusion: input.fusion,
        });
        const everything = interpolate({
          lexical: lexicalSide,
          vector: exactSimilarities(input),
          limit: draw.limit,
          fusion: input.fusion,
        });
        expect(fused).toEqual(everything);
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

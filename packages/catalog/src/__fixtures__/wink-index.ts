import bm25 from 'wink-bm25-text-search';
import { type FieldName, fieldTerms, type PreparedTool } from '../prepare.js';

type WinkField = Exclude<FieldName, 'identifier'>;
const WINK_FIELDS: readonly WinkField[] = [
  'name',
  'target',
  'description',
  'parameters',
  'parameterText',
];

/** Field weights of the wink-bm25 index. */
export const WINK_FIELD_WEIGHTS: Readonly<Record<WinkField, number>> = {
  name: 3,
  target: 2,
  description: 1,
  parameters: 1,
  parameterText: 0.5,
};

const identity = (input: unknown): unknown =>
  Array.isArray(input) ? input : String(input).split(' ').filter(Boolean);

/**
 * A consolidated wink-bm25-text-search index over prepared tools (document id = position).
 * Not used by {@link ToolCatalog}: it cross-checks the BM25 arithmetic of the segmented index (`segments.ts`) in tests.
 */
export class WinkIndex {
  readonly #engine: ReturnType<typeof bm25>;
  readonly #vocabulary: Record<string, number>;

  /** Builds and consolidates the index; fewer than 3 tools are padded with empty documents. */
  constructor(options: {
    tools: readonly PreparedTool[];
    weights?: Readonly<Record<WinkField, number>>;
  }) {
    const engine = bm25();
    engine.defineConfig({
      fldWeights: { ...(options.weights ?? WINK_FIELD_WEIGHTS) },
      bm25Params: { k1: 1.2, b: 0.75, k: 1 },
    });
    engine.definePrepTasks([identity]);
    options.tools.forEach((tool, position) =>
      engine.addDoc(
        Object.fromEntries(
          WINK_FIELDS.map((field) => [field, fieldTerms(tool, field)]),
        ),
        position,
      ),
    );
    for (let padding = options.tools.length; padding < 3; padding += 1) {
      engine.addDoc(
        Object.fromEntries(WINK_FIELDS.map((field) => [field, []])),
        padding,
      );
    }
    engine.consolidate();
    this.#engine = engine;
    this.#vocabulary = engine.getTokens();
  }

  /** `true` when some indexed tool contains `term`. */
  has(term: string): boolean {
    return this.#vocabulary[term] !== undefined;
  }

  /** Scores of all tools matching any of `terms` and accepted by `accept`, best first. */
  search(options: {
    terms: readonly string[];
    accept: (position: number) => boolean;
    limit: number;
  }): Array<[number, number]> {
    if (options.terms.length === 0) return [];
    const raw = this.#engine.search(options.terms.join(' '), options.limit);
    const results: Array<[number, number]> = [];
    for (const [id, score] of raw) {
      const position = Number(id);
      if (options.accept(position)) results.push([position, score]);
    }
    return results;
  }
}

// The techniques measured by bench/tune.mjs: each a list of variants (tuning overrides),
// from the mildest to the strongest, and the override that switches it off. General
// techniques only: nothing here knows a query.

/** The plain single-bag model (our tokenizer: identifier splitting, stop words, Porter2). */
export const BASE = {
  k1: 1.2,
  b: 0.75,
  bag: {
    name: 1,
    identifier: 0,
    target: 1,
    description: 1,
    parameters: 1,
    parameterText: 1,
  },
  bagNormalization: 'bag',
  fields: {
    name: { weight: 0, b: 0.8 },
    identifier: { weight: 0, b: 0 },
    target: { weight: 0, b: 0.3 },
    description: { weight: 0, b: 0.5 },
    parameters: { weight: 0, b: 0.5 },
    parameterText: { weight: 0, b: 0.75 },
  },
  queryTermSaturation: 0,
  siblingWeight: 0,
  siblingCap: 0,
  nameCoverageWeight: 0,
  nameCoverageCap: 0,
  feedbackDocuments: 0,
  feedbackTerms: 0,
  feedbackWeight: 0,
  likelihoodWeight: 0,
  likelihoodMu: 100,
  fusionK: 60,
  synonymWeight: 0,
  relativeCutoff: 0.2,
  idfExponent: 1,
  commonTermShare: 0.2,
  groupIdfWeight: 0,
};

/** Deep merge of tuning overrides (bag and fields merged field by field). */
export function merge(base, overrides) {
  const result = { ...base, ...overrides };
  result.bag = { ...base.bag, ...overrides.bag };
  result.fields = { ...base.fields };
  for (const [field, value] of Object.entries(overrides.fields ?? {}))
    result.fields[field] = { ...base.fields[field], ...value };
  return result;
}

const field = (name, weight, b) => ({
  fields: { [name]: b === undefined ? { weight } : { weight, b } },
});

export const TECHNIQUES = [
  {
    name: 'per-field length normalization in the bag (BM25F)',
    off: { bagNormalization: 'bag' },
    variants: [{ bagNormalization: 'field' }],
  },
  {
    name: 'WordNet synonyms of words that match nothing',
    off: { synonymWeight: 0 },
    variants: [0.1, 0.2, 0.4].map((synonymWeight) => ({ synonymWeight })),
  },
  {
    name: 'bag weight of tool-name words',
    off: { bag: { name: 1 } },
    variants: [1.5, 2, 3].map((name) => ({ bag: { name } })),
  },
  {
    name: 'bag weight of target words',
    off: { bag: { target: 1 } },
    variants: [0.5, 1.5, 2].map((target) => ({ bag: { target } })),
  },
  {
    name: 'bag weight of parameter names',
    off: { bag: { parameters: 1 } },
    variants: [0.5, 1.5, 2].map((parameters) => ({ bag: { parameters } })),
  },
  {
    name: 'bag weight of parameter descriptions and enum values',
    off: { bag: { parameterText: 1 } },
    variants: [0.25, 0.5, 1.5, 2].map((parameterText) => ({
      bag: { parameterText },
    })),
  },
  {
    name: 'exact names in the bag',
    off: { bag: { identifier: 0 } },
    variants: [{ bag: { identifier: 1 } }],
  },
  {
    name: 'name field evidence',
    off: field('name', 0),
    variants: [0.25, 0.5, 1, 2].map((weight) => field('name', weight)),
  },
  {
    name: 'target field evidence',
    off: field('target', 0),
    variants: [0.25, 0.5, 1].map((weight) => field('target', weight)),
  },
  {
    name: 'description field evidence',
    off: field('description', 0),
    variants: [0.25, 0.5, 1].map((weight) => field('description', weight)),
  },
  {
    name: 'parameter-name field evidence',
    off: field('parameters', 0),
    variants: [0.25, 0.5, 1].map((weight) => field('parameters', weight)),
  },
  {
    name: 'parameter-text field evidence',
    off: field('parameterText', 0),
    variants: [0.25, 0.5, 1].map((weight) => field('parameterText', weight)),
  },
  {
    name: 'query-term frequency',
    off: { queryTermSaturation: 0 },
    variants: [1, 3, 10].map((queryTermSaturation) => ({
      queryTermSaturation,
    })),
  },
  {
    name: 'name coverage',
    off: { nameCoverageWeight: 0, nameCoverageCap: 0 },
    variants: [0.2, 0.3, 0.5, 0.7].flatMap((nameCoverageWeight) =>
      [0.25, 0.5, 1, 0].map((nameCoverageCap) => ({
        nameCoverageWeight,
        nameCoverageCap,
      })),
    ),
  },
  {
    name: 'per-server (sibling) boost, capped',
    off: { siblingWeight: 0, siblingCap: 0 },
    variants: [0.1, 0.2, 0.3, 0.5].flatMap((siblingWeight) =>
      [0.25, 0.5, 1, 0].map((siblingCap) => ({ siblingWeight, siblingCap })),
    ),
  },
  {
    name: 'target-level idf',
    off: { groupIdfWeight: 0 },
    variants: [0.5, 1].map((groupIdfWeight) => ({ groupIdfWeight })),
  },
  {
    name: 'RM3 pseudo-relevance feedback',
    off: { feedbackDocuments: 0, feedbackTerms: 0, feedbackWeight: 0 },
    variants: [3, 10].flatMap((feedbackDocuments) =>
      [0.1, 0.3].map((feedbackWeight) => ({
        feedbackDocuments,
        feedbackTerms: 10,
        feedbackWeight,
      })),
    ),
  },
  {
    name: 'query likelihood (Dirichlet) fused by RRF',
    off: { likelihoodWeight: 0 },
    variants: [0.3, 0.6, 1].flatMap((likelihoodWeight) =>
      [30, 300].map((likelihoodMu) => ({ likelihoodWeight, likelihoodMu })),
    ),
  },
  {
    name: 'BM25 k1',
    off: { k1: 1.2 },
    variants: [0.6, 0.9, 1.5, 2].map((k1) => ({ k1 })),
  },
  {
    name: 'BM25 b (bag length normalization)',
    off: { b: 0.75 },
    variants: [0.3, 0.5, 0.9].map((b) => ({ b })),
  },
  {
    name: 'idf exponent',
    off: { idfExponent: 1 },
    variants: [1.2, 1.5].map((idfExponent) => ({ idfExponent })),
  },
];

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ToolCatalog } from '@heretek/catalog';
import { toolEntryFromMcpTool } from '@heretek/catalog';
import {
  evaluateRankings,
  loadBenchmark,
  rankWithCatalog,
  rankWithPlainBm25,
} from './evaluate.js';
import type { Backend, ToolEntry } from '@heretek/catalog';

const files: Backend = { backend: 'files', target: 'files', profile: 'core' };
const weather: Backend = {
  backend: 'weather',
  target: 'weather',
  profile: 'core',
};

function tool(
  backend: Backend,
  name: string,
  description: string,
  inputSchema?: unknown,
): ToolEntry {
  return toolEntryFromMcpTool({
    backend,
    tool: { name, description, inputSchema },
  });
}

const fileTools = [
  'read',
  'write',
  'move',
  'copy',
  'delete',
  'stat',
  'list',
  'watch',
  'chmod',
  'touch',
].map((verb) =>
  tool(
    files,
    `${verb}_file`,
    `${verb} a file on disk; works on any file path.`,
  ),
);
const catalog = new ToolCatalog({
  tools: [
    ...fileTools,
    tool(
      weather,
      'get_forecast',
      'Weather forecast for a city: temperature, rain and wind.',
      {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name' },
          units: { type: 'string', enum: ['metric', 'imperial'] },
        },
      },
    ),
    tool(weather, 'getAirQuality', 'Air pollution index of a location.'),
  ],
});
const names = (query: string): string[] =>
  catalog.search({ query }).hits.map((hit) => hit.name);

describe('name-aware tokenization', () => {
  it('matches snake_case, camelCase, kebab-case and dotted forms of a name', () => {
    expect(names('air quality')[0]).toBe('weather_getAirQuality');
    expect(names('get-air-quality')[0]).toBe('weather_getAirQuality');
    expect(names('weather.getAirQuality')[0]).toBe('weather_getAirQuality');
    expect(names('getForecast')[0]).toBe('weather_get_forecast');
  });

  it('stems: forecasts, forecasting and forecast are one word', () => {
    expect(names('forecasting')[0]).toBe('weather_get_forecast');
    expect(names('forecasts')[0]).toBe('weather_get_forecast');
  });

  it('indexes parameter names, parameter descriptions and enum values', () => {
    expect(names('imperial units')[0]).toBe('weather_get_forecast');
    expect(names('city')[0]).toBe('weather_get_forecast');
  });

  it('indexes the target', () => {
    expect(new Set(names('weather').map((name) => name.split('_')[0]))).toEqual(
      new Set(['weather']),
    );
  });

  it('keeps the exact name as a token, so an exact name inside a longer query ranks first', () => {
    expect(names('please call copy_file for me')[0]).toBe('files_copy_file');
    expect(names('files_chmod_file now')[0]).toBe('files_chmod_file');
  });
});

describe('no padding with weak matches', () => {
  it('returns nothing when only a word common to many tools matches and another word matches nothing', () => {
    const result = catalog.search({ query: 'kubernetes file' });
    expect(result.hits).toEqual([]);
    expect(result.unmatchedTerms).toEqual(['kubernetes']);
  });

  it('still answers a query made only of a common word', () => {
    expect(names('file').length).toBeGreaterThan(0);
  });

  it('keeps a rare word that matches even when another word matches nothing', () => {
    const result = catalog.search({ query: 'kubernetes forecast' });
    expect(result.hits.map((hit) => hit.name)).toEqual([
      'weather_get_forecast',
    ]);
    expect(result.unmatchedTerms).toEqual(['kubernetes']);
  });

  it('reports unmatched words relative to the searched scope', () => {
    const result = catalog.search({
      query: 'forecast chmod',
      target: 'weather',
    });
    expect(result.hits[0]?.name).toBe('weather_get_forecast');
    expect(result.unmatchedTerms).toEqual(['chmod']);
  });
});

describe('tuning knobs', () => {
  const backend: Backend = { backend: 'x', target: 'x', profile: 'core' };
  const tools = [
    tool(backend, 'photo_upload', 'Upload a picture to the album.'),
    tool(backend, 'weather', 'Weather forecast for a city.'),
  ];

  it('refuses unknown or out-of-range knobs, and the knobs of dropped stages', () => {
    expect(
      () => new ToolCatalog({ tools, tuning: { k2: 1 } as never }),
    ).toThrow(/unknown knob "k2"/);
    expect(
      () => new ToolCatalog({ tools, tuning: { bag: { name: -1 } } }),
    ).toThrow(/"bag\.name" must be a non-negative number/);
    expect(() => new ToolCatalog({ tools, tuning: { b: 2 } })).toThrow(
      /"b" must be a number from 0 to 1/,
    );
    for (const dropped of [
      'fields',
      'bagNormalization',
      'feedbackDocuments',
      'likelihoodWeight',
      'synonymWeight',
      'siblingWeight',
      'usageK1',
      'usageMu',
      'usageCap',
      'usageTextIdf',
      'groupIdfWeight',
    ])
      expect(
        () => new ToolCatalog({ tools, tuning: { [dropped]: 1 } as never }),
      ).toThrow(new RegExp(`unknown knob "${dropped}"`));
  });
});

describe('caps of the score bonuses', () => {
  it('a capped name-coverage bonus cannot lift a weak match above a strong one', () => {
    const backend: Backend = { backend: 'x', target: 'x', profile: 'core' };
    const tools = [
      // Strong evidence in the description, a name the query does not cover.
      tool(
        backend,
        'lookup',
        'IP address details: country and city of an IP address, with network info.',
      ),
      // A short name that the query covers, weak evidence otherwise.
      tool(backend, 'get_info', 'General details.'),
    ];
    const query = 'get info about the IP address 1.2.3.4';
    const uncapped = new ToolCatalog({
      tools,
      tuning: { nameCoverageWeight: 1, nameCoverageCap: 0, relativeCutoff: 0 },
    });
    const capped = new ToolCatalog({
      tools,
      tuning: {
        nameCoverageWeight: 1,
        nameCoverageCap: 0.25,
        relativeCutoff: 0,
      },
    });
    expect(uncapped.search({ query }).hits[0]?.name).toBe('x_get_info');
    expect(capped.search({ query }).hits[0]?.name).toBe('x_lookup');
  });
});

describe('benchmark floors of the default search', () => {
  // The measured figures of the four development sets (README) minus 0.003, so a change
  // that loses ground on any set fails; and the plain BM25 reference stays below on each.
  // Each set is ranked once by each ranker.
  const cases = [
    { set: 'livemcpbench', nDCG: 0.375, recall: 0.366, plain: [0.343, 0.363] },
    { set: 'metatool', nDCG: 0.572, recall: 0.646, plain: [0.504, 0.562] },
    { set: 'gorilla-hf', nDCG: 0.281, recall: 0.35, plain: [0.232, 0.271] },
    { set: 'seal-tools', nDCG: 0.928, recall: 0.906, plain: [0.908, 0.874] },
  ] as const;
  for (const { set, nDCG, recall, plain: reference } of cases) {
    it(`${set}: nDCG@10 >= ${nDCG}, R@5 >= ${recall}, above plain BM25`, () => {
      const data = loadBenchmark({
        directory: fileURLToPath(new URL(`../data/${set}`, import.meta.url)),
      });
      const ours = evaluateRankings({
        queries: data.queries,
        rankings: rankWithCatalog({ data, limit: 10 }),
      }).metrics;
      const plain = evaluateRankings({
        queries: data.queries,
        rankings: rankWithPlainBm25({ data, limit: 10 }),
      }).metrics;
      expect(plain['nDCG@10']).toBeCloseTo(reference[0], 2);
      expect(plain['R@5']).toBeCloseTo(reference[1], 2);
      expect(ours['nDCG@10']).toBeGreaterThanOrEqual(nDCG);
      expect(ours['R@5']).toBeGreaterThanOrEqual(recall);
      expect(ours['nDCG@10']).toBeGreaterThan(plain['nDCG@10']);
      expect(ours['R@5']).toBeGreaterThan(plain['R@5']);
    });
  }
});

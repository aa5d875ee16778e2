import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING } from './search-tuning.js';
import { ToolCatalog } from './catalog.js';
import { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
import type { Backend, ToolEntry } from './types.js';
import { codeOf } from './__fixtures__/error-code.js';

const adb: Backend = {
  backend: 'iksnerd/adb-mcp',
  target: 'adb',
  profile: 'android',
};

function tool(
  backend: Backend,
  name: string,
  description = '',
  extra: Partial<Parameters<typeof toolEntryFromMcpTool>[0]['tool']> = {},
): ToolEntry {
  return toolEntryFromMcpTool({
    backend,
    tool: { name, description, ...extra },
  });
}

/** A catalog of one `core` backend whose target is `target`, from `[name, description]` rows. */
function catalogOf(
  target: string,
  rows: ReadonlyArray<[name: string, description: string]>,
): ToolCatalog {
  const backend = { backend: target, target, profile: 'core' };
  return new ToolCatalog({
    tools: rows.map(([name, description]) => tool(backend, name, description)),
  });
}

function names(
  catalog: ToolCatalog,
  query: string,
  options: { profile?: string; target?: string; limit?: number } = {},
): string[] {
  return catalog.search({ query, ...options }).hits.map((hit) => hit.name);
}

describe('ToolCatalog basics', () => {
  it('holds the seed and finds tools by exact qualified name', () => {
    const catalog = ToolCatalog.fromSeed();
    expect(catalog.size).toBe(34);
    expect(catalog.list()).toHaveLength(34);
    expect(catalog.get('adb_tap')?.tool).toBe('tap');
    expect(catalog.get('tap')).toBeUndefined();
    expect(catalog.get('ADB_TAP')).toBeUndefined();
  });

  it('finds adb tools first for "android adb install apk"', () => {
    const hits = ToolCatalog.fromSeed().search({
      query: 'android adb install apk',
    }).hits;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]?.target).toBe('adb');
    const firstOther = hits.findIndex((hit) => hit.target !== 'adb');
    const lastAdb = hits.map((hit) => hit.target).lastIndexOf('adb');
    expect(firstOther === -1 || firstOther > lastAdb).toBe(true);
  });

  it('returns compact one-line hits with the mutating flag', () => {
    const catalog = new ToolCatalog({
      tools: [
        tool(adb, 'tap', 'Tap the\nscreen at a coordinate.'),
        tool(adb, 'list_devices', 'List devices.', {
          annotations: { readOnlyHint: true },
        }),
        tool(adb, 'describe_ui', 'x '.repeat(400)),
      ],
    });
    const [hit] = catalog.search({ query: 'tap screen' }).hits;
    expect(hit).toMatchObject({
      name: 'adb_tap',
      target: 'adb',
      description: 'Tap the screen at a coordinate.',
      mutating: true,
    });
    expect(catalog.search({ query: 'list devices' }).hits[0]).toMatchObject({
      name: 'adb_list_devices',
      mutating: false,
    });
  });
});

describe('exact names', () => {
  it('puts a tool whose qualified or bare name equals the query first', () => {
    const catalog = ToolCatalog.fromSeed();
    for (const entry of SEED_TOOLS) {
      expect(names(catalog, entry.name)[0]).toBe(entry.name);
      expect(names(catalog, entry.name.toUpperCase())[0]).toBe(entry.name);
      const bare = names(catalog, entry.tool);
      const owners = SEED_TOOLS.filter(
        (candidate) => candidate.tool === entry.tool,
      ).map((candidate) => candidate.name);
      expect(bare.slice(0, owners.length).sort()).toEqual(owners.sort());
    }
  });

  it('keeps an exact name first even when other tools repeat its words', () => {
    const catalog = catalogOf('x', [
      ['run', 'Run.'],
      ['run_tests', 'Run run run the tests, run them all. Run.'],
      ['run_lint', 'Run run run lint run run.'],
    ]);
    expect(names(catalog, 'run')[0]).toBe('x_run');
    expect(names(catalog, 'x_run')[0]).toBe('x_run');
  });
});

describe('matching rules', () => {
  it('returns no hits when no query word matches, and names those words', () => {
    const result = ToolCatalog.fromSeed().search({ query: 'kubernetes helm' });
    expect(result.hits).toEqual([]);
    expect(result.unmatchedTerms).toEqual(['kubernetes', 'helm']);
  });

  it('reports the query words that matched nothing next to the hits', () => {
    const result = ToolCatalog.fromSeed().search({
      query: 'decompile zorblax function',
    });
    expect(result.hits[0]?.name).toMatch(/decompile_function$/);
    expect(result.unmatchedTerms).toEqual(['zorblax']);
  });

  it('never matches substrings', () => {
    const catalog = catalogOf('x', [
      ['set_theme', 'Change the color theme.'],
      ['get_weather', 'Weather forecast.'],
      ['noop', 'Nothing.'],
    ]);
    expect(names(catalog, 'the')).toEqual([]);
    expect(names(catalog, 'them')).toEqual([]);
    expect(names(catalog, 'eat')).toEqual([]);
    expect(names(catalog, 'theme')).toEqual(['x_set_theme']);
  });

  it('cuts the list where scores fall off, not only at limit', () => {
    const catalog = ToolCatalog.fromSeed();
    const hits = catalog.search({
      query: 'capture screenshot image',
      limit: 20,
    }).hits;
    expect(hits[0]?.name).toBe('gui_screenshot');
    expect(hits.length).toBeLessThan(20);
    const best = hits[0]!.score;
    expect(
      hits.every((hit) => hit.score >= best * DEFAULT_TUNING.relativeCutoff),
    ).toBe(true);
  });

  it('respects limit', () => {
    expect(
      names(ToolCatalog.fromSeed(), 'function', { limit: 2 }),
    ).toHaveLength(2);
    expect(
      codeOf(() => ToolCatalog.fromSeed().search({ query: 'x', limit: 0 })),
    ).toBe('INVALID_ARGUMENT');
  });
});

describe('profiles and targets', () => {
  it('narrows to the active profile plus core', () => {
    const catalog = ToolCatalog.fromSeed();
    const hits = catalog.search({
      query: 'list devices directory functions',
      profile: 'android',
      limit: 50,
    }).hits;
    expect(hits.length).toBeGreaterThan(0);
    const profiles = new Set(hits.map((hit) => catalog.get(hit.name)?.profile));
    expect(
      [...profiles].every(
        (profile) => profile === 'android' || profile === 'core',
      ),
    ).toBe(true);
    expect(profiles.has('core')).toBe(true);
    expect(
      names(catalog, 'decompile function', { profile: 'android' }),
    ).toEqual([]);
  });

  it('finds an exact qualified name outside the active profile, but not a bare one', () => {
    const catalog = ToolCatalog.fromSeed();
    expect(names(catalog, 'adb_tap', { profile: 'appsec' })).toEqual([
      'adb_tap',
    ]);
    expect(names(catalog, 'tap', { profile: 'appsec' })).not.toContain(
      'adb_tap',
    );
    expect(names(catalog, 'adb_tap', { target: 'maestro' })).not.toContain(
      'adb_tap',
    );
  });

  it('limits a search to one target', () => {
    const catalog = ToolCatalog.fromSeed();
    const hits = catalog.search({
      query: 'list devices',
      target: 'maestro',
    }).hits;
    expect(hits[0]?.name).toBe('maestro_list_devices');
    expect(hits.every((hit) => hit.target === 'maestro')).toBe(true);
    expect(names(catalog, 'decompile function', { target: 'radare2' })[0]).toBe(
      'radare2_decompile_function',
    );
  });
});

describe('replaceBackend and removeBackend', () => {
  it('replaces one backend and leaves the others', () => {
    const catalog = ToolCatalog.fromSeed();
    catalog.replaceBackend('adb', [
      tool(
        adb,
        'install_apk',
        'Install an APK package file on an Android device.',
      ),
      tool(adb, 'tap', 'Tap.'),
    ]);
    expect(catalog.size).toBe(34 - 3 + 2);
    expect(catalog.get('adb_describe_ui')).toBeUndefined();
    expect(catalog.get('adb_install_apk')?.source).toBe('discovered');
    expect(names(catalog, 'install apk')[0]).toBe('adb_install_apk');
    expect(catalog.get('maestro_run')).toBeDefined();
  });

  it('adds a target it did not know', () => {
    const catalog = ToolCatalog.fromSeed();
    const extra = { backend: 'weather', target: 'weather', profile: 'core' };
    catalog.replaceBackend('weather', [
      tool(extra, 'forecast', 'Weather forecast for a city.'),
    ]);
    expect(names(catalog, 'weather forecast')[0]).toBe('weather_forecast');
  });

  it('removes a backend', () => {
    const catalog = ToolCatalog.fromSeed();
    catalog.removeBackend('gui');
    expect(catalog.size).toBe(30);
    expect(names(catalog, 'screenshot')).not.toContain('gui_screenshot');
    catalog.removeBackend('nothing-here');
    expect(catalog.size).toBe(30);
  });

  it('works with catalogs of 0, 1 and 2 tools', () => {
    const catalog = new ToolCatalog();
    expect(catalog.search({ query: 'tap' })).toEqual({
      hits: [],
      unmatchedTerms: ['tap'],
    });
    catalog.replaceBackend('adb', [tool(adb, 'tap', 'Tap the screen.')]);
    expect(names(catalog, 'tap screen')).toEqual(['adb_tap']);
    catalog.replaceBackend('adb', [
      tool(adb, 'tap', 'Tap the screen.'),
      tool(adb, 'swipe', 'Swipe on the screen.'),
    ]);
    expect(names(catalog, 'swipe')).toEqual(['adb_swipe']);
    catalog.removeBackend('adb');
    expect(catalog.size).toBe(0);
    expect(catalog.search({ query: 'swipe' }).hits).toEqual([]);
  });

  it('rejects duplicate names in one replace and changes nothing', () => {
    const catalog = ToolCatalog.fromSeed();
    expect(
      codeOf(() =>
        catalog.replaceBackend('adb', [tool(adb, 'tap'), tool(adb, 'tap')]),
      ),
    ).toBe('DUPLICATE_TOOL');
    expect(() =>
      catalog.replaceBackend('adb', [tool(adb, 'tap'), tool(adb, 'tap')]),
    ).toThrow(/"adb_tap" appears more than once/);
    expect(catalog.size).toBe(34);
    expect(catalog.get('adb_describe_ui')).toBeDefined();
  });

  it('rejects tools of another target and duplicate names at construction', () => {
    const catalog = ToolCatalog.fromSeed();
    expect(
      codeOf(
        () =>
          new ToolCatalog({
            tools: [{ ...tool(adb, 'tap'), name: 'adb_other' }],
          }),
      ),
    ).toBe('INVALID_TOOL');
    expect(
      codeOf(
        () =>
          new ToolCatalog({
            tools: [{ ...tool(adb, 'tap'), target: 'a_b', name: 'a_b_tap' }],
          }),
      ),
    ).toBe('INVALID_TARGET');
    expect(
      codeOf(() => catalog.replaceBackend('maestro', [tool(adb, 'tap')])),
    ).toBe('INVALID_TOOL');
    expect(
      codeOf(
        () => new ToolCatalog({ tools: [tool(adb, 'tap'), tool(adb, 'tap')] }),
      ),
    ).toBe('DUPLICATE_TOOL');
  });
});

describe('bad input', () => {
  const catalog = ToolCatalog.fromSeed();

  it('answers an empty or blank query with nothing', () => {
    expect(catalog.search({ query: '' })).toEqual({
      hits: [],
      unmatchedTerms: [],
    });
    expect(catalog.search({ query: '   \n\t' })).toEqual({
      hits: [],
      unmatchedTerms: [],
    });
    expect(catalog.search({ query: 'the of and' }).hits).toEqual([]);
  });

  it('handles a 10 KB query', () => {
    const query = 'decompile function '.repeat(600);
    expect(query.length).toBeGreaterThan(10_000);
    expect(names(catalog, query)[0]).toMatch(/decompile_function$/);
  });

  it('handles unicode queries and descriptions', () => {
    const local = catalogOf('cn', [
      ['bing_search', '使用必应搜索指定的关键词'],
      ['fetch_webpage', '获取网页的内容'],
      ['résumé_parse', 'Analyse un CV en français 🚀'],
    ]);
    expect(names(local, '搜索关键词')[0]).toBe('cn_bing_search');
    expect(names(local, 'français')[0]).toBe('cn_résumé_parse');
    expect(local.search({ query: '🚀🚀' }).hits).toEqual([]);
    expect(catalog.search({ query: 'ÄÖÜ 😀 \u0000' }).hits).toEqual([]);
  });

  it('indexes a tool with no description or a schema that is not an object', () => {
    const local = new ToolCatalog({
      tools: [
        tool(adb, 'reboot_device'),
        tool(adb, 'odd_schema', 'Odd.', { inputSchema: 42 }),
        {
          ...tool(adb, 'raw_schema', 'Raw.'),
          inputSchema: { properties: 'nope' } as Record<string, unknown>,
        },
      ],
    });
    expect(names(local, 'reboot')).toEqual(['adb_reboot_device']);
    expect(names(local, 'odd')).toEqual(['adb_odd_schema']);
  });

  it('rejects a query that is not a string', () => {
    expect(
      codeOf(() => catalog.search({ query: 42 as unknown as string })),
    ).toBe('INVALID_ARGUMENT');
  });
});

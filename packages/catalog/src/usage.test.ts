import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { toolEntryFromMcpTool } from './entries.js';
import type { Backend, ToolEntry } from './types.js';
import { MAX_USES, MAX_USES_PER_TOOL, UsageStore } from './usage.js';
import { codeOf } from './__fixtures__/error-code.js';

const files: Backend = { backend: 'files', target: 'files', profile: 'core' };
const media: Backend = { backend: 'media', target: 'media', profile: 'core' };
const tool = (backend: Backend, name: string, description: string): ToolEntry =>
  toolEntryFromMcpTool({ backend, tool: { name, description } });

const tools = [
  tool(
    files,
    'write_file',
    'Create or overwrite a file with the given content.',
  ),
  tool(files, 'read_file', 'Read the content of a file.'),
  tool(files, 'list_directory', 'List the entries of a directory.'),
  tool(media, 'resize_image', 'Scale an image to a new width and height.'),
  tool(media, 'convert_video', 'Convert a video to another container format.'),
];
const names = (catalog: ToolCatalog, query: string): string[] =>
  catalog.search({ query }).hits.map((hit) => hit.name);

describe('learning from use', () => {
  it('ranks a tool higher for requests like the ones after which it was called', () => {
    const catalog = new ToolCatalog({ tools });
    const query = 'save the quarterly report as markdown';
    // "save" and "report" appear in no tool's text; before any use nothing matches well.
    expect(names(catalog, query)).not.toContain('files_write_file');
    for (const request of [
      'save the summary as a markdown report',
      'save my notes to report.md',
      'save this report to disk',
    ])
      catalog.recordUse({ query: request, tool: 'files_write_file' });
    expect(names(catalog, query)[0]).toBe('files_write_file');
    expect(catalog.search({ query }).unmatchedTerms).not.toContain('save');
  });

  it('leaves a query that shares no word with past requests alone', () => {
    const fresh = new ToolCatalog({ tools });
    const learned = new ToolCatalog({ tools });
    for (let use = 0; use < 20; use += 1)
      learned.recordUse({
        query: 'save the markdown report',
        tool: 'files_write_file',
      });
    for (const query of [
      'resize an image to 200 pixels wide',
      'convert this video',
      'list the directory entries',
    ])
      expect(learned.search({ query })).toEqual(fresh.search({ query }));
    // Never injected: a query that matches nothing still gets nothing.
    expect(names(learned, 'quantum chromodynamics')).toEqual([]);
  });

  it('accepts already analyzed terms, which is what searchTerms gives', () => {
    const catalog = new ToolCatalog({ tools });
    const terms = catalog.searchTerms('Saving the Reports to Markdown files');
    expect(terms).toEqual(['save', 'report', 'markdown', 'file']);
    catalog.recordUse({ terms, tool: 'files_write_file' });
    expect(catalog.usage()).toEqual([{ tool: 'files_write_file', terms }]);
    expect(names(catalog, 'save a report')[0]).toBe('files_write_file');
  });

  it('saves and loads the learned state', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({ query: 'save the report', tool: 'files_write_file' });
    catalog.recordUse({ query: 'shrink a photo', tool: 'media_resize_image' });
    const saved = catalog.usage();
    const restored = new ToolCatalog({ tools });
    restored.loadUsage(JSON.parse(JSON.stringify(saved)));
    expect(restored.usage()).toEqual(saved);
    expect(restored.search({ query: 'shrink my photo' })).toEqual(
      catalog.search({ query: 'shrink my photo' }),
    );
  });

  it('refuses malformed uses and changes nothing', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({ query: 'save the report', tool: 'files_write_file' });
    const before = catalog.usage();
    expect(
      codeOf(() => catalog.recordUse({ query: 'x', tool: 'no-target' })),
    ).toBe('INVALID_USAGE');
    expect(
      codeOf(() =>
        catalog.recordUse({ terms: [1 as unknown as string], tool: 'a_b' }),
      ),
    ).toBe('INVALID_USAGE');
    expect(
      codeOf(() =>
        catalog.loadUsage([
          { tool: 'files_read_file', terms: ['read'] },
          { tool: 'files_read_file' } as never,
        ]),
      ),
    ).toBe('INVALID_USAGE');
    expect(catalog.usage()).toEqual(before);
  });

  it('drops the evidence of tools that disappear when their backend is replaced, keeps the rest', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({ query: 'save a report', tool: 'files_write_file' });
    catalog.recordUse({ query: 'open my notes', tool: 'files_read_file' });
    catalog.recordUse({ query: 'shrink a photo', tool: 'media_resize_image' });
    catalog.replaceBackend(
      'files',
      tools.filter(
        (entry) =>
          entry.target === 'files' && entry.name !== 'files_write_file',
      ),
    );
    expect(catalog.usage().map((record) => record.tool)).toEqual([
      'files_read_file',
      'media_resize_image',
    ]);
    catalog.removeBackend('media');
    expect(catalog.usage().map((record) => record.tool)).toEqual([
      'files_read_file',
    ]);
  });

  it('keeps evidence for a tool whose backend has not been discovered yet', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({ query: 'tap the screen', tool: 'adb_tap' });
    catalog.replaceBackend('files', tools.slice(0, 3));
    expect(catalog.usage()).toHaveLength(1);
    const adb: Backend = { backend: 'adb', target: 'adb', profile: 'core' };
    catalog.replaceBackend('adb', [tool(adb, 'tap', 'Tap at a point.')]);
    expect(names(catalog, 'tap the screen')[0]).toBe('adb_tap');
  });

  it('holds its caps per tool and overall, forgetting the oldest first', () => {
    const store = new UsageStore();
    for (let use = 0; use < MAX_USES_PER_TOOL + 5; use += 1)
      store.add('a_tool', [`word${use}`]);
    expect(store.size).toBe(MAX_USES_PER_TOOL);
    expect(store.records()[0]?.terms).toEqual(['word5']);
    expect(store.postings('word0')).toBeUndefined();
    for (let use = 0; use < MAX_USES + 10; use += 1)
      store.add(`t${use % 400}_x`, ['common', `w${use}`]);
    expect(store.size).toBe(MAX_USES);
    expect(store.records()).toHaveLength(MAX_USES);
    // The oldest went first: the per-tool list of a_tool is gone, the first uses too.
    expect(store.records().some((record) => record.tool === 'a_tool')).toBe(
      false,
    );
    expect(store.postings('w0')).toBeUndefined();
    expect(store.postings(`w${MAX_USES + 9}`)?.size).toBe(1);
    expect(store.requestFrequency('common')).toBe(MAX_USES);
  });

  it('sees each new use at the next search', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({ query: 'shrink a photo', tool: 'media_resize_image' });
    expect(names(catalog, 'shrink a photo')).toEqual(['media_resize_image']);
    expect(names(catalog, 'archive the logs')).toEqual([]);
    catalog.recordUse({ query: 'archive the logs', tool: 'files_write_file' });
    expect(names(catalog, 'archive the logs')).toEqual(['files_write_file']);
    catalog.loadUsage([]);
    expect(names(catalog, 'shrink a photo')).toEqual([]);
  });

  it('keeps at most 64 terms of one request', () => {
    const catalog = new ToolCatalog({ tools });
    catalog.recordUse({
      terms: Array.from({ length: 100 }, (_, index) => `t${index}`),
      tool: 'files_read_file',
    });
    expect(catalog.usage()[0]?.terms).toHaveLength(64);
  });
});

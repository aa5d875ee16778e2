import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** The files a source file imports through relative paths. */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)].map((match) =>
    join(dirname(file), `${match[1]}.ts`),
  );
}

/** The source files reachable from `entry` through relative imports. */
function reachable(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const imported of importsOf(file, text)) visit(imported);
  };
  visit(join(here, entry));
  return files;
}

// Knobs of the stages that the search no longer has (record in docs/history.md), of the
// fusion it no longer offers, and names of the saved forms it no longer has.
const DROPPED = [
  'bagNormalization',
  'FieldTuning',
  'feedbackDocuments',
  'feedbackTerms',
  'feedbackWeight',
  'likelihoodWeight',
  'likelihoodMu',
  'fusionK',
  'synonymWeight',
  'synonyms',
  'siblingWeight',
  'siblingCap',
  'usageK1',
  'usageMu',
  'usageCap',
  'usageTextIdf',
  'groupIdfWeight',
  'idfExponent',
  'queryTermSaturation',
  'usageB',
  'rrf',
  'fuseRankings',
  'exportBackend',
  'importBackends',
  'saveBackend',
  'restoreBackends',
  'IndexPart',
  'INDEX_PART',
  'SavedBackend',
  'saveCatalogAsync',
];

describe('the search path', () => {
  it('holds no knob of a dropped stage in any module the main entry reaches', () => {
    const files = reachable('index.ts');
    expect(files.size).toBeGreaterThan(10);
    expect(
      [...files.keys()].some((file) => file.endsWith('search-tuning.ts')),
    ).toBe(true);
    for (const [file, text] of files)
      for (const knob of DROPPED)
        expect(text.includes(knob), `${file} names ${knob}`).toBe(false);
  });
});

describe('the module graph', () => {
  it('is reached from one entry, the package main, which ships no evaluation harness', () => {
    const manifest = JSON.parse(
      readFileSync(join(here, '../package.json'), 'utf8'),
    ) as { exports: Record<string, unknown>; bin?: unknown };
    expect(Object.keys(manifest.exports)).toEqual(['./package.json', '.']);
    expect(manifest.bin).toBeUndefined();
    const names = [...reachable('index.ts').keys()].map((file) =>
      file.slice(here.length + 1),
    );
    for (const lab of [
      'evaluate.ts',
      'plain-bm25.ts',
      'selection.ts',
      'cli.ts',
    ])
      expect(names).not.toContain(lab);
    // One saved form: the whole saved catalog.
    expect(names.filter((name) => name.startsWith('saved-')).sort()).toEqual([
      'saved-catalog.ts',
      'saved-tools.ts',
    ]);
  });

  it('makes no tool entry on the hybrid path beyond the hits the lexical path builds', () => {
    const hybrid = reachable('index.ts').get(join(here, 'hybrid.ts')) ?? '';
    expect(hybrid).toContain('hitsOf(');
    expect(hybrid).not.toMatch(/toolAt\(|\.entry\b/);
  });

  it('has no import circle from the main entry', () => {
    const files = reachable('index.ts');
    const done = new Set<string>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (path.includes(file)) {
        circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      if (done.has(file)) return;
      for (const imported of importsOf(file, files.get(file) ?? ''))
        visit(imported, [...path, file]);
      done.add(file);
    };
    for (const file of files.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});

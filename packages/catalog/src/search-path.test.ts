import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** The source files reachable from `entry` through relative imports. */
function reachable(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const match of text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g))
      visit(join(dirname(file), `${match[1]}.ts`));
  };
  visit(join(here, entry));
  return files;
}

// Knobs of the stages that the search no longer has (record in the package README).
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
];

describe('the search path', () => {
  it('holds no knob of a dropped stage in any module the main entry reaches', () => {
    const files = reachable('index.ts');
    expect(files.size).toBeGreaterThan(10);
    expect([...files.keys()].some((file) => file.endsWith('bm25f.ts'))).toBe(
      true,
    );
    for (const [file, text] of files)
      for (const knob of DROPPED)
        expect(text.includes(knob), `${file} names ${knob}`).toBe(false);
  });
});

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The A2A files the conformance tests read are unmodified upstream copies:
// each one's SHA-256 is the one SOURCE.md records next to its origin.
const FIXTURES = new URL('./__fixtures__/a2a/', import.meta.url);

describe('A2A fixtures', () => {
  it('match the SHA-256 recorded in SOURCE.md, with the licence beside them', () => {
    const source = readFileSync(new URL('SOURCE.md', FIXTURES), 'utf8');
    const rows = [
      ...source.matchAll(/^\| `([^`]+)`\s*\|.*\|\s*`([0-9a-f]{64})`\s*\|$/gm),
    ];
    expect(rows.map(([, file]) => file).sort()).toEqual([
      'LICENSE',
      'a2a.proto',
      'a2a.v0.3.0.schema.json',
    ]);
    for (const [, file, sha256] of rows) {
      const bytes = readFileSync(new URL(file as string, FIXTURES));
      expect(createHash('sha256').update(bytes).digest('hex'), file).toBe(
        sha256,
      );
    }
    expect(readFileSync(new URL('LICENSE', FIXTURES), 'utf8')).toMatch(
      /^\s*Apache License\s+Version 2\.0, January 2004/,
    );
    expect(source).toContain('https://github.com/a2aproject/A2A');
  });
});

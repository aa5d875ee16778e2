import { describe, expect, it } from 'vitest';
import {
  changeSummary,
  definitionHash,
  describeChange,
  diffDefinitions,
  isChanged,
  normalizeDefinition,
} from './definition-hash.js';

const base = {
  name: 'files_write_note',
  description: 'Write a note.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  },
  annotations: { readOnlyHint: true, title: 'Write note' },
};

describe('normalizeDefinition', () => {
  it('fills absent parts, and returns a definition of exactly the four parts as it is', () => {
    expect(normalizeDefinition(base)).toBe(base);
    expect(normalizeDefinition({ name: 'a_b' })).toEqual({
      name: 'a_b',
      description: '',
      inputSchema: {},
      annotations: {},
    });
    const withHash = { ...base, hash: 'sha256:00' };
    expect(normalizeDefinition(withHash)).toEqual(base);
    expect(definitionHash(withHash)).toBe(definitionHash(base));
  });
});

describe('definitionHash', () => {
  it('is a sha256 tag over canonical JSON: key order and number spelling do not matter', () => {
    const reordered = {
      annotations: { title: 'Write note', readOnlyHint: true },
      inputSchema: {
        required: ['text'],
        properties: { text: { type: 'string' } },
        type: 'object',
      },
      description: 'Write a note.',
      name: 'files_write_note',
    };
    expect(definitionHash(base)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(definitionHash(reordered)).toBe(definitionHash(base));
    expect(
      definitionHash({
        ...base,
        inputSchema: { ...base.inputSchema, maxLength: 1e2 },
      }),
    ).toBe(
      definitionHash({
        ...base,
        inputSchema: { ...base.inputSchema, maxLength: 100 },
      }),
    );
  });

  it('changes with every part, and absent parts hash like empty ones', () => {
    const hashes = new Set([
      definitionHash(base),
      definitionHash({ ...base, name: 'files_write_notes' }),
      definitionHash({ ...base, description: 'Write a note!' }),
      definitionHash({ ...base, description: 'Write a note.\u200B' }),
      definitionHash({ ...base, inputSchema: { type: 'object' } }),
      definitionHash({ ...base, annotations: { readOnlyHint: false } }),
    ]);
    expect(hashes.size).toBe(6);
    expect(definitionHash({ name: 'a' })).toBe(
      definitionHash({
        name: 'a',
        description: '',
        inputSchema: {},
        annotations: {},
      }),
    );
  });
});

describe('diffDefinitions', () => {
  it('names each changed part', () => {
    expect(diffDefinitions(base, { ...base })).toEqual({
      parts: [],
      becameMutating: false,
    });
    const change = diffDefinitions(base, {
      ...base,
      description: 'Write a note. Also read ~/.ssh.',
      inputSchema: { type: 'object', properties: { text: { type: 'number' } } },
    });
    expect(change).toEqual({
      parts: ['description', 'schema'],
      becameMutating: false,
    });
    expect(isChanged(change)).toBe(true);
    expect(changeSummary(change)).toBe('description and input schema');
  });

  it('records a read-only tool turned mutating, also when readOnlyHint is only dropped', () => {
    for (const annotations of [
      { readOnlyHint: false },
      { title: 'Write note' },
      undefined,
    ]) {
      const change = diffDefinitions(base, { ...base, annotations });
      expect(change.becameMutating).toBe(true);
      expect(change.parts).toEqual(['annotations']);
      expect(changeSummary(change)).toBe(
        'annotations; it was read-only and is now mutating',
      );
    }
    expect(
      diffDefinitions({ ...base, annotations: {} }, base).becameMutating,
    ).toBe(false);
  });
});

describe('describeChange', () => {
  it('shows old and new description, schema properties and annotation values', () => {
    const lines = describeChange(base, {
      ...base,
      description: 'Write a note and mail it.',
      inputSchema: {
        type: 'object',
        properties: {
          text: { type: 'string', maxLength: 5 },
          to: { type: 'string' },
        },
        required: ['text', 'to'],
      },
      annotations: { readOnlyHint: false, title: 'Write note' },
    });
    expect(lines).toEqual([
      'was read-only, is now mutating',
      'description was "Write a note."',
      'description is now "Write a note and mail it."',
      'input schema changed: added to; changed text; now required to',
      'annotations changed: readOnlyHint true -> false',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from './argument-validator.js';

const schemaFor = (
  dialect: string | undefined,
  id?: string,
): Record<string, unknown> => ({
  ...(dialect === undefined ? {} : { $schema: dialect }),
  ...(id === undefined ? {} : { $id: id }),
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
});

describe('ArgumentValidator', () => {
  it.each([
    ['no $schema (2020-12)', undefined],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['draft-07', 'http://json-schema.org/draft-07/schema#'],
    ['draft-06', 'http://json-schema.org/draft-06/schema#'],
    ['draft-04', 'http://json-schema.org/draft-04/schema#'],
  ])('checks arguments against a %s schema', (_name, dialect) => {
    const validator = new ArgumentValidator();
    const schema = schemaFor(dialect);
    expect(validator.check(schema, { path: 'a' })).toEqual({ ok: true });
    expect(validator.check(schema, { path: 1 })).toEqual({
      ok: false,
      problems: ['arguments/path: must be string'],
    });
  });

  it('keeps checking schemas that share an $id, including a tool re-discovered with a fresh schema object', () => {
    const validator = new ArgumentValidator();
    const first = schemaFor(undefined, 'urn:tool:input');
    const again = schemaFor(undefined, 'urn:tool:input');
    expect(validator.check(first, {})).toMatchObject({ ok: false });
    expect(validator.check(again, {})).toEqual({
      ok: false,
      problems: ['arguments: missing required property "path"'],
    });
  });

  it('reports a schema it cannot compile as unchecked, with the reason', () => {
    const result = new ArgumentValidator().check(
      { type: 'object', properties: { a: { $ref: '#/nowhere' } } },
      {},
    );
    expect(result.ok).toBe('unchecked');
  });
});

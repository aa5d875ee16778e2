import { MAX_SEARCH_LIMIT } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/internal';
import { describe, expect, it } from 'vitest';
import { BrokerError } from './errors.js';
import {
  META_TOOL_SCHEMAS,
  parseCallArguments,
  parseInspectArguments,
  parseSearchArguments,
} from './meta-arguments.js';

function refusal(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(BrokerError.isInstance(error)).toBe(true);
    return `${(error as BrokerError).code}: ${(error as Error).message}`;
  }
  throw new Error('expected a refusal');
}

describe('META_TOOL_SCHEMAS', () => {
  it('lists exactly the documented schemas, made from the zod schemas', () => {
    expect(META_TOOL_SCHEMAS).toEqual({
      mcp_search_tools: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            description: 'Task in plain words, or a tool name',
          },
          profile: { type: 'string', enum: [...PROFILE_NAMES] },
          target: {
            type: 'string',
            description: 'Only this backend; without query, lists its tools',
          },
          limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT },
          offset: { type: 'integer', minimum: 0 },
        },
      },
      mcp_inspect_schema: {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
      },
      mcp_call_tool: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          arguments: { type: 'object' },
        },
        required: ['name'],
      },
    });
  });
});

describe('meta-tool arguments', () => {
  it('accepts what the schemas allow and keeps only what was given', () => {
    expect(
      parseSearchArguments({
        query: 'x',
        profile: 'core',
        limit: 5,
        offset: 3,
      }),
    ).toEqual({ query: 'x', profile: 'core', limit: 5, offset: 3 });
    expect(parseSearchArguments({ target: 'adb' })).toEqual({ target: 'adb' });
    expect(parseInspectArguments({ name: 'adb_tap' })).toEqual({
      name: 'adb_tap',
    });
    expect(parseCallArguments({ name: 'adb_tap' })).toEqual({
      name: 'adb_tap',
    });
  });

  it.each([
    [
      parseSearchArguments,
      { query: 42 },
      '- query must be a string, got number 42',
    ],
    [
      parseSearchArguments,
      { query: 'x', limit: 0 },
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got number 0`,
    ],
    [
      parseSearchArguments,
      { query: 'x', limit: 2.5 },
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got number 2.5`,
    ],
    [
      parseSearchArguments,
      { target: 'adb', offset: 100_001 },
      '- offset must be an integer from 0 to 100000, got number 100001',
    ],
    [
      parseSearchArguments,
      { query: 'x', profile: 'andr0id' },
      `- profile must be one of ${PROFILE_NAMES.join(', ')}, got the string "andr0id"`,
    ],
    [
      parseSearchArguments,
      { query: ' ' },
      '- give a query (a task in plain words, or a tool name), or a target to list its tools',
    ],
    [
      parseSearchArguments,
      { query: 'x', a: 1, b: 2 },
      '- unknown properties "a", "b"; allowed: query, profile, target, limit, offset',
    ],
    [parseSearchArguments, null, '- arguments must be an object, got null'],
    [parseInspectArguments, {}, '- missing required property "name"'],
    [
      parseInspectArguments,
      { name: '' },
      '- name is empty: give the exact tool name from mcp_search_tools',
    ],
    [
      parseCallArguments,
      { name: 'a', arguments: [1] },
      "- arguments must be an object of the tool's arguments, got an array",
    ],
    [parseCallArguments, { name: null }, '- name must be a string, got null'],
  ] as const)('%o refuses %j naming the field', (parse, input, line) => {
    const text = refusal(() => (parse as (input: unknown) => unknown)(input));
    expect(text).toMatch(
      /^INVALID_ARGUMENTS: Arguments for mcp_\w+ do not match its schema:\n- /,
    );
    expect(text.split('\n')).toContain(line);
  });

  it('names every problem at once', () => {
    const text = refusal(() =>
      parseSearchArguments({ query: 1, limit: 'ten', extra: true }),
    );
    expect(text.split('\n').slice(1)).toEqual([
      '- query must be a string, got number 1',
      `- limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got the string "ten"`,
      '- unknown property "extra"; allowed: query, profile, target, limit, offset',
    ]);
  });

  it('copies the tool arguments onto a plain object (own properties only)', () => {
    const input = JSON.parse(
      '{"name":"core_read_file","arguments":{"__proto__":{"path":"x"},"a":1}}',
    ) as unknown;
    const parsed = parseCallArguments(input);
    expect(Object.getPrototypeOf(parsed.arguments)).toBe(Object.prototype);
    expect((parsed.arguments as { path?: string }).path).toBeUndefined();
  });
});

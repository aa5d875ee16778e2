import { MAX_SEARCH_LIMIT } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/internal';
import { BrokerError, quote } from './errors.js';

/** Arguments of `mcp_search_tools`: a query, or a target to browse, or both. */
export type SearchArguments = {
  query?: string;
  profile?: string;
  target?: string;
  limit?: number;
  offset?: number;
};
/** Arguments of `mcp_inspect_schema`. */
export type InspectArguments = { name: string };
/** Arguments of `mcp_call_tool`. */
export type CallArguments = {
  name: string;
  arguments?: Record<string, unknown>;
};

/** Largest `offset` accepted when browsing a target. */
export const MAX_BROWSE_OFFSET = 100_000;

/**
 * The three meta-tools' input schemas as listed in `tools/list`. Every word
 * here is paid by every agent on every turn: keep them few and exact. The
 * checks in this module enforce exactly these schemas (the test pins both).
 */
export const META_TOOL_SCHEMAS = {
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
} as const;

type MetaTool = keyof typeof META_TOOL_SCHEMAS;

/** A short, capped description of a value's type, for messages. */
function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${quote(value, 40)}`;
  if (typeof value === 'number' || typeof value === 'boolean')
    return `${typeof value} ${String(value).slice(0, 40)}`;
  return `a value of type ${typeof value}`;
}

function refuse(tool: MetaTool, problems: string[]): never {
  throw new BrokerError({
    code: 'INVALID_ARGUMENTS',
    message: `Arguments for ${tool} do not match its schema:\n${problems
      .map((p) => `- ${p}`)
      .join('\n')}`,
  });
}

function own(args: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(args, key)
    ? args[key]
    : undefined;
}

function checkObject(
  tool: MetaTool,
  args: unknown,
): { args: Record<string, unknown>; problems: string[] } {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    refuse(tool, [`arguments must be an object, got ${kind(args)}`]);
  }
  const record = args as Record<string, unknown>;
  const allowed = Object.keys(META_TOOL_SCHEMAS[tool].properties);
  const problems: string[] = [];
  const unknown = Object.keys(record).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    problems.push(
      `unknown ${unknown.length === 1 ? 'property' : 'properties'} ${unknown
        .slice(0, 5)
        .map((k) => quote(k, 40))
        .join(
          ', ',
        )}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}; allowed: ${allowed.join(', ')}`,
    );
  }
  return { args: record, problems };
}

function optionalString(
  record: Record<string, unknown>,
  key: string,
  problems: string[],
): string | undefined {
  const value = own(record, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    problems.push(`${key} must be a string, got ${kind(value)}`);
    return undefined;
  }
  return value;
}

function optionalInteger(
  record: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
  problems: string[],
): number | undefined {
  const value = own(record, key);
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < min ||
    value > max
  ) {
    problems.push(
      `${key} must be an integer from ${min} to ${max}, got ${kind(value)}`,
    );
    return undefined;
  }
  return value;
}

/** Checks `mcp_search_tools` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseSearchArguments(input: unknown): SearchArguments {
  const { args, problems } = checkObject('mcp_search_tools', input);
  const query = optionalString(args, 'query', problems);
  const profile = optionalString(args, 'profile', problems);
  const target = optionalString(args, 'target', problems);
  const limit = optionalInteger(args, 'limit', 1, MAX_SEARCH_LIMIT, problems);
  const offset = optionalInteger(
    args,
    'offset',
    0,
    MAX_BROWSE_OFFSET,
    problems,
  );
  if (
    profile !== undefined &&
    !(PROFILE_NAMES as readonly string[]).includes(profile)
  ) {
    problems.push(
      `profile must be one of ${PROFILE_NAMES.join(', ')}, got ${quote(profile, 40)}`,
    );
  }
  if (
    problems.length === 0 &&
    (query ?? '').trim() === '' &&
    target === undefined
  ) {
    problems.push(
      'give a query (a task in plain words, or a tool name), or a target to list its tools',
    );
  }
  if (problems.length > 0) refuse('mcp_search_tools', problems);
  return {
    ...(query === undefined ? {} : { query }),
    ...(profile === undefined ? {} : { profile }),
    ...(target === undefined ? {} : { target }),
    ...(limit === undefined ? {} : { limit }),
    ...(offset === undefined ? {} : { offset }),
  };
}

function requiredName(
  tool: MetaTool,
  args: Record<string, unknown>,
  problems: string[],
): string {
  const name = own(args, 'name');
  if (name === undefined) problems.push('missing required property "name"');
  else if (typeof name !== 'string')
    problems.push(`name must be a string, got ${kind(name)}`);
  else if (name === '')
    problems.push(
      'name is empty: give the exact tool name from mcp_search_tools',
    );
  if (problems.length > 0) refuse(tool, problems);
  return name as string;
}

/** Checks `mcp_inspect_schema` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseInspectArguments(input: unknown): InspectArguments {
  const { args, problems } = checkObject('mcp_inspect_schema', input);
  return { name: requiredName('mcp_inspect_schema', args, problems) };
}

/** Checks `mcp_call_tool` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseCallArguments(input: unknown): CallArguments {
  const { args, problems } = checkObject('mcp_call_tool', input);
  const toolArguments = own(args, 'arguments');
  if (
    toolArguments !== undefined &&
    (typeof toolArguments !== 'object' ||
      toolArguments === null ||
      Array.isArray(toolArguments))
  ) {
    problems.push(
      `arguments must be an object of the tool's arguments, got ${kind(toolArguments)}`,
    );
  }
  const name = requiredName('mcp_call_tool', args, problems);
  return {
    name,
    // Own properties only, on a plain object: a `__proto__` key that a JSON
    // parser turned into a prototype must not satisfy the schema check.
    ...(toolArguments === undefined
      ? {}
      : {
          arguments: Object.fromEntries(
            Object.entries(toolArguments as Record<string, unknown>),
          ),
        }),
  };
}

import { MAX_SEARCH_LIMIT } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/internal';
import { z } from 'zod';
import { BrokerError } from './errors.js';
import { issueLines } from './issue-text.js';

/** Largest `offset` accepted when browsing a target. */
export const MAX_BROWSE_OFFSET = 100_000;

const text = (description?: string) => {
  const field = z.string({ error: 'a string' });
  return description === undefined ? field : field.describe(description);
};

/** Bounds checked but not listed: not worth their tokens in `tools/list`. */
const UNLISTED_MAXIMUM = new WeakSet<object>();

const integer = (
  min: number,
  max: number,
  options: { listMaximum: boolean } = { listMaximum: true },
) => {
  const error = `an integer from ${min} to ${max}`;
  const field = z.int({ error }).min(min, { error }).max(max, { error });
  if (!options.listMaximum) UNLISTED_MAXIMUM.add(field);
  return field;
};

const anObject = { error: 'an object' };

const toolName = text().refine((name) => name !== '', {
  error: 'is empty: give the exact tool name from mcp_search_tools',
  abort: true,
});

/**
 * The three meta-tools' arguments. Their JSON Schemas as listed in
 * `tools/list` ({@link META_TOOL_SCHEMAS}) come from these, and every word
 * there is paid by every agent on every turn: keep them few and exact
 * (`offset`'s maximum is checked but not listed).
 */
const META_TOOL_ARGUMENTS = {
  mcp_search_tools: z
    .strictObject(
      {
        query: text('Task in plain words, or a tool name').optional(),
        profile: z
          .enum(PROFILE_NAMES, {
            error: `one of ${PROFILE_NAMES.join(', ')}`,
          })
          .optional(),
        target: text(
          'Only this backend; without query, lists its tools',
        ).optional(),
        limit: integer(1, MAX_SEARCH_LIMIT).optional(),
        offset: integer(0, MAX_BROWSE_OFFSET, {
          listMaximum: false,
        }).optional(),
      },
      anObject,
    )
    .refine(
      (args) => (args.query ?? '').trim() !== '' || args.target !== undefined,
      {
        error:
          'give a query (a task in plain words, or a tool name), or a target to list its tools',
      },
    ),
  mcp_inspect_schema: z.strictObject({ name: toolName }, anObject),
  mcp_call_tool: z.strictObject(
    {
      name: toolName,
      arguments: z
        .record(z.string(), z.unknown(), {
          error: "an object of the tool's arguments",
        })
        .optional(),
    },
    anObject,
  ),
} as const;

type MetaTool = keyof typeof META_TOOL_ARGUMENTS;

/** Arguments of `mcp_search_tools`: a query, or a target to browse, or both. */
export type SearchArguments = z.output<
  (typeof META_TOOL_ARGUMENTS)['mcp_search_tools']
>;
/** Arguments of `mcp_inspect_schema`. */
export type InspectArguments = z.output<
  (typeof META_TOOL_ARGUMENTS)['mcp_inspect_schema']
>;
/** Arguments of `mcp_call_tool`. */
export type CallArguments = z.output<
  (typeof META_TOOL_ARGUMENTS)['mcp_call_tool']
>;

/**
 * A meta-tool's JSON Schema for `tools/list`: zod's, without what costs
 * tokens and says nothing to an agent (`$schema`, `additionalProperties`,
 * the safe-integer bounds of a bare integer, the key type of a record, an
 * unlisted maximum).
 */
function listedSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    override: ({ zodSchema, jsonSchema }) => {
      const node = jsonSchema as Record<string, unknown>;
      delete node.additionalProperties;
      delete node.propertyNames;
      if (
        node.maximum === Number.MAX_SAFE_INTEGER ||
        UNLISTED_MAXIMUM.has(zodSchema)
      ) {
        delete node.maximum;
      }
      if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/**
 * The three meta-tools' input schemas as listed in `tools/list`, made from
 * the zod schemas the arguments are checked with.
 */
export const META_TOOL_SCHEMAS = {
  mcp_search_tools: listedSchema(META_TOOL_ARGUMENTS.mcp_search_tools),
  mcp_inspect_schema: listedSchema(META_TOOL_ARGUMENTS.mcp_inspect_schema),
  mcp_call_tool: listedSchema(META_TOOL_ARGUMENTS.mcp_call_tool),
};

function parse<T extends MetaTool>(
  tool: T,
  input: unknown,
): z.output<(typeof META_TOOL_ARGUMENTS)[T]> {
  const schema = META_TOOL_ARGUMENTS[tool];
  const result = schema.safeParse(input);
  if (result.success) {
    return result.data as z.output<(typeof META_TOOL_ARGUMENTS)[T]>;
  }
  const problems = issueLines({
    issues: result.error.issues,
    input,
    allowed: Object.keys(
      (META_TOOL_SCHEMAS[tool] as { properties: object }).properties,
    ),
  });
  throw new BrokerError({
    code: 'INVALID_ARGUMENTS',
    message: `Arguments for ${tool} do not match its schema:\n${problems
      .map((problem) => `- ${problem}`)
      .join('\n')}`,
  });
}

/** Checks `mcp_search_tools` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseSearchArguments(input: unknown): SearchArguments {
  return parse('mcp_search_tools', input);
}

/** Checks `mcp_inspect_schema` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseInspectArguments(input: unknown): InspectArguments {
  return parse('mcp_inspect_schema', input);
}

/** Checks `mcp_call_tool` arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseCallArguments(input: unknown): CallArguments {
  const { name } = parse('mcp_call_tool', input);
  const toolArguments = (input as { arguments?: object }).arguments;
  return {
    name,
    // Own properties only, copied from the input onto a plain object: a
    // `__proto__` key that a JSON parser turned into a prototype must not
    // satisfy the schema check.
    ...(toolArguments === undefined
      ? {}
      : { arguments: Object.fromEntries(Object.entries(toolArguments)) }),
  };
}

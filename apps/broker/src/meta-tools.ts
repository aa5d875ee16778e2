import { MAX_SEARCH_LIMIT, renderHit } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/internal';
import { z } from 'zod';
import type { Broker, BrowseResult, SearchToolsResult } from './broker.js';
import { discoveringNote } from './call-pipeline.js';
import { BrokerError, quote, type BrokerErrorCode } from './errors.js';
import { errorText } from './error-text.js';
import { issueLines } from './issue-text.js';
import type { CallProgress, ToolCallResult } from './types.js';

/** Largest `offset` accepted when browsing a target. */
const MAX_BROWSE_OFFSET = 100_000;

const text = () => z.string({ error: 'a string' });

/** Bounds checked but not listed: not worth their tokens in `tools/list`. */
const UNLISTED_MAXIMUM = new WeakSet<object>();

const integer = (min: number, max: number, listMaximum = true) => {
  const error = `an integer from ${min} to ${max}`;
  const field = z.int({ error }).min(min, { error }).max(max, { error });
  if (!listMaximum) UNLISTED_MAXIMUM.add(field);
  return field;
};

const anObject = { error: 'an object' };

const toolName = text().refine((name) => name !== '', {
  error: 'is empty: give the exact tool name from mcp_search_tools',
  abort: true,
});

const searchInput = z
  .strictObject(
    {
      query: text().describe('Task in plain words, or a tool name').optional(),
      profile: z
        .enum(PROFILE_NAMES, { error: `one of ${PROFILE_NAMES.join(', ')}` })
        .optional(),
      target: text()
        .describe('Only this backend; without query, lists its tools')
        .optional(),
      limit: integer(1, MAX_SEARCH_LIMIT).optional(),
      offset: integer(0, MAX_BROWSE_OFFSET, false).optional(),
    },
    anObject,
  )
  .refine(
    (args) => (args.query ?? '').trim() !== '' || args.target !== undefined,
    {
      error:
        'give a query (a task in plain words, or a tool name), or a target to list its tools',
    },
  );

/** Checked arguments of `mcp_search_tools`: a query, or a target to browse, or both. */
type SearchArguments = z.output<typeof searchInput>;

const inspectInput = z.strictObject({ name: toolName }, anObject);

const callInput = z.strictObject(
  {
    name: toolName,
    arguments: z
      .record(z.string(), z.unknown(), {
        error: "an object of the tool's arguments",
      })
      .optional(),
  },
  anObject,
);

/** A meta-tool's JSON Schema for `tools/list`: zod's, without what costs tokens and says nothing to an agent. */
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

/** What a meta-tool's answer may use besides its arguments. */
type MetaToolContext = {
  broker: Broker;
  /** Sends `mcp_call_tool`'s checked call through the broker (with the stdio client's handlers, or a plugin's role). */
  call: (request: {
    name: string;
    arguments: Record<string, unknown>;
  }) => Promise<ToolCallResult>;
};

/** One meta-tool: everything `tools/list` shows of it, its input, and its answer. */
export type MetaToolDefinition<Input extends z.ZodType = z.ZodType> = {
  description: string;
  /** What the server `instructions` of the `initialize` answer say the tool is for (one line). */
  instructions: string;
  /** The zod schema its arguments are checked with (an editor plugin registers it as is). */
  input: Input;
  /** {@link MetaToolDefinition.input} as `tools/list` shows it. */
  inputSchema: Record<string, unknown>;
  /** Listed annotations (`readOnlyHint` for the tools that only read). */
  annotations?: { readOnlyHint: true };
  /** Answers checked arguments (`input` is what the caller sent). */
  answer: (
    args: z.output<Input>,
    context: MetaToolContext,
    input: unknown,
  ) => Promise<string | ToolCallResult>;
};

function metaTool<Input extends z.ZodType>(
  definition: Omit<MetaToolDefinition<Input>, 'inputSchema'>,
): MetaToolDefinition<Input> {
  return { ...definition, inputSchema: listedSchema(definition.input) };
}

/**
 * The broker's meta-tools, in the order `tools/list` shows them. Every word here is paid by
 * every agent on every turn: keep them few and exact.
 */
export const META_TOOLS = {
  mcp_search_tools: metaTool({
    description:
      'Find backend tools for a task. Returns exact names, one-line descriptions, mutating flags and query words that matched nothing.',
    instructions:
      "find tools for a task by a few words (optionally within a profile or a target); returns exact tool names. With a target and no query it lists that target's tools.",
    input: searchInput,
    annotations: { readOnlyHint: true },
    answer: (args, { broker }) => searchOrBrowse(broker, args),
  }),
  mcp_inspect_schema: metaTool({
    description: "Get a tool's full input schema by exact name.",
    instructions: 'the full input schema of one tool, by exact name.',
    input: inspectInput,
    annotations: { readOnlyHint: true },
    answer: async ({ name }, { broker }) =>
      JSON.stringify(await broker.inspectToolSchema(name)),
  }),
  mcp_call_tool: metaTool({
    description:
      'Call a tool by exact name. Arguments are checked against its schema first; read-only roles cannot call mutating tools.',
    instructions:
      'call a tool by exact name with its arguments; an exact name works without a search.',
    input: callInput,
    answer: ({ name }, { call }, input) =>
      call({ name, arguments: ownArguments(input) }),
  }),
} as const;

export type MetaToolName = keyof typeof META_TOOLS;

/** The meta-tools' names, in listing order. */
export const META_TOOL_NAMES = Object.keys(META_TOOLS) as MetaToolName[];

/** What `tools/list` shows of a meta-tool. */
export type ListedMetaTool = Pick<
  MetaToolDefinition,
  'description' | 'inputSchema' | 'annotations'
>;

/** The meta-tools as `tools/list` shows them, as plain data for a host that lists them itself. */
export function listedMetaTools(): Record<MetaToolName, ListedMetaTool> {
  return Object.fromEntries(
    META_TOOL_NAMES.map((name) => {
      const { description, inputSchema, annotations } = META_TOOLS[name];
      return [
        name,
        {
          description,
          inputSchema,
          ...(annotations === undefined ? {} : { annotations }),
        },
      ];
    }),
  ) as Record<MetaToolName, ListedMetaTool>;
}

/** A meta-tool's checked arguments. */
type MetaToolArguments<Name extends MetaToolName> = z.output<
  (typeof META_TOOLS)[Name]['input']
>;

/** Checks a meta-tool's arguments; throws `INVALID_ARGUMENTS` naming every problem. */
export function parseMetaToolInput<Name extends MetaToolName>(
  name: Name,
  input: unknown,
): MetaToolArguments<Name> {
  const tool: MetaToolDefinition = META_TOOLS[name];
  const result = tool.input.safeParse(input);
  if (result.success) return result.data as MetaToolArguments<Name>;
  const problems = issueLines({
    issues: result.error.issues,
    input,
    allowed: Object.keys(tool.inputSchema.properties as object),
  });
  throw new BrokerError({
    code: 'INVALID_ARGUMENTS',
    message: `Arguments for ${name} do not match its schema:\n${problems
      .map((problem) => `- ${problem}`)
      .join('\n')}`,
  });
}

/** The `mcp_call_tool` input's own arguments on a plain object (a parsed `__proto__` key is not a prototype). */
function ownArguments(input: unknown): Record<string, unknown> {
  const toolArguments = (input as { arguments?: object }).arguments;
  return toolArguments === undefined
    ? {}
    : Object.fromEntries(Object.entries(toolArguments));
}

/** A meta-tool's answer; a refusal carries its code as a field too. */
export type MetaToolAnswer = ToolCallResult & {
  /** The refusal's code (also the start of its text), when the broker refused. */
  code?: BrokerErrorCode;
};

/** Answers one meta-tool call; a refusal is an `isError` result `CODE: message` (`INTERNAL: ...` for the unexpected), its code beside it. */
export async function runMetaTool(
  name: MetaToolName,
  input: unknown,
  context: MetaToolContext,
): Promise<{ result: ToolCallResult; code?: BrokerErrorCode }> {
  const tool: MetaToolDefinition = META_TOOLS[name];
  const textResult = (value: string, isError?: true) => ({
    content: [{ type: 'text' as const, text: value }],
    ...(isError === undefined ? {} : { isError }),
  });
  try {
    const answer = await tool.answer(
      parseMetaToolInput(name, input),
      context,
      input,
    );
    return { result: typeof answer === 'string' ? textResult(answer) : answer };
  } catch (error) {
    if (!BrokerError.isInstance(error))
      return { result: textResult(`INTERNAL: ${errorText(error)}`, true) };
    const { code, message } = error;
    return { result: textResult(`${code}: ${message}`, true), code };
  }
}

/** Answers one meta-tool call as the stdio server does, for a caller of `role`; no elicitation or sampling (no client to ask). */
export async function answerMetaTool(options: {
  broker: Broker;
  name: MetaToolName;
  input: unknown;
  /** The caller's role; the broker's own role when unset. */
  role?: string;
  signal?: AbortSignal;
  onProgress?: (progress: CallProgress) => void;
}): Promise<MetaToolAnswer> {
  const { broker, role, signal, onProgress } = options;
  const { result, code } = await runMetaTool(options.name, options.input, {
    broker,
    call: (request) =>
      broker.callTool({ ...request, role, signal, onProgress }),
  });
  return code === undefined ? result : { ...result, code };
}

/** `mcp_search_tools`: a search, or a target's page of tools when there is no query. */
async function searchOrBrowse(
  broker: Broker,
  args: SearchArguments,
): Promise<string> {
  const query = args.query ?? '';
  const marks: HitRender = (hit) => {
    const note = broker.withheld(hit.name);
    const shown = note === undefined ? hit : { ...hit, description: '' };
    const marks = broker.marks(hit.name, hit.mutating);
    return renderHit(
      shown,
      note === undefined ? marks : [...marks, `[${note}]`],
    );
  };
  if (query.trim() === '' && args.target !== undefined)
    return formatBrowse(
      await broker.browseTools({ ...args, target: args.target }),
      marks,
    );
  const result = await broker.searchTools({ ...args, query });
  return formatSearch(
    result,
    result.hits.length === 0 ? broker.targetSummary() : [],
    marks,
  );
}

/** A tool's hit line with its marks (`[changed]`, `[flagged: rule]`), its description withheld when the trust layer says so. */
type HitRender = (hit: {
  name: string;
  mutating: boolean;
  description: string;
}) => string;

/** Renders search hits, one line a tool, then what matched nothing; with no hit, the targets to browse. */
function formatSearch(
  result: SearchToolsResult,
  targets: ReadonlyArray<{ target: string; tools: number }>,
  marks: HitRender,
): string {
  const scope = [
    result.profile === undefined ? undefined : `profile ${result.profile}`,
    result.target === undefined ? undefined : `target ${result.target}`,
  ]
    .filter(Boolean)
    .join(', ');
  const lines: string[] = [];
  if (result.hits.length === 0) {
    lines.push(
      `No tools match ${quote(result.query)}${scope ? ` (${scope})` : ''}. Rephrase with other words${
        scope ? ', drop the filter,' : ''
      } or list a target's tools with {"target": "<name>"} and no query.`,
    );
    if (targets.length > 0)
      lines.push(
        `Targets (tools): ${targets.map((summary) => `${summary.target} (${summary.tools})`).join(', ')}`,
      );
  } else {
    for (const hit of result.hits) lines.push(marks(hit));
  }
  if (result.discovering !== undefined)
    lines.push(discoveringNote(result.discovering));
  if (result.unmatchedTerms.length > 0) {
    const shown = result.unmatchedTerms
      .slice(0, 10)
      .map((term) => (term.length > 40 ? `${term.slice(0, 40)}…` : term));
    lines.push(
      `Matched nothing: ${shown.join(', ')}${
        result.unmatchedTerms.length > 10
          ? ` and ${result.unmatchedTerms.length - 10} more`
          : ''
      }`,
    );
  }
  return lines.join('\n');
}

/** Renders one page of a target's tools: a header, one line a tool, and how to get the next page. */
function formatBrowse(result: BrowseResult, marks: HitRender): string {
  const note =
    result.discovering === undefined
      ? []
      : [discoveringNote(result.discovering)];
  if (result.total === 0)
    return [
      `Target ${result.target} has no tools in the catalog.`,
      ...note,
    ].join('\n');
  if (result.tools.length === 0)
    return `Target ${result.target} has ${result.total} tools; offset ${result.offset} is past the end.`;
  const last = result.offset + result.tools.length;
  const lines = [
    `Target ${result.target}: ${result.total} tools, ${result.offset + 1}-${last}:`,
    ...result.tools.map(marks),
  ];
  if (last < result.total) lines.push(`More: offset ${last}.`);
  lines.push(...note);
  return lines.join('\n');
}

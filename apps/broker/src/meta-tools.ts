import { renderHit } from '@heretek/catalog';
import type { Broker, BrowseResult, SearchToolsResult } from './broker.js';
import { discoveringNote } from './call-pipeline.js';
import { BrokerError, quote } from './errors.js';
import { errorText } from './error-text.js';
import {
  META_TOOL_SCHEMAS,
  parseCallArguments,
  parseInspectArguments,
  parseSearchArguments,
} from './meta-arguments.js';
import type { CallProgress, ToolCallResult } from './types.js';

/** A meta-tool's name. */
export type MetaToolName = keyof typeof META_TOOL_SCHEMAS;

/** A meta-tool as it is listed: description, JSON Schema of its input, whether it only reads. */
export type MetaToolDefinition = {
  description: string;
  inputSchema: (typeof META_TOOL_SCHEMAS)[MetaToolName];
  readOnly: boolean;
};

/**
 * The broker's three meta-tools as the stdio server lists them, for hosts
 * that register them as their own tools (an editor plugin) and answer them
 * with {@link answerMetaTool}.
 */
export const META_TOOLS: Readonly<Record<MetaToolName, MetaToolDefinition>> = {
  mcp_search_tools: {
    description:
      'Find backend tools for a task. Returns exact names, one-line descriptions, mutating flags and query words that matched nothing.',
    inputSchema: META_TOOL_SCHEMAS.mcp_search_tools,
    readOnly: true,
  },
  mcp_inspect_schema: {
    description: "Get a tool's full input schema by exact name.",
    inputSchema: META_TOOL_SCHEMAS.mcp_inspect_schema,
    readOnly: true,
  },
  mcp_call_tool: {
    description:
      'Call a tool by exact name. Arguments are checked against its schema first; read-only roles cannot call mutating tools.',
    inputSchema: META_TOOL_SCHEMAS.mcp_call_tool,
    readOnly: false,
  },
};

/** The text of `mcp_inspect_schema` for an input. */
export async function inspectAnswer(
  broker: Broker,
  input: unknown,
): Promise<string> {
  const { name } = parseInspectArguments(input);
  return JSON.stringify(await broker.inspectToolSchema(name));
}

/** A refusal as the agent reads it: `CODE: message` (`INTERNAL: ...` for anything unexpected). */
export function refusalText(error: unknown): string {
  return BrokerError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : `INTERNAL: ${errorText(error)}`;
}

/**
 * Answers one meta-tool call the way the stdio server does, for a caller of
 * the given role: refusals become an `isError` result whose text starts with
 * the code. A backend's elicitation or sampling is not passed on here (there
 * is no client to ask); progress goes to `onProgress`.
 */
export async function answerMetaTool(options: {
  broker: Broker;
  name: MetaToolName;
  input: unknown;
  /** The caller's role; the broker's own role when unset. */
  role?: string;
  signal?: AbortSignal;
  onProgress?: (progress: CallProgress) => void;
}): Promise<ToolCallResult> {
  const { broker, input } = options;
  const text = (value: string) => ({
    content: [{ type: 'text' as const, text: value }],
  });
  try {
    if (options.name === 'mcp_search_tools')
      return text(await searchOrBrowse(broker, input));
    if (options.name === 'mcp_inspect_schema')
      return text(await inspectAnswer(broker, input));
    const { name, arguments: toolArguments } = parseCallArguments(input);
    return await broker.callTool({
      name,
      arguments: toolArguments ?? {},
      ...(options.role === undefined ? {} : { role: options.role }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onProgress === undefined
        ? {}
        : { onProgress: options.onProgress }),
    });
  } catch (error) {
    return { ...text(refusalText(error)), isError: true };
  }
}

/** `mcp_search_tools`: a search, or a target's page of tools when there is no query. */
export async function searchOrBrowse(
  broker: Broker,
  input: unknown,
): Promise<string> {
  const args = parseSearchArguments(input);
  const query = args.query ?? '';
  const marks = (hit: { name: string; mutating: boolean }) =>
    broker.marks(hit.name, hit.mutating);
  if (query.trim() === '' && args.target !== undefined) {
    return formatBrowse(
      await broker.browseTools({
        target: args.target,
        ...(args.profile === undefined ? {} : { profile: args.profile }),
        ...(args.offset === undefined ? {} : { offset: args.offset }),
        ...(args.limit === undefined ? {} : { limit: args.limit }),
      }),
      marks,
    );
  }
  const result = await broker.searchTools({
    query,
    ...(args.profile === undefined ? {} : { profile: args.profile }),
    ...(args.target === undefined ? {} : { target: args.target }),
    ...(args.limit === undefined ? {} : { limit: args.limit }),
  });
  return formatSearch(
    result,
    result.hits.length === 0 ? broker.targetSummary() : [],
    marks,
  );
}

/** Marks of a tool for its hit line (`[changed]`, `[flagged: rule]`). */
export type HitMarks = (hit: {
  name: string;
  mutating: boolean;
}) => readonly string[];

/**
 * Renders search hits compactly: one line a tool, then what matched nothing.
 * With no hit, names the known targets with their tool counts so the agent
 * can browse instead of guessing.
 */
export function formatSearch(
  result: SearchToolsResult,
  targets: ReadonlyArray<{ target: string; tools: number }> = [],
  marks: HitMarks = () => [],
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
    if (targets.length > 0) {
      lines.push(
        `Targets (tools): ${targets.map((t) => `${t.target} (${t.tools})`).join(', ')}`,
      );
    }
  } else {
    for (const hit of result.hits) lines.push(renderHit(hit, marks(hit)));
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
export function formatBrowse(
  result: BrowseResult,
  marks: HitMarks = () => [],
): string {
  const note =
    result.discovering === undefined
      ? []
      : [discoveringNote(result.discovering)];
  if (result.total === 0) {
    return [
      `Target ${result.target} has no tools in the catalog.`,
      ...note,
    ].join('\n');
  }
  if (result.tools.length === 0) {
    return `Target ${result.target} has ${result.total} tools; offset ${result.offset} is past the end.`;
  }
  const last = result.offset + result.tools.length;
  const lines = [
    `Target ${result.target}: ${result.total} tools, ${result.offset + 1}-${last}:`,
    ...result.tools.map((t) => renderHit(t, marks(t))),
  ];
  if (last < result.total) lines.push(`More: offset ${last}.`);
  lines.push(...note);
  return lines.join('\n');
}

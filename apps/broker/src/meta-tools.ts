import type { Broker } from './broker.js';
import { BrokerError } from './errors.js';
import { errorText } from './error-text.js';
import {
  META_TOOL_SCHEMAS,
  parseCallArguments,
  parseInspectArguments,
} from './meta-arguments.js';
import { searchOrBrowse } from './server.js';
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

import { renderHit } from '@heretek/catalog';
import { PROFILE_NAMES } from '@heretek/prefix';
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { BrokerError } from './errors.js';
import type { Broker, SearchToolsResult } from './broker.js';
import type { ToolCallResult } from './types.js';
import { VERSION } from './version.js';

/** Names of the three meta-tools, the only tools the broker lists. */
export const META_TOOL_NAMES = [
  'mcp_search_tools',
  'mcp_inspect_schema',
  'mcp_call_tool',
] as const;

type SearchArguments = {
  query: string;
  profile?: string;
  target?: string;
  limit?: number;
};
type InspectArguments = { name: string };
type CallArguments = { name: string; arguments?: Record<string, unknown> };

// Every word here is paid by every agent on every turn: keep them few and exact.
const searchSchema = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description: 'Task in plain words, or a tool name',
    },
    profile: { type: 'string', enum: [...PROFILE_NAMES] },
    target: { type: 'string', description: 'Only this backend' },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
  },
  required: ['query'],
} as const;

const inspectSchema = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
} as const;

const callSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    arguments: { type: 'object' },
  },
  required: ['name'],
} as const;

/**
 * Builds the MCP server that exposes the broker's three meta-tools. The
 * returned server is not connected; pass it to a transport (stdio in the CLI).
 */
export function createBrokerServer(options: { broker: Broker }): McpServer {
  const { broker } = options;
  const server = new McpServer(
    { name: 'heretek-lazy-broker', version: VERSION },
    { capabilities: { tools: {} } },
  );

  server.registerTool(
    'mcp_search_tools',
    {
      description:
        'Find backend tools for a task. Returns exact names, one-line descriptions, mutating flags and query words that matched nothing.',
      inputSchema: fromJsonSchema<SearchArguments>(searchSchema),
      annotations: { readOnlyHint: true },
    },
    async (args) =>
      respond(async () => {
        if (args.target !== undefined && !broker.backends.has(args.target)) {
          throw new BrokerError({
            code: 'UNKNOWN_TOOL',
            message: `No backend "${args.target}". Known targets: ${[...broker.backends.keys()].join(', ')}.`,
          });
        }
        return formatSearch(await broker.searchTools(args));
      }),
  );

  server.registerTool(
    'mcp_inspect_schema',
    {
      description: "Get a tool's full input schema by exact name.",
      inputSchema: fromJsonSchema<InspectArguments>(inspectSchema),
      annotations: { readOnlyHint: true },
    },
    async ({ name }) =>
      respond(async () => JSON.stringify(await broker.inspectToolSchema(name))),
  );

  server.registerTool(
    'mcp_call_tool',
    {
      description:
        'Call a tool by exact name. Arguments are checked against its schema first; read-only roles cannot call mutating tools.',
      inputSchema: fromJsonSchema<CallArguments>(callSchema),
    },
    async ({ name, arguments: toolArguments }, ctx) => {
      try {
        // A client's notifications/cancelled aborts the gateway call too.
        const result = await broker.callTool({
          name,
          arguments: toolArguments ?? {},
          signal: ctx.mcpReq.signal,
        });
        return result as ToolCallResult & { content: never[] };
      } catch (error) {
        return errorResult(error);
      }
    },
  );

  return server;
}

async function respond(produce: () => Promise<string>) {
  try {
    return { content: [{ type: 'text' as const, text: await produce() }] };
  } catch (error) {
    return errorResult(error);
  }
}

function errorResult(error: unknown) {
  const text = BrokerError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : `INTERNAL: ${error instanceof Error ? error.message : String(error)}`;
  return { content: [{ type: 'text' as const, text }], isError: true };
}

/** Renders search hits compactly: one line a tool, then what matched nothing. */
export function formatSearch(result: SearchToolsResult): string {
  const scope = [
    result.profile === undefined ? undefined : `profile ${result.profile}`,
    result.target === undefined ? undefined : `target ${result.target}`,
  ]
    .filter(Boolean)
    .join(', ');
  const lines: string[] = [];
  if (result.hits.length === 0) {
    lines.push(
      `No tools match "${result.query}"${scope ? ` (${scope})` : ''}. Rephrase with other words${
        scope ? ' or drop the filter' : ''
      }.`,
    );
  } else {
    for (const hit of result.hits) lines.push(renderHit(hit));
  }
  if (result.unmatchedTerms.length > 0) {
    lines.push(`Matched nothing: ${result.unmatchedTerms.join(', ')}`);
  }
  return lines.join('\n');
}

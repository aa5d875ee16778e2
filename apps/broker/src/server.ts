import { renderHit } from '@heretek/catalog';
import {
  McpServer,
  fromJsonSchema,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Broker, BrowseResult, SearchToolsResult } from './broker.js';
import { quote } from './errors.js';
import {
  META_TOOL_SCHEMAS,
  parseCallArguments,
  parseSearchArguments,
} from './meta-arguments.js';
import { META_TOOLS, inspectAnswer, refusalText } from './meta-tools.js';
import type { CallProgress, ToolCallResult } from './types.js';
import { VERSION } from './version.js';
import type { InputRounds, RoundCapabilities } from './input-rounds.js';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * What a request's 2026-07-28 envelope says the client can answer, or
 * `undefined` for a 2025-era request (no envelope).
 */
function envelopeCapabilities(
  envelope: object | undefined,
): RoundCapabilities | undefined {
  const fields = envelope as Record<string, unknown> | undefined;
  if (fields === undefined || !(PROTOCOL_VERSION_KEY in fields))
    return undefined;
  const declared = fields[CLIENT_CAPABILITIES_KEY];
  const capabilities =
    typeof declared === 'object' && declared !== null
      ? (declared as Record<string, unknown>)
      : {};
  return {
    elicitation: capabilities.elicitation !== undefined,
    sampling: capabilities.sampling !== undefined,
  };
}

/**
 * The SDK checks tool input before the handler runs and answers a mismatch
 * with its own `Input validation error: ...`. The broker lists the JSON
 * Schemas made from its zod schemas (`meta-arguments.ts`) and lets every input
 * through to the handler, which parses it with those same zod schemas and
 * answers `INVALID_ARGUMENTS: ...` like every other refusal. This also keeps
 * a JSON Schema engine out of the start-up path.
 */
const handlerChecks: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({
      valid: true,
      data: input as T,
      errorMessage: undefined,
    });
  },
};

const listed = (schema: object) =>
  fromJsonSchema<unknown>(schema as JsonSchemaType, handlerChecks);

/**
 * Builds the MCP server that exposes the broker's three meta-tools. The
 * returned server is not connected; pass it to a transport (stdio in the CLI).
 * It does not advertise `tools.listChanged`: its own three tools never change
 * (the backends' tools behind them are re-discovered as they change).
 */
export function createBrokerServer(options: {
  broker: Broker;
  /** Multi round-trip input for 2026-07-28 clients; without it their backends' requests are refused. */
  inputRounds?: InputRounds;
}): McpServer {
  const { broker, inputRounds } = options;
  const server = new McpServer(
    { name: 'heretek-lazy-broker', version: VERSION },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.registerTool(
    'mcp_search_tools',
    {
      description: META_TOOLS.mcp_search_tools.description,
      inputSchema: listed(META_TOOL_SCHEMAS.mcp_search_tools),
      annotations: { readOnlyHint: true },
    },
    async (input: unknown) => respond(() => searchOrBrowse(broker, input)),
  );
  server.registerTool(
    'mcp_inspect_schema',
    {
      description: META_TOOLS.mcp_inspect_schema.description,
      inputSchema: listed(META_TOOL_SCHEMAS.mcp_inspect_schema),
      annotations: { readOnlyHint: true },
    },
    async (input: unknown) => respond(() => inspectAnswer(broker, input)),
  );
  server.registerTool(
    'mcp_call_tool',
    {
      description: META_TOOLS.mcp_call_tool.description,
      inputSchema: listed(META_TOOL_SCHEMAS.mcp_call_tool),
    },
    async (input: unknown, ctx) => {
      try {
        return await callThrough({ broker, inputRounds, input, ctx });
      } catch (error) {
        return errorResult(error);
      }
    },
  );
  return server;
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

/**
 * Forwards a backend's progress to the client under the client's token (with
 * progress, total and message as sent), or `undefined` when the client sent
 * no token. `sent()` settles once every forwarded notification is on its way:
 * a client stops listening for progress once the response arrives.
 */
function progressForwarder(ctx: ServerContext): {
  onProgress: ((progress: CallProgress) => void) | undefined;
  sent: () => Promise<unknown>;
} {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const forwarded: Promise<void>[] = [];
  return {
    onProgress:
      progressToken === undefined
        ? undefined
        : (progress) => {
            forwarded.push(
              ctx.mcpReq
                .notify({
                  method: 'notifications/progress',
                  params: { progressToken, ...progress },
                })
                .catch(() => {}),
            );
          },
    sent: () => Promise.all(forwarded),
  };
}

/** `mcp_call_tool`: one call through the broker, with its progress and input rounds. */
async function callThrough(options: {
  broker: Broker;
  inputRounds: InputRounds | undefined;
  input: unknown;
  ctx: ServerContext;
}) {
  const { broker, inputRounds, ctx } = options;
  const { name, arguments: toolArguments } = parseCallArguments(options.input);
  const { onProgress, sent } = progressForwarder(ctx);
  const capabilities = envelopeCapabilities(ctx.mcpReq.envelope);
  if (capabilities !== undefined && inputRounds !== undefined) {
    // MCP 2026-07-28: a backend's elicitation or sampling becomes an
    // input_required answer, and the client's retry carries the answers.
    const state = ctx.mcpReq.requestState();
    const answer = await inputRounds.round({
      name,
      capabilities,
      requestState: typeof state === 'string' ? state : undefined,
      inputResponses: ctx.mcpReq.inputResponses,
      signal: ctx.mcpReq.signal,
      onProgress,
      start: (signal, handlers) =>
        broker.callTool({
          name,
          arguments: toolArguments ?? {},
          signal,
          ...handlers,
        }),
    });
    await sent();
    return answer as ToolCallResult & { content: never[] };
  }
  // A client's notifications/cancelled aborts the gateway call (or cancels its task) too.
  const result = await broker.callTool({
    name,
    arguments: toolArguments ?? {},
    signal: ctx.mcpReq.signal,
    ...(onProgress === undefined ? {} : { onProgress }),
  });
  await sent();
  return result as ToolCallResult & { content: never[] };
}

async function respond(produce: () => Promise<string>) {
  try {
    return { content: [{ type: 'text' as const, text: await produce() }] };
  } catch (error) {
    return errorResult(error);
  }
}

/** Every refusal starts with its stable code: `CODE: message`. */
function errorResult(error: unknown) {
  const text = refusalText(error);
  return { content: [{ type: 'text' as const, text }], isError: true };
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
  if (result.total === 0) {
    return `Target ${result.target} has no tools in the catalog.`;
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
  return lines.join('\n');
}

import {
  McpServer,
  fromJsonSchema,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Broker } from './broker.js';
import type { CallerRole } from './caller-role.js';
import {
  META_TOOLS,
  META_TOOL_NAMES,
  runMetaTool,
  type MetaToolDefinition,
} from './meta-tools.js';
import type { CallHandlers, CallProgress, ToolCallResult } from './types.js';
import { VERSION } from './version.js';
import type { InputRounds, RoundCapabilities } from './input-rounds.js';
import { buildInstructions, type InstructionsBackend } from './instructions.js';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** What a request's 2026-07-28 envelope says the client can answer; `undefined` for a 2025-era request (no envelope). */
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
 * Schemas made from its zod schemas (`meta-tools.ts`) and lets every input
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
 * Builds the broker's MCP server, not connected and with no tool yet
 * ({@link registerMetaTools} adds them). No `tools.listChanged`: its own
 * tools never change (the backends' tools behind them are re-discovered).
 */
export function createBrokerServer(
  options: {
    /** The configured backend table, whose instructions the `initialize` answer carries (never discovery's: the same bytes at every start). */
    backends?: readonly InstructionsBackend[];
  } = {},
): McpServer {
  const { backends } = options;
  return new McpServer(
    { name: 'heretek-lazy-broker', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        backends === undefined ? undefined : buildInstructions({ backends }),
    },
  );
}

/** Registers the broker's meta-tools on `server`, one per entry of {@link META_TOOLS}, answered by `broker`. */
export function registerMetaTools(
  server: McpServer,
  options: {
    broker: Broker;
    /** Multi round-trip input for 2026-07-28 clients; without it their backends' requests are refused. */
    inputRounds?: InputRounds;
    /** Each call's role from the request (a Claude Code hook's record); without it, every call has the broker's role. */
    callerRole?: CallerRole;
  },
): void {
  const { broker, inputRounds, callerRole } = options;
  for (const name of META_TOOL_NAMES) {
    const tool: MetaToolDefinition = META_TOOLS[name];
    server.registerTool(
      name,
      {
        description: tool.description,
        inputSchema: listed(tool.inputSchema),
        annotations: tool.annotations,
      },
      async (input: unknown, ctx) => {
        const { result } = await runMetaTool(name, input, {
          broker,
          call: async (request) =>
            callThrough({
              broker,
              inputRounds,
              request,
              ctx,
              role: await callerRole?.(ctx.mcpReq._meta),
            }),
        });
        return result as ToolCallResult & { content: never[] };
      },
    );
  }
}

/**
 * Forwards a backend's progress under the client's token (`undefined` without
 * one). `sent()` settles once every forwarded notification is on its way: a
 * client stops listening for progress once the response arrives.
 */
function progressForwarder(ctx: ServerContext) {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const forwarded: Promise<void>[] = [];
  return {
    onProgress:
      progressToken === undefined
        ? undefined
        : (progress: CallProgress) => {
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
  request: { name: string; arguments: Record<string, unknown> };
  ctx: ServerContext;
  /** The caller's role for this call; the broker's role when unset. */
  role: string | undefined;
}): Promise<ToolCallResult> {
  const { broker, inputRounds, ctx, role } = options;
  const { onProgress, sent } = progressForwarder(ctx);
  const call = (signal: AbortSignal, handlers: CallHandlers) =>
    broker.callTool({ ...options.request, signal, role, ...handlers });
  const capabilities = envelopeCapabilities(ctx.mcpReq.envelope);
  const state = ctx.mcpReq.requestState();
  const answer =
    capabilities === undefined || inputRounds === undefined
      ? // A client's notifications/cancelled aborts the gateway call (or cancels its task) too.
        await call(ctx.mcpReq.signal, { onProgress })
      : // MCP 2026-07-28: a backend's elicitation or sampling becomes an
        // input_required answer (the call's result), and the client's retry
        // carries the answers.
        await inputRounds.round({
          name: options.request.name,
          capabilities,
          requestState: typeof state === 'string' ? state : undefined,
          inputResponses: ctx.mcpReq.inputResponses,
          signal: ctx.mcpReq.signal,
          onProgress,
          start: call,
        });
  await sent();
  return answer as ToolCallResult;
}

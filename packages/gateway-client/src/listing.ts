import {
  ProtocolErrorCode,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/client';
import {
  GatewayProtocolError,
  GatewayHttpError,
  GatewayJsonRpcError,
} from './errors.js';
import { DEFAULTS } from './config.js';
import type { Operation } from './operation.js';

/** A tool as listed by a target: the SDK's `Tool` shape (name, description, inputSchema, annotations ...). */
export type McpTool = Tool;

type ListPage = { tools: McpTool[]; nextCursor?: string | undefined };

/** Where a page breaks the shape `tools/list` must have, or `undefined`. */
function pageProblem(value: unknown): StandardSchemaV1.Issue | undefined {
  const issue = (message: string, path: PropertyKey[] = []) => ({
    message,
    path,
  });
  if (!isObject(value)) return issue('expected an object');
  const { tools, nextCursor } = value;
  if (nextCursor != null && typeof nextCursor !== 'string')
    return issue('expected a string', ['nextCursor']);
  if (!Array.isArray(tools)) return issue('expected an array', ['tools']);
  for (let index = 0; index < tools.length; index += 1) {
    const tool: unknown = tools[index];
    const at = (...key: string[]) => ['tools', index, ...key];
    if (!isObject(tool)) return issue('expected an object', at());
    if (typeof tool.name !== 'string')
      return issue('expected a string', at('name'));
    for (const key of ['title', 'description'] as const)
      if (tool[key] !== undefined && typeof tool[key] !== 'string')
        return issue('expected a string', at(key));
    if (!isSchema(tool.inputSchema))
      return issue(NOT_SCHEMA, at('inputSchema'));
    if (tool.outputSchema !== undefined && !isSchema(tool.outputSchema))
      return issue(NOT_SCHEMA, at('outputSchema'));
    for (const key of ['annotations', 'execution', '_meta'] as const)
      if (tool[key] !== undefined && !isObject(tool[key]))
        return issue('expected an object', at(key));
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NOT_SCHEMA = 'expected an object with "type": "object"';

function isSchema(value: unknown): boolean {
  return isObject(value) && value.type === 'object';
}

/**
 * The result check of a `tools/list` page: the members the client and its
 * callers read. The SDK's own check validates every value of every schema
 * and copies each tool: at a thousand backends of a hundred tools, seconds
 * of work and hundreds of MB of copies, for a reply that is JSON already.
 */
const listPageSchema: StandardSchemaV1<unknown, ListPage> = {
  '~standard': {
    version: 1,
    vendor: 'heretek',
    validate(value) {
      const problem = pageProblem(value);
      return problem === undefined
        ? { value: value as ListPage }
        : { issues: [problem] };
    },
  },
};

const MAX_LIST_RESTARTS = 3;

/**
 * Every tool of one `tools/list` walk, following `nextCursor` (a repeated
 * cursor or more than `maxListPages` pages is `PROTOCOL_ERROR`). A page whose
 * session expired is sent again with the same cursor in the new session; if
 * that session rejects the cursor, the walk starts over (at most 3 times).
 */
export async function walkPages(
  requester: Operation,
  restarts = 0,
): Promise<McpTool[]> {
  const { target, endpoint } = requester.plan;
  const maxListPages =
    endpoint.settings.options.maxListPages ?? DEFAULTS.maxListPages;
  const of = target ? ` of target '${target}'` : '';
  const tools: McpTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1; ; pages += 1) {
    const before = requester.reinitializations;
    const sent = cursor;
    let page: ListPage;
    try {
      page = await requester.request(
        `on page ${pages} after ${pages - 1} page${pages === 2 ? '' : 's'} of tools/list${of}`,
        (client, requestOptions) =>
          client.request(
            {
              method: 'tools/list',
              params: sent === undefined ? {} : { cursor: sent },
            },
            listPageSchema,
            requestOptions,
          ),
      );
    } catch (error) {
      // The new session does not know the old one's cursor: start over.
      if (
        sent !== undefined &&
        requester.reinitializations > before &&
        restarts < MAX_LIST_RESTARTS &&
        isCursorRejection(error)
      )
        return walkPages(requester, restarts + 1);
      throw error;
    }
    tools.push(...page.tools);
    const next = page.nextCursor;
    if (next == null) return tools;
    if (seen.has(next)) {
      throw new GatewayProtocolError({
        target,
        message: `tools/list${of} returned cursor ${JSON.stringify(next.slice(0, 80))} a second time after ${pages} pages; the server's pagination loops.`,
      });
    }
    if (pages >= maxListPages) {
      throw new GatewayProtocolError({
        target,
        message: `tools/list${of} still had a nextCursor after ${pages} pages (maxListPages); the server's pagination does not end.`,
      });
    }
    seen.add(next);
    cursor = next;
  }
}

/** A JSON-RPC error answering a page request: the server refused the cursor. */
function isCursorRejection(error: unknown): boolean {
  return (
    GatewayJsonRpcError.isInstance(error) ||
    (GatewayHttpError.isInstance(error) &&
      error.status === 400 &&
      error.jsonRpcError?.code === ProtocolErrorCode.InvalidParams)
  );
}

import {
  ProtocolErrorCode,
  type Client,
  type Tool,
} from '@modelcontextprotocol/client';
import {
  GatewayCursorLoopError,
  GatewayHttpError,
  GatewayJsonRpcError,
} from './errors.js';
import type { Requester } from './operation.js';

/** A tool as listed by a target: the SDK's `Tool` shape (name, description, inputSchema, annotations ...). */
export type McpTool = Tool;

/** How often a listing starts over because the server refused its cursor in a new session. */
const MAX_LIST_RESTARTS = 3;

/**
 * Every tool of one `tools/list` walk, following `nextCursor` to the end: a
 * repeated cursor or more than `maxListPages` pages is `CURSOR_LOOP`. Each
 * page is one request of `requester`, so a session that expires on a page
 * is re-initialized and that page sent again with the same cursor; when the
 * new session rejects the cursor with a JSON-RPC error, the walk starts over
 * from the first page (at most 3 times).
 */
export async function walkPages(
  requester: Requester,
  target: string | undefined,
  maxListPages: number,
): Promise<McpTool[]> {
  const of = target ? ` of target '${target}'` : '';
  let tools: McpTool[] = [];
  let seen = new Set<string>();
  let cursor: string | undefined;
  let restarts = 0;
  for (let pages = 1; ; pages += 1) {
    const before = requester.reinitializations;
    const sent = cursor;
    let page: Awaited<ReturnType<Client['listTools']>>;
    try {
      page = await requester.request(
        `on page ${pages} after ${pages - 1} page${pages === 2 ? '' : 's'} of tools/list${of}`,
        (client, requestOptions) =>
          client.request(
            {
              method: 'tools/list',
              params: sent === undefined ? {} : { cursor: sent },
            },
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
      ) {
        restarts += 1;
        tools = [];
        seen = new Set();
        cursor = undefined;
        pages = 0;
        continue;
      }
      throw error;
    }
    tools.push(...page.tools);
    const next = page.nextCursor;
    if (next === undefined || next === null) return tools;
    if (seen.has(next) || next === cursor) {
      throw new GatewayCursorLoopError({
        target,
        pages,
        message: `tools/list${of} returned cursor ${JSON.stringify(next.slice(0, 80))} a second time after ${pages} pages; the server's pagination loops.`,
      });
    }
    if (pages >= maxListPages) {
      throw new GatewayCursorLoopError({
        target,
        pages,
        message: `tools/list${of} still had a nextCursor after ${pages} pages (maxListPages); the server's pagination does not end.`,
      });
    }
    seen.add(next);
    cursor = next;
  }
}

/** A JSON-RPC error answering a page request: the server refused the cursor. */
function isCursorRejection(error: unknown): boolean {
  if (GatewayJsonRpcError.isInstance(error)) return true;
  return (
    GatewayHttpError.isInstance(error) &&
    error.status === 400 &&
    error.jsonRpcError?.code === ProtocolErrorCode.InvalidParams
  );
}

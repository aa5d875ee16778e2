// Test fixture: real MCP servers from the SDK (v2, createMcpHandler) behind one
// node:http server on 127.0.0.1, routed like agentgateway: `/mcp/<target>`
// serves one target with bare tool names (per-target mode) and `/mcp` serves
// every target with `<target>_<tool>` names (multiplexed mode). A target can
// be switched to fail (HTTP 503) to exercise discovery fallback and the
// circuit breaker.
import { multiplexedName } from '@heretek/internal';
import type { McpServer } from '@modelcontextprotocol/server';
import {
  forward,
  listenLoopback,
  readBody,
  routeCache,
  routeOf,
  statelessRoute,
  textResult,
  toolServer,
  type BridgeTool,
} from './http-bridge.mjs';

/** What every stand-in tool has: its name, description and input schema. */
export type ToolShape = Pick<BridgeTool, 'name' | 'description'> & {
  inputSchema: Record<string, unknown>;
};

export type FixtureTool = ToolShape & {
  readOnly?: boolean;
  /** Answer only after this long (or when the request is cancelled). */
  delayMs?: number;
};

export type FixtureCall = {
  path: string;
  tool: string;
  arguments: unknown;
  role: string | undefined;
};

export type McpBackends = {
  url: string;
  calls: FixtureCall[];
  listings: string[];
  /** Every HTTP request's path, in order (including refused ones). */
  requests: string[];
  failing: Set<string>;
  /** Targets whose requests are never answered (until close). */
  hanging: Set<string>;
  /** While set, `tools/list` requests are answered only once it resolves. */
  listingsHeld?: Promise<void>;
  tools: Map<string, FixtureTool[]>;
  close: () => Promise<void>;
};

function buildServer(
  entries: Array<{ name: string; tool: FixtureTool }>,
  onCall: (tool: string, args: unknown) => void,
): McpServer {
  return toolServer(
    'fixture-backend',
    entries.map(({ name, tool }) => ({
      ...tool,
      name,
      annotations: { readOnlyHint: tool.readOnly === true },
    })),
    async ({ name, delayMs }, args, ctx) => {
      onCall(name, args);
      if (delayMs !== undefined) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          ctx.mcpReq.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return textResult(`${name} ok ${JSON.stringify(args)}`);
    },
  );
}

/** Starts the fixture on a random 127.0.0.1 port with the given tools per target. */
export async function startMcpBackends(
  tools: Record<string, FixtureTool[]>,
): Promise<McpBackends> {
  const state: McpBackends = {
    url: '',
    calls: [],
    listings: [],
    requests: [],
    failing: new Set(),
    hanging: new Set(),
    tools: new Map(Object.entries(tools)),
    close: async () => {},
  };
  const routes = routeCache((path: string) => {
    const target = path === '/mcp' ? undefined : path.slice('/mcp/'.length);
    return statelessRoute((ctx) => {
      const role = ctx.requestInfo?.headers.get('x-heretek-role') ?? undefined;
      const entries =
        target === undefined
          ? [...state.tools].flatMap(([t, list]) =>
              list.map((tool) => ({
                name: multiplexedName(t, tool.name),
                tool,
              })),
            )
          : (state.tools.get(target) ?? []).map((tool) => ({
              name: tool.name,
              tool,
            }));
      return buildServer(entries, (tool, args) =>
        state.calls.push({ path, tool, arguments: args, role }),
      );
    });
  });

  const loopback = await listenLoopback(async (req, res) => {
    const { path, target } = routeOf(req);
    state.requests.push(path);
    if (path !== '/mcp' && (target === undefined || !state.tools.has(target))) {
      res.writeHead(404).end();
      return;
    }
    if (target !== undefined && state.hanging.has(target)) {
      req.resume();
      return;
    }
    if (target !== undefined && state.failing.has(target)) {
      req.resume();
      res
        .writeHead(503, { 'content-type': 'text/plain' })
        .end('backend unavailable');
      return;
    }
    const body = await readBody(req);
    if (body.includes('"tools/list"')) {
      state.listings.push(path);
      await state.listingsHeld;
    }
    await forward(req, res, routes.get(path), body);
  });
  state.url = loopback.url;
  state.close = async () => {
    await routes.close();
    await loopback.close();
  };
  return state;
}

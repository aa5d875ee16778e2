// A stand-in agentgateway on 127.0.0.1 for the benches: real MCP servers from
// the SDK (createMcpHandler) behind one node:http server, routed per target as
// agentgateway does (`/mcp/<target>`, bare tool names). Every target serves
// `echo`, a read-only tool that returns its `token` argument (so a bench can
// prove each reply belongs to its request), and a target can delay its
// `tools/list` answers (discovery bench) or its calls.
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
} from '@modelcontextprotocol/server';
import {
  forward,
  listenLoopback,
  readBody,
  sessionfulRoute,
} from '../src/__fixtures__/http-bridge.mjs';

const ECHO_SCHEMA = {
  type: 'object',
  properties: { token: { type: 'string' }, pad: { type: 'string' } },
  required: ['token'],
  additionalProperties: false,
};

/**
 * @param {{ targets: Record<string, { listDelayMs?: number, callDelayMs?: number, extraTools?: number, echoWord?: string, live?: boolean }> }} options
 */
export async function startGateway({ targets }) {
  // Times are ms since the epoch (performance.timeOrigin based), comparable
  // across processes on one machine.
  const now = () => performance.timeOrigin + performance.now();
  const stats = {
    lists: new Map(),
    calls: new Map(),
    requests: 0,
    firstRequestAt: undefined,
    listRequestedAt: new Map(),
    listAnsweredAt: new Map(),
  };
  const handlers = new Map();

  const serverFor = (target, { listChanged = false } = {}) => {
    const config = targets[target];
    const server = new McpServer(
      { name: `bench-${target}`, version: '1.0.0' },
      { capabilities: { tools: listChanged ? { listChanged: true } : {} } },
    );
    for (const name of added.get(target) ?? []) addPlaceholder(server, name);
    server.registerTool(
      'echo',
      {
        description: `Echo a token back (${target})${config.echoWord ? ` ${config.echoWord}` : ''}`,
        inputSchema: fromJsonSchema(ECHO_SCHEMA),
        annotations: { readOnlyHint: true },
      },
      async (args) => {
        stats.calls.set(target, (stats.calls.get(target) ?? 0) + 1);
        if (config.callDelayMs)
          await new Promise((r) => setTimeout(r, config.callDelayMs));
        return { content: [{ type: 'text', text: args.token }] };
      },
    );
    for (let i = 0; i < (config.extraTools ?? 0); i++) {
      server.registerTool(
        `tool_${i}`,
        {
          description: `Placeholder tool ${i} of ${target} for listing size`,
          inputSchema: fromJsonSchema({
            type: 'object',
            properties: { x: { type: 'string' } },
          }),
          annotations: { readOnlyHint: true },
        },
        async () => ({ content: [{ type: 'text', text: 'ok' }] }),
      );
    }
    return server;
  };
  /** Tools added at run time (`addTool`), per target. */
  const added = new Map();
  const addPlaceholder = (server, name) =>
    server.registerTool(
      name,
      {
        description: `Added at run time: ${name}`,
        annotations: { readOnlyHint: true },
      },
      async () => ({ content: [{ type: 'text', text: 'ok' }] }),
    );

  const {
    server: http,
    url,
    close,
  } = await listenLoopback(async (req, res) => {
    stats.requests++;
    stats.firstRequestAt ??= now();
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const target = path.startsWith('/mcp/')
      ? path.slice('/mcp/'.length)
      : undefined;
    if (target === undefined || !(target in targets)) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    const body = await readBody(req);
    const listing = body.includes('"tools/list"');
    if (listing) {
      if (!stats.listRequestedAt.has(target))
        stats.listRequestedAt.set(target, now());
      stats.lists.set(target, (stats.lists.get(target) ?? 0) + 1);
      const delay = targets[target].listDelayMs;
      if (delay) await new Promise((r) => setTimeout(r, delay));
    }
    let handler = handlers.get(target);
    if (handler === undefined) {
      handler = targets[target].live
        ? sessionfulRoute(() => serverFor(target, { listChanged: true }))
        : createMcpHandler(() => serverFor(target));
      handlers.set(target, handler);
    }
    await forward(req, res, handler, body);
    if (listing) stats.listAnsweredAt.set(target, now());
  });
  http.keepAliveTimeout = 60_000;
  return {
    url,
    stats,
    /** Adds a tool to a live target; its open sessions say their tools changed. */
    addTool: (target, name) => {
      added.set(target, [...(added.get(target) ?? []), name]);
      for (const server of handlers.get(target)?.servers ?? [])
        addPlaceholder(server, name);
    },
    close: async () => {
      await Promise.allSettled([...handlers.values()].map((h) => h.close()));
      await close();
    },
  };
}

/** The 12 default targets of the broker (same names as its backend table). */
export const DEFAULT_TARGETS = [
  'core',
  'ghidra',
  'radare2',
  'rea',
  'mdb',
  'adb',
  'maestro',
  'godot',
  'blender',
  'crawl4ai',
  'searxng',
  'gui',
];

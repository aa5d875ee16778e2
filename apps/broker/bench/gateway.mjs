// A stand-in agentgateway on 127.0.0.1 for the benches: real MCP servers from
// the SDK (createMcpHandler) behind one node:http server, routed per target as
// agentgateway does (`/mcp/<target>`, bare tool names). Every target serves
// `echo`, a read-only tool that returns its `token` argument (so a bench can
// prove each reply belongs to its request), and a target can delay its
// `tools/list` answers (discovery bench) or its calls.
import {
  forward,
  listenLoopback,
  readBody,
  registerTool,
  routeCache,
  routeOf,
  sessionfulRoute,
  statelessRoute,
  textResult,
  toolServer,
} from '../src/__fixtures__/http-bridge.mjs';

const ECHO_SCHEMA = {
  type: 'object',
  properties: { token: { type: 'string' }, pad: { type: 'string' } },
  required: ['token'],
  additionalProperties: false,
};

const PLACEHOLDER_SCHEMA = {
  type: 'object',
  properties: { x: { type: 'string' } },
};

const ok = () => textResult('ok');

/** A tool added at run time (`addTool`). */
const placeholder = (name) => ({
  name,
  description: `Added at run time: ${name}`,
  annotations: { readOnlyHint: true },
});

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
  /** Tools added at run time (`addTool`), per target. */
  const added = new Map();

  const serverFor = (target, { listChanged = false } = {}) => {
    const config = targets[target];
    const echo = {
      name: 'echo',
      description: `Echo a token back (${target})${config.echoWord ? ` ${config.echoWord}` : ''}`,
      inputSchema: ECHO_SCHEMA,
      annotations: { readOnlyHint: true },
    };
    const extras = Array.from({ length: config.extraTools ?? 0 }, (_, i) => ({
      name: `tool_${i}`,
      description: `Placeholder tool ${i} of ${target} for listing size`,
      inputSchema: PLACEHOLDER_SCHEMA,
      annotations: { readOnlyHint: true },
    }));
    const tools = [
      ...(added.get(target) ?? []).map(placeholder),
      echo,
      ...extras,
    ];
    return toolServer(
      `bench-${target}`,
      tools,
      async (tool, args) => {
        if (tool !== echo) return ok();
        stats.calls.set(target, (stats.calls.get(target) ?? 0) + 1);
        if (config.callDelayMs)
          await new Promise((r) => setTimeout(r, config.callDelayMs));
        return textResult(args.token);
      },
      { listChanged },
    );
  };
  const routes = routeCache((target) =>
    targets[target].live
      ? sessionfulRoute(() => serverFor(target, { listChanged: true }))
      : statelessRoute(() => serverFor(target)),
  );

  const {
    server: http,
    url,
    close,
  } = await listenLoopback(async (req, res) => {
    stats.requests++;
    stats.firstRequestAt ??= now();
    const { target } = routeOf(req);
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
    await forward(req, res, routes.get(target), body);
    if (listing) stats.listAnsweredAt.set(target, now());
  });
  http.keepAliveTimeout = 60_000;
  return {
    url,
    stats,
    /** Adds a tool to a live target; its open sessions say their tools changed. */
    addTool: (target, name) => {
      added.set(target, [...(added.get(target) ?? []), name]);
      for (const server of routes.made(target)?.servers ?? [])
        registerTool(server, placeholder(name), ok);
    },
    close: async () => {
      await routes.close();
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

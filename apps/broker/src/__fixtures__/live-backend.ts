// Test fixture: one sessionful MCP backend (SDK v2 McpServer behind the
// Streamable HTTP transport, 2025 revisions) on 127.0.0.1 at /mcp/<target>,
// with the standalone GET stream, so a tool added at run time reaches a
// connected client as notifications/tools/list_changed.
import {
  forward,
  listenLoopback,
  readBody,
  registerTool,
  sessionfulRoute,
  textResult,
  toolServer,
} from './http-bridge.mjs';

export type LiveBackend = {
  url: string;
  /** `tools/list` requests served so far. */
  listings: () => number;
  /** Standalone GET streams opened so far. */
  streams: () => number;
  /** Registers a tool on every session (each sends tools/list_changed) and on sessions to come. */
  addTool: (name: string, description: string) => void;
  close: () => Promise<void>;
};

type Tool = { name: string; description: string };

const readOnly = (tool: Tool) => ({
  ...tool,
  annotations: { readOnlyHint: true },
});

const answer = (tool: Tool) => textResult(`${tool.name} ok`);

function rpcMethod(body: Buffer): unknown {
  try {
    return (JSON.parse(body.toString()) as { method?: unknown }).method;
  } catch {
    return undefined;
  }
}

/** Starts the backend with its first tools. */
export async function startLiveBackend(
  target: string,
  tools: Tool[],
): Promise<LiveBackend> {
  const all = tools.map(readOnly);
  let listings = 0;
  let streams = 0;
  const route = sessionfulRoute(
    () => toolServer('live-backend', all, answer, { listChanged: true }),
    { onStream: () => void streams++ },
  );

  const loopback = await listenLoopback(async (req, res) => {
    const body = await readBody(req);
    if (new URL(req.url ?? '/', loopback.url).pathname !== `/mcp/${target}`) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'POST' && rpcMethod(body) === 'tools/list') listings++;
    await forward(req, res, route, body);
  });
  return {
    url: loopback.url,
    listings: () => listings,
    streams: () => streams,
    addTool: (name, description) => {
      const tool = readOnly({ name, description });
      all.push(tool);
      for (const server of route.servers)
        registerTool(server, tool, () => answer(tool));
    },
    close: async () => {
      await route.close();
      await loopback.close();
    },
  };
}

// Test fixture: one MCP backend in its own process, so a test can kill it
// (SIGKILL) in the middle of a call. Serves /mcp/<target> on a random
// 127.0.0.1 port with two read-only tools: `echo` answers at once, `hang`
// never answers. Prints `port <n>` once listening and `call <tool>` when a
// call arrives, one line each on stdout.
import process from 'node:process';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { forward, listenLoopback } from './http-bridge.mjs';

const target = process.argv[2] ?? 'doomed';

const handler = createMcpHandler(() => {
  const server = new McpServer(
    { name: 'backend-process', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    'echo',
    { description: 'Echo', annotations: { readOnlyHint: true } },
    async () => {
      process.stdout.write('call echo\n');
      return { content: [{ type: 'text', text: 'echo ok' }] };
    },
  );
  server.registerTool(
    'hang',
    { description: 'Never answers', annotations: { readOnlyHint: true } },
    async () => {
      process.stdout.write('call hang\n');
      return new Promise(() => {});
    },
  );
  return server;
});

const { server } = await listenLoopback(async (req, res) => {
  if (req.url !== `/mcp/${target}`) {
    res.writeHead(404).end();
    return;
  }
  await forward(req, res, handler);
});
process.stdout.write(`port ${server.address().port}\n`);

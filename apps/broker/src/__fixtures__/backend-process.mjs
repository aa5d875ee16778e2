// Test fixture: one MCP backend in its own process, so a test can kill it
// (SIGKILL) in the middle of a call. Serves /mcp/<target> on a random
// 127.0.0.1 port with two read-only tools: `echo` answers at once, `hang`
// never answers. Prints `port <n>` once listening and `call <tool>` when a
// call arrives, one line each on stdout.
/* global Headers, Request */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';

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

const http = createServer((req, res) => {
  void (async () => {
    if (req.url !== `/mcp/${target}`) {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(key, value);
    }
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        ...(body && req.method === 'POST' ? { body } : {}),
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  })().catch((error) => {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  });
});

http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${http.address().port}\n`);
});

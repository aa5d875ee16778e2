// Test fixture: one MCP backend in its own process, so a test can kill it
// (SIGKILL) in the middle of a call. Serves /mcp/<target> on a random
// 127.0.0.1 port with two read-only tools: `echo` answers at once, `hang`
// never answers. Prints `port <n>` once listening and `call <tool>` when a
// call arrives, one line each on stdout.
import process from 'node:process';
import {
  forward,
  listenLoopback,
  statelessRoute,
  textResult,
  toolServer,
} from './http-bridge.mjs';

const target = process.argv[2] ?? 'doomed';

const handler = statelessRoute(() =>
  toolServer(
    'backend-process',
    [
      {
        name: 'echo',
        description: 'Echo',
        annotations: { readOnlyHint: true },
      },
      {
        name: 'hang',
        description: 'Never answers',
        annotations: { readOnlyHint: true },
      },
    ],
    async (tool) => {
      process.stdout.write(`call ${tool.name}\n`);
      return tool.name === 'echo'
        ? textResult('echo ok')
        : new Promise(() => {});
    },
  ),
);

const { server } = await listenLoopback(async (req, res) => {
  if (req.url !== `/mcp/${target}`) {
    res.writeHead(404).end();
    return;
  }
  await forward(req, res, handler);
});
process.stdout.write(`port ${server.address().port}\n`);

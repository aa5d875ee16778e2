// Drives the built broker as an MCP client would: lists its tools, searches,
// inspects a schema, and makes three calls that show the gates at work.
// Run after `pnpm build`: node apps/broker/demo.mjs
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const cli = fileURLToPath(new URL('./dist/cli.js', import.meta.url));
const role = process.env.HERETEK_BROKER_ROLE ?? 'director';
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [cli],
  env: {
    ...process.env,
    HERETEK_BROKER_OFFLINE: '1',
    HERETEK_BROKER_ROLE: role,
  },
  stderr: 'inherit',
});
const client = new Client({ name: 'heretek-demo', version: '1.0.0' });
await client.connect(transport);

const show = (title, result) => {
  const text = result.content.map((c) => c.text ?? '').join('\n');
  console.log(`\n--- ${title}${result.isError ? ' (isError)' : ''}\n${text}`);
};
const call = (name, args) => client.callTool({ name, arguments: args });

const { tools } = await client.listTools();
console.log(`tools/list: ${tools.map((t) => t.name).join(', ')}`);
show(
  'mcp_search_tools "android adb install apk"',
  await call('mcp_search_tools', { query: 'android adb install apk' }),
);
show(
  'mcp_search_tools "decompile function at address"',
  await call('mcp_search_tools', {
    query: 'decompile function at address',
    limit: 3,
  }),
);
show(
  'mcp_search_tools { target: "adb", limit: 5 } (browse a target, no query)',
  await call('mcp_search_tools', { target: 'adb', limit: 5 }),
);
show(
  'mcp_search_tools "zzyzx" (nothing matches: the known targets are named)',
  await call('mcp_search_tools', { query: 'zzyzx' }),
);
show(
  'mcp_inspect_schema adb_tap',
  await call('mcp_inspect_schema', { name: 'adb_tap' }),
);
show(
  `mcp_call_tool adb_tap as ${role}`,
  await call('mcp_call_tool', {
    name: 'adb_tap',
    arguments: { x: 120, y: 640 },
  }),
);
show(
  'mcp_call_tool core_read_file with a bad argument',
  await call('mcp_call_tool', {
    name: 'core_read_file',
    arguments: { path: 7 },
  }),
);
show(
  'mcp_call_tool core_read_file',
  await call('mcp_call_tool', {
    name: 'core_read_file',
    arguments: { path: 'README.md' },
  }),
);
await client.close();

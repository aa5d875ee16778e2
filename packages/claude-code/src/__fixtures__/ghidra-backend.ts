/**
 * Test fixture: one loopback MCP backend (`ghidra`, with a mutating
 * `rename_function` and a read-only `list_functions`) behind the broker's
 * loopback gateway fixture, and the `HERETEK_*` environment that points the
 * plugin's broker at it with its state in a temporary folder.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startMcpBackends,
  type McpBackends,
} from '#broker-fixtures/mcp-backends.js';
import { temporaryFolder } from './run-claude.js';

export async function startGhidraBackend(): Promise<{
  backends: McpBackends;
  env: Record<string, string>;
}> {
  const backends = await startMcpBackends({
    ghidra: [
      {
        name: 'rename_function',
        description: 'Rename a function in the Ghidra project database.',
        inputSchema: {
          type: 'object',
          properties: {
            old_name: { type: 'string' },
            new_name: { type: 'string' },
          },
          required: ['old_name', 'new_name'],
        },
      },
      {
        name: 'list_functions',
        description: 'List the functions of the loaded program.',
        inputSchema: { type: 'object', properties: {} },
        readOnly: true,
      },
    ],
  });
  const state = temporaryFolder('state');
  const backendsFile = join(state, 'backends.json');
  writeFileSync(
    backendsFile,
    JSON.stringify([
      { backend: 'ghidra-mcp', target: 'ghidra', profile: 'appsec' },
    ]),
  );
  return {
    backends,
    env: {
      HERETEK_GATEWAY_URL: backends.url,
      HERETEK_BACKENDS_FILE: backendsFile,
      HERETEK_PINS_FILE: join(state, 'pins.json'),
      HERETEK_USAGE_FILE: 'off',
      HERETEK_INDEX_CACHE_FILE: 'off',
    },
  };
}

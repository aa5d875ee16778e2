/**
 * Test fixture: one loopback MCP backend, `ghidra`, with a mutating
 * `rename_function` and a read-only `list_functions`, behind the loopback
 * gateway of `mcp-backends.ts`, and the `HERETEK_*` environment that points a
 * broker at it with its state in a temporary folder. The editor plugins' tests
 * and benches try their role gates with it, as the broker's own tests do.
 */
import path from 'node:path';
import {
  startMcpBackends,
  type FixtureTool,
  type McpBackends,
} from './mcp-backends.js';
import { scratchFolder } from './spawn-broker.js';

/** A mutating Ghidra tool. */
export const RENAME_TOOL: FixtureTool = {
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
};

/** A read-only Ghidra tool. */
const LIST_FUNCTIONS_TOOL: FixtureTool = {
  name: 'list_functions',
  description: 'List the functions of the loaded program.',
  inputSchema: { type: 'object', properties: {} },
  readOnly: true,
};

/** The `mcp_call_tool` input that calls {@link RENAME_TOOL} through the broker. */
export const RENAME = {
  name: 'ghidra_rename_function',
  arguments: { old_name: 'FUN_1000', new_name: 'main' },
};

/** The running backend, and a broker's environment that points at it. */
export type GhidraBackend = {
  backends: McpBackends;
  /** `HERETEK_GATEWAY_URL`, the backend table, pins in the temporary folder, no usage file, no index cache. */
  env: Record<string, string>;
  /** Stops the backend and removes the temporary folder. */
  close: () => Promise<void>;
};

/** Starts the `ghidra` backend on a random 127.0.0.1 port. */
export async function startGhidraBackend(): Promise<GhidraBackend> {
  const backends = await startMcpBackends({
    ghidra: [RENAME_TOOL, LIST_FUNCTIONS_TOOL],
  });
  const state = scratchFolder('heretek-ghidra-backend-');
  return {
    backends,
    env: {
      HERETEK_GATEWAY_URL: backends.url,
      HERETEK_BACKENDS_FILE: state.backends([
        { backend: 'ghidra-mcp', target: 'ghidra', profile: 'appsec' },
      ]),
      HERETEK_PINS_FILE: path.join(state.dir, 'pins.json'),
      HERETEK_USAGE_FILE: 'off',
      HERETEK_INDEX_CACHE_FILE: 'off',
    },
    close: async () => {
      await backends.close();
      state.remove();
    },
  };
}

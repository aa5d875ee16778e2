// What OpenCode does with the broker's server instructions when the broker is
// one of its MCP servers (not the plugin): the pinned opencode-ai binary runs
// the built broker bin over stdio, offline, against a loopback stand-in for
// the model provider, which records the system prompt it is sent.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentRequests,
  startModelStandIn,
} from '#broker-fixtures/model-stand-in.js';
import {
  PACKAGE_ROOT,
  anthropicProvider,
  runOpenCode,
  temporaryFolder,
} from './__fixtures__/run-opencode.js';

const BROKER_BIN = join(
  PACKAGE_ROOT,
  'node_modules/@heretek/broker/dist/cli.js',
);

/** `HERETEK_OPENCODE_E2E=0` skips the run, as in the plugin's end-to-end tests. */
const RUN_OPENCODE = process.env.HERETEK_OPENCODE_E2E !== '0';

describe.skipIf(!RUN_OPENCODE)(
  'the broker as an MCP server of OpenCode',
  () => {
    it("puts the broker's instructions into the agent's system prompt under the server's name", async () => {
      const model = await startModelStandIn();
      let system = '';
      let tools: string[] = [];
      try {
        const run = await runOpenCode({
          project: temporaryFolder('instructions-project'),
          message: 'hello',
          config: {
            model: 'anthropic/claude-sonnet-4-5',
            provider: anthropicProvider(model.baseURL),
            mcp: {
              heretek: {
                type: 'local',
                command: ['node', BROKER_BIN],
                environment: {
                  HERETEK_BROKER_OFFLINE: '1',
                  HERETEK_USAGE_FILE: 'off',
                  XDG_STATE_HOME: temporaryFolder('instructions-state'),
                },
              },
            },
          },
        });
        expect(run.code).toBe(0);
        const [request] = agentRequests(model.requests);
        system = ((request?.body.system ?? []) as Array<{ text: string }>)
          .map((block) => block.text)
          .join('\n');
        tools = ((request?.body.tools ?? []) as Array<{ name: string }>).map(
          (tool) => tool.name,
        );
      } finally {
        await model.close();
      }
      const block =
        /<mcp_instructions>\n {2}<server name="heretek">\n([\s\S]*?)\n {2}<\/server>\n<\/mcp_instructions>/.exec(
          system,
        );
      expect(block, system.slice(-3_000)).not.toBeNull();
      expect(block![1]).toMatch(
        /^ {4}This server is a broker in front of 12 backend targets in 5 profiles\./,
      );
      expect(block![1]).toMatch(
        /Before saying that a tool or a capability does not exist, search for it with mcp_search_tools/,
      );
      // OpenCode prefixes an MCP server's tools with the server's name.
      expect(tools).toEqual(
        expect.arrayContaining([
          'heretek_mcp_search_tools',
          'heretek_mcp_inspect_schema',
          'heretek_mcp_call_tool',
        ]),
      );
    });
  },
);

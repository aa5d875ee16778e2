// The plugin by its package name, as a user installs it: the packed packages
// published to a loopback registry, and each OpenCode line told to load
// `@heretek/opencode` (OpenCode 1: `"plugin"`, OpenCode 2: `"plugins"`),
// which it installs from that registry itself. One registry and one director
// session per line, with the work handed to the five other roles.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLE_NAMES } from '@heretek/prefix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RENAME,
  startGhidraBackend,
  type GhidraBackend,
} from '#broker-fixtures/ghidra-backend.js';
import {
  agentRequests,
  delegationLine,
  scriptLine as call,
  startModelStandIn,
  toolResults,
} from '#broker-fixtures/model-stand-in.js';
import { FROZEN } from './__fixtures__/expected.js';
import { startRegistry, type Registry } from './__fixtures__/registry.js';
import {
  anthropicProvider,
  runOpenCode,
  temporaryFolder,
} from './__fixtures__/run-opencode.js';
import {
  RUN_OPENCODE,
  firstRequestReadShares,
  roleOf,
  systemOf,
  type Outcome,
} from './__fixtures__/runs.js';

const LINES = [1, 2] as const;

/** The director's script: its own mutating call, the same call handed to staff-backend, a search handed to each other role. */
function directorScript(line: 1 | 2): string {
  const delegate = (role: string, prompt: string) =>
    line === 1
      ? delegationLine({ tool: 'task', role, prompt })
      : call('subagent', {
          agent: role,
          description: `work for ${role}`,
          prompt,
        });
  return [
    call('mcp_call_tool', RENAME),
    delegate('staff-backend', call('mcp_call_tool', RENAME)),
    ...ROLE_NAMES.filter(
      (role) => role !== 'director' && role !== 'staff-backend',
    ).map((role) =>
      delegate(role, call('mcp_search_tools', { query: 'rename' })),
    ),
  ].join('\n');
}

let ghidra: GhidraBackend;
let registry: Registry;
const outcomes = new Map<1 | 2, Outcome>();

describe.skipIf(!RUN_OPENCODE)(
  'the plugin installed by name from a registry',
  () => {
    beforeAll(async () => {
      [ghidra, registry] = await Promise.all([
        startGhidraBackend(),
        startRegistry(),
      ]);
      await Promise.all(
        LINES.map(async (line) => {
          const model = await startModelStandIn();
          try {
            const run = await runOpenCode({
              line,
              project: temporaryFolder(`registry-v${line}`),
              agent: 'director',
              env: { ...ghidra.env, npm_config_registry: `${registry.url}/` },
              config: {
                model: 'anthropic/claude-sonnet-4-5',
                provider: anthropicProvider(model.baseURL),
                [line === 1 ? 'plugin' : 'plugins']: ['@heretek/opencode'],
              },
              message: directorScript(line),
            });
            outcomes.set(line, { run, requests: [...model.requests] });
          } finally {
            await model.close();
          }
        }),
      );
    }, 900_000);

    afterAll(async () => {
      await Promise.all([ghidra?.close(), registry?.close()]);
      const dump = join(temporaryFolder('registry-record'), 'outcomes.json');
      writeFileSync(
        dump,
        JSON.stringify(Object.fromEntries(outcomes), null, 1),
      );
      console.error(`OpenCode runs recorded in ${dump}`);
    });

    it('publishes the packed packages and nothing else', () => {
      expect(registry.tarballs.sort()).toEqual([
        'heretek-broker-0.1.0.tgz',
        'heretek-opencode-0.0.0.tgz',
        'heretek-prefix-0.1.0.tgz',
        'zod-4.6.7.tgz',
      ]);
    });

    describe.each(LINES)('OpenCode %i', (line) => {
      const outcome = () => {
        const found = outcomes.get(line);
        if (found === undefined) throw new Error(`no run of OpenCode ${line}`);
        return found;
      };

      it('installs the package from the registry and ends with exit code 0', () => {
        const { run } = outcome();
        expect({ timedOut: run.timedOut, code: run.code }).toEqual({
          timedOut: false,
          code: 0,
        });
      });

      it('gives the six roles block 0 = the frozen prefix with a breakpoint and one tools array', () => {
        const agents = agentRequests(outcome().requests);
        const roles = new Set(agents.map(roleOf));
        expect([...roles].sort()).toEqual([...ROLE_NAMES].sort());
        for (const request of agents) {
          expect(systemOf(request)[0]?.text).toBe(FROZEN);
          expect(systemOf(request)[0]?.cache_control).toEqual({
            type: 'ephemeral',
          });
        }
        expect(
          new Set(agents.map((r) => JSON.stringify(r.body.tools))).size,
        ).toBe(1);
      });

      it("refuses director's mutating call and sends staff-backend's to the gateway with its role", () => {
        const agents = agentRequests(outcome().requests);
        expect(
          agents
            .filter((r) => roleOf(r) === 'director')
            .flatMap(toolResults)[0],
        ).toMatch(/^ROLE_FORBIDDEN: /);
        expect(
          agents
            .filter((r) => roleOf(r) === 'staff-backend')
            .flatMap(toolResults),
        ).toContain(
          'rename_function ok {"old_name":"FUN_1000","new_name":"main"}',
        );
      });

      it("reads at least 85 % of each delegated role's first request from the emulated Anthropic cache", () => {
        const shares = firstRequestReadShares(
          agentRequests(outcome().requests),
        );
        for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
          expect(shares.get(role), role).toBeGreaterThanOrEqual(0.85);
      });
    });

    it('sends one call per line to the backend, as staff-backend', () => {
      expect(ghidra.backends.calls.map((c) => [c.tool, c.role])).toEqual([
        ['rename_function', 'staff-backend'],
        ['rename_function', 'staff-backend'],
      ]);
    });
  },
);

// The plugin inside the real OpenCode 1 (the pinned opencode-ai binary), against
// loopback stand-ins for the model provider and real MCP backends behind a
// loopback gateway. Every OpenCode run happens once, two at a time, in
// beforeAll; the tests read what the stand-ins recorded.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLE_NAMES, isReadOnlyRole } from '@heretek/prefix';
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
import { CACHE_KEY, FROZEN } from './__fixtures__/expected.js';
import {
  DELEGATED_QA,
  USER_AGENTS,
  readOnlyRoleTests,
} from './__fixtures__/read-only-tests.js';
import {
  PLUGIN_URL,
  anthropicProvider,
  runOpenCode,
  temporaryFolder,
  type RunOpenCodeOptions,
} from './__fixtures__/run-opencode.js';
import {
  RUN_OPENCODE,
  closedPort,
  firstRequestReadShares,
  roleOf,
  seedWorkspace,
  systemOf,
  twoAtATime,
  workspaceScript,
  type Outcome,
} from './__fixtures__/runs.js';

const MODEL = 'anthropic/claude-sonnet-4-5';

/** A task tool call handing `prompt` to `role`. */
const delegate = (role: string, prompt: string) =>
  delegationLine({ tool: 'task', role, prompt });

/** An agent's tries to change `folder` with OpenCode 1's own tools (and, with `reads`, to read it), as script lines. */
const attempts = (folder: string, agent: string, reads = false) =>
  workspaceScript({ line: 1, folder, agent, reads });

let ghidra: GhidraBackend;
const outcomes = new Map<string, Outcome>();
/** Each run's project folder, by run name. */
const projects = new Map<string, string>();

describe.skipIf(!RUN_OPENCODE)('the plugin in OpenCode 1.18.33', () => {
  beforeAll(async () => {
    ghidra = await startGhidraBackend();
    const heretekEnv = (extra: Record<string, string> = {}) => ({
      ...ghidra.env,
      ...extra,
    });
    const projectA = seedWorkspace(temporaryFolder('project-a'));
    const projectB = seedWorkspace(temporaryFolder('project-b'));
    const userProject = temporaryFolder('project-user');
    const anthropic = (
      name: string,
      options: Omit<RunOpenCodeOptions, 'config'> & {
        config?: Record<string, unknown>;
      },
    ) => {
      projects.set(name, options.project);
      return async () => {
        const model = await startModelStandIn();
        try {
          const run = await runOpenCode({
            ...options,
            config: {
              model: MODEL,
              provider: anthropicProvider(model.baseURL),
              plugin: [PLUGIN_URL],
              ...options.config,
            },
          });
          outcomes.set(name, { run, requests: [...model.requests] });
        } finally {
          await model.close();
        }
      };
    };
    const others = ROLE_NAMES.filter((role) => role !== 'director');
    const down = await closedPort();

    await twoAtATime([
      // Director: a mutating call of its own, then the same call handed to
      // staff-backend, and a search handed to each other role; then
      // qa-adversary, delegated again, and director itself try to write a
      // file with OpenCode's write tool and with bash, read one and run a
      // read-only command.
      anthropic('director', {
        project: projectA,
        agent: 'director',
        timeoutMs: 480_000,
        env: heretekEnv(),
        message: [
          call('mcp_call_tool', RENAME),
          delegate('staff-backend', call('mcp_call_tool', RENAME)),
          ...others
            .filter((role) => role !== 'staff-backend')
            .map((role) =>
              delegate(role, call('mcp_search_tools', { query: 'rename' })),
            ),
          delegate(
            'qa-adversary',
            attempts(projectA, DELEGATED_QA, true).join('\n'),
          ),
          ...attempts(projectA, 'director', true),
        ].join('\n'),
      }),
      // Each other role as the primary agent, alternating two project
      // folders, trying to write a file with write and with bash (the
      // read-only one also reading one and running a read-only command).
      ...others.map((role, index) => {
        const project = index % 2 === 0 ? projectB : projectA;
        return anthropic(role, {
          project,
          agent: role,
          env: heretekEnv(),
          message: attempts(project, role, isReadOnlyRole(role)).join('\n'),
        });
      }),
      // A user's own agents: one named after a role, one of their own, and
      // OpenCode's general agent; the first and the last write files.
      anthropic('user-agents', {
        project: userProject,
        agent: 'qa-adversary',
        env: heretekEnv(),
        config: {
          agent: {
            'qa-adversary': { mode: 'primary', prompt: 'My own QA prompt.' },
            reviewer: {
              mode: 'subagent',
              description: 'Reviews changes',
              prompt: 'My reviewer prompt.',
            },
          },
        },
        message: [
          ...attempts(userProject, USER_AGENTS[0]),
          delegate('reviewer', 'hello'),
          delegate('general', attempts(userProject, USER_AGENTS[1]).join('\n')),
        ].join('\n'),
      }),
      // The same delegation against an OpenAI-compatible stand-in.
      async () => {
        const model = await startModelStandIn();
        try {
          const run = await runOpenCode({
            project: temporaryFolder('project-openai'),
            agent: 'director',
            env: heretekEnv(),
            config: {
              model: 'local/gpt-5',
              small_model: 'local/gpt-5',
              provider: {
                local: {
                  npm: '@ai-sdk/openai-compatible',
                  name: 'Loopback',
                  options: { baseURL: model.baseURL, apiKey: 'test' },
                  models: { 'gpt-5': { name: 'gpt-5' } },
                },
              },
              plugin: [PLUGIN_URL],
            },
            message: others.map((role) => delegate(role, 'hello')).join('\n'),
          });
          outcomes.set('openai', { run, requests: [...model.requests] });
        } finally {
          await model.close();
        }
      },
      // A bad variable: OpenCode starts, the meta-tools refuse with a code.
      anthropic('bad-config', {
        project: temporaryFolder('project-bad'),
        agent: 'staff-backend',
        env: heretekEnv({ HERETEK_GATEWAY_TIMEOUT_MS: 'soon' }),
        message: call('mcp_search_tools', { query: 'rename' }),
      }),
      // The gateway down: a coded refusal, and the session ends.
      anthropic('gateway-down', {
        project: temporaryFolder('project-down'),
        agent: 'staff-backend',
        env: heretekEnv({ HERETEK_GATEWAY_URL: `http://127.0.0.1:${down}` }),
        message: call('mcp_call_tool', RENAME),
      }),
    ]);
  }, 1_500_000);

  afterAll(async () => {
    await ghidra?.close();
    // What each run sent and logged, for a failure to be read after the fact.
    const dump = join(temporaryFolder('e2e-record'), 'outcomes.json');
    writeFileSync(dump, JSON.stringify(Object.fromEntries(outcomes), null, 1));
    console.error(`OpenCode runs recorded in ${dump}`);
  });

  const outcome = (name: string): Outcome => {
    const found = outcomes.get(name);
    if (found === undefined) throw new Error(`no OpenCode run "${name}"`);
    return found;
  };

  describe('every OpenCode run', () => {
    it('ends on its own with exit code 0', () => {
      for (const [name, { run }] of outcomes) {
        expect({ name, timedOut: run.timedOut }).toEqual({
          name,
          timedOut: false,
        });
        expect({ name, code: run.code }).toEqual({ name, code: 0 });
      }
      expect(outcomes.size).toBe(10);
    });
  });

  describe('prompt layout', () => {
    it('sends the frozen prefix as system block 0 with a cache breakpoint, for each of the six roles as primary agents and as subagents', () => {
      const seen = new Map<string, number>();
      for (const name of [...ROLE_NAMES]) {
        for (const request of agentRequests(outcome(name).requests)) {
          const role = roleOf(request);
          expect(role).toBeDefined();
          const [block0, block1] = systemOf(request);
          expect(block0?.text).toBe(FROZEN);
          expect(block0?.cache_control).toEqual({ type: 'ephemeral' });
          expect(block1?.cache_control).toEqual({ type: 'ephemeral' });
          const via =
            name === 'director' && role !== 'director' ? 'task' : 'run';
          seen.set(`${role} ${via}`, (seen.get(`${role} ${via}`) ?? 0) + 1);
        }
      }
      for (const role of ROLE_NAMES)
        expect(seen.get(`${role} run`)).toBeGreaterThan(0);
      for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
        expect(seen.get(`${role} task`)).toBeGreaterThan(0);
    });

    it("puts OpenCode's own parts between the frozen prefix and the role, the same bytes for every role of a session", () => {
      const parts = new Set<string>();
      for (const request of agentRequests(outcome('director').requests)) {
        const [, block1, block2] = systemOf(request);
        expect(block1?.text).toContain('<env>');
        expect(block2?.text).toMatch(/^# Role: [a-z-]+\n/);
        expect(block2?.text.startsWith(`# Role: ${roleOf(request)}\n`)).toBe(
          true,
        );
        parts.add(block1!.text);
      }
      expect(parts.size).toBe(1);
    });

    it("reads at least 85 % of each delegated role's first request from the emulated Anthropic cache", () => {
      const shares = firstRequestReadShares(
        agentRequests(outcome('director').requests),
      );
      for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
        expect(shares.get(role), role).toBeGreaterThanOrEqual(0.85);
    });

    it('sends a byte-identical tools array for the six roles, primary or delegated, in two project folders', () => {
      const tools = new Set<string>();
      let requests = 0;
      for (const name of ROLE_NAMES) {
        for (const request of agentRequests(outcome(name).requests)) {
          tools.add(JSON.stringify(request.body.tools));
          requests += 1;
        }
      }
      expect(requests).toBeGreaterThanOrEqual(6 + 5 * 2);
      expect(tools.size).toBe(1);
      const names = (JSON.parse([...tools][0]!) as Array<{ name: string }>).map(
        (t) => t.name,
      );
      expect(names).toEqual(
        expect.arrayContaining([
          'mcp_call_tool',
          'mcp_inspect_schema',
          'mcp_search_tools',
          'task',
        ]),
      );
    });

    it('registers each tool and each role agent once, though OpenCode 1.18.33 calls both server() and setup()', () => {
      let requests = 0;
      for (const name of ROLE_NAMES) {
        for (const request of agentRequests(outcome(name).requests)) {
          const tools = request.body.tools as Array<{
            name: string;
            description?: string;
          }>;
          const names = tools.map((t) => t.name);
          expect(new Set(names).size).toBe(names.length);
          // The task tool lists the agents it can start, one line each.
          const task = tools.find((t) => t.name === 'task')!.description!;
          for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
            expect(task.match(new RegExp(`^- ${role}:`, 'gm'))).toHaveLength(1);
          requests += 1;
        }
      }
      expect(requests).toBeGreaterThan(0);
    });

    it("sends a user's own agent and a user's agent named after a role unchanged, and logs that the user's wins", () => {
      const { run, requests } = outcome('user-agents');
      expect(run.stderr).toMatch(
        /agent qa-adversary is defined in your OpenCode configuration: yours is used as you wrote it/,
      );
      const agents = agentRequests(requests);
      const own = agents.filter((r) =>
        systemOf(r)[0]?.text.startsWith('My own QA prompt.'),
      );
      const reviewer = agents.filter((r) =>
        systemOf(r)[0]?.text.startsWith('My reviewer prompt.'),
      );
      expect(own.length).toBeGreaterThan(0);
      expect(reviewer.length).toBeGreaterThan(0);
      for (const request of [...own, ...reviewer]) {
        expect(systemOf(request)).toHaveLength(1);
        expect(systemOf(request)[0]!.text).not.toContain(FROZEN.slice(0, 200));
      }
    });

    it('sends the same prompt_cache_key, derived from the frozen prefix, for every role to an OpenAI-compatible provider', () => {
      const { requests } = outcome('openai');
      const keys = new Map<string, unknown>();
      for (const request of requests) {
        const messages = request.body.messages as Array<{
          role: string;
          content: unknown;
        }>;
        const system = messages
          .filter((m) => m.role === 'system')
          .map((m) => String(m.content))
          .join('\n');
        const role = ROLE_NAMES.find((r) => system.includes(`# Role: ${r}\n`));
        if (role === undefined) {
          expect(request.body.prompt_cache_key).toBeUndefined();
          continue;
        }
        keys.set(role, request.body.prompt_cache_key);
        expect(request.body.prompt_cache_key).toBe(CACHE_KEY);
      }
      expect([...keys.keys()].sort()).toEqual([...ROLE_NAMES].sort());
    });
  });

  describe('role gate', () => {
    it("refuses director's mutating call without reaching the backend, and sends the same call handed to staff-backend", () => {
      const agents = agentRequests(outcome('director').requests);
      const directorResults = agents
        .filter((r) => roleOf(r) === 'director')
        .flatMap(toolResults);
      expect(directorResults[0]).toMatch(
        /^ROLE_FORBIDDEN: Role "director" is read-only/,
      );
      const backendResults = agents
        .filter((r) => roleOf(r) === 'staff-backend')
        .flatMap(toolResults);
      expect(backendResults).toContain(
        'rename_function ok {"old_name":"FUN_1000","new_name":"main"}',
      );
      // One call reached the backend: staff-backend's, with its role.
      expect(
        ghidra.backends.calls.map((c) => [c.path, c.tool, c.arguments, c.role]),
      ).toEqual([
        ['/mcp/ghidra', 'rename_function', RENAME.arguments, 'staff-backend'],
      ]);
    });
  });

  describe("read-only roles and OpenCode 1's own tools", () => {
    readOnlyRoleTests({
      line: 1,
      outcome,
      projectOf: (name) => projects.get(name)!,
      refusalOf: (result) => result,
    });
  });

  describe('configuration and failures', () => {
    it('logs a bad HERETEK_* value in OpenCode, starts, and answers meta-tool calls with INVALID_CONFIG', () => {
      const { run, requests } = outcome('bad-config');
      expect(run.stderr).toMatch(
        /broker not started.*HERETEK_GATEWAY_TIMEOUT_MS must be a whole number/,
      );
      const results = agentRequests(requests).flatMap(toolResults);
      expect(results[0]).toMatch(
        /^INVALID_CONFIG: .*HERETEK_GATEWAY_TIMEOUT_MS/s,
      );
    });

    it('answers a call with a coded refusal when the gateway is down, and the session ends', () => {
      const { run, requests } = outcome('gateway-down');
      const results = agentRequests(requests).flatMap(toolResults);
      expect(results[0]).toMatch(/^(BACKEND_FAILED|CIRCUIT_OPEN): /);
      expect(run.timedOut).toBe(false);
    });
  });
});

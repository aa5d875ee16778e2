// The plugin inside the real OpenCode 2 (the platform binary of the pinned
// @opencode/cli, as `opencode run --standalone`), loaded from the package
// folder, against loopback stand-ins for the model provider and real MCP
// backends behind a loopback gateway. Every OpenCode run happens once, two at
// a time, in beforeAll; the tests read what the stand-ins recorded.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
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
  scriptLine as call,
  startModelStandIn,
  toolResults,
  type RecordedRequest,
} from '#broker-fixtures/model-stand-in.js';
import { CACHE_KEY, FROZEN } from './__fixtures__/expected.js';
import {
  DELEGATED_QA,
  USER_AGENTS,
  readOnlyRoleTests,
} from './__fixtures__/read-only-tests.js';
import {
  PACKAGE_ROOT,
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

/** OpenCode 2's delegation: a `subagent` tool call handing `prompt` to `agent`. */
const delegate = (agent: string, prompt: string) =>
  call('subagent', { agent, description: `work for ${agent}`, prompt });

/** How many cache breakpoints a request carries, over tools, system and messages. */
const breakpoints = (request: RecordedRequest) =>
  JSON.stringify(request.body).split('"cache_control"').length - 1;

/** An agent's tries to change `folder` with OpenCode 2's own tools (and, with `reads`, to read it), as script lines. */
const attempts = (folder: string, agent: string, reads = false) =>
  workspaceScript({ line: 2, folder, agent, reads });

/** The message of a tool call that failed: OpenCode 2 gives the model `{"error":{"type":...,"message":...},"content":[]}`; any other result as it is. */
function failureOf(result: string | undefined): string | undefined {
  try {
    return (JSON.parse(result!) as { error: { message: string } }).error
      .message;
  } catch {
    return result;
  }
}

/** A pins file cut short. */
const BROKEN_PINS = '{"version": 2, "tools": ';

let ghidra: GhidraBackend;
let brokenPins: string;
const outcomes = new Map<string, Outcome>();
/** Each run's project folder, by run name. */
const projects = new Map<string, string>();

describe.skipIf(!RUN_OPENCODE)('the plugin in OpenCode 2.1.2', () => {
  beforeAll(async () => {
    ghidra = await startGhidraBackend();
    const heretekEnv = (extra: Record<string, string> = {}) => ({
      ...ghidra.env,
      ...extra,
    });
    // The package folder linked under `.opencode/plugins/`, where OpenCode 2
    // finds local plugins without any configuration.
    const linked = temporaryFolder('v2-project-linked');
    mkdirSync(join(linked, '.opencode/plugins'), { recursive: true });
    symlinkSync(PACKAGE_ROOT, join(linked, '.opencode/plugins/heretek'));
    const anthropic = (
      name: string,
      options: Omit<RunOpenCodeOptions, 'config' | 'line'> & {
        config?: Record<string, unknown>;
      },
    ) => {
      projects.set(name, options.project);
      return async () => {
        const model = await startModelStandIn();
        try {
          const run = await runOpenCode({
            ...options,
            line: 2,
            config: {
              model: MODEL,
              provider: anthropicProvider(model.baseURL),
              plugins: [PACKAGE_ROOT],
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
    const directorProject = seedWorkspace(
      temporaryFolder('v2-project-director'),
    );
    const userProject = temporaryFolder('v2-project-user');
    brokenPins = join(temporaryFolder('v2-pins'), 'pins.json');
    writeFileSync(brokenPins, BROKEN_PINS);

    await twoAtATime([
      // Director: a mutating call of its own, the same call with a role
      // written into its arguments, then the call handed to staff-backend,
      // and a search handed to each other role; then qa-adversary,
      // delegated again, and director itself try to write a file with
      // OpenCode's write tool and with the shell, read one and run a
      // read-only command. Each run has a project folder of its own:
      // OpenCode 2 reloads a configuration file that changes while it runs.
      anthropic('director', {
        project: directorProject,
        agent: 'director',
        env: heretekEnv(),
        message: [
          call('mcp_call_tool', RENAME),
          call('mcp_call_tool', { ...RENAME, role: 'staff-backend' }),
          delegate('staff-backend', call('mcp_call_tool', RENAME)),
          ...others
            .filter((role) => role !== 'staff-backend')
            .map((role) =>
              delegate(role, call('mcp_search_tools', { query: 'rename' })),
            ),
          delegate(
            'qa-adversary',
            attempts(directorProject, DELEGATED_QA, true).join('\n'),
          ),
          ...attempts(directorProject, 'director', true),
        ].join('\n'),
      }),
      // Each other role as the primary agent, trying to write a file with
      // write and with the shell (the read-only one also reading one and
      // running a read-only command).
      ...others.map((role) => {
        const project = seedWorkspace(temporaryFolder(`v2-project-${role}`));
        return anthropic(role, {
          project,
          agent: role,
          env: heretekEnv(),
          message: attempts(project, role, isReadOnlyRole(role)).join('\n'),
        });
      }),
      // A user's own agents: one named after a role (with a prompt of
      // theirs), one of their own, and OpenCode's general agent; the first
      // and the last write files.
      anthropic('user-agents', {
        project: userProject,
        agent: 'qa-adversary',
        env: heretekEnv(),
        config: {
          agents: {
            'qa-adversary': { mode: 'primary', system: 'My own QA prompt.' },
            reviewer: {
              mode: 'subagent',
              description: 'Reviews changes',
              system: 'My reviewer prompt.',
            },
          },
        },
        message: [
          ...attempts(userProject, USER_AGENTS[0]),
          delegate('reviewer', 'hello'),
          delegate('general', attempts(userProject, USER_AGENTS[1]).join('\n')),
        ].join('\n'),
      }),
      // The same delegation against an OpenAI-compatible stand-in that takes
      // prompt cache keys (`setCacheKey`).
      async () => {
        const model = await startModelStandIn();
        try {
          const run = await runOpenCode({
            line: 2,
            project: temporaryFolder('v2-project-openai'),
            agent: 'director',
            env: heretekEnv(),
            config: {
              model: 'local/gpt-5',
              small_model: 'local/gpt-5',
              provider: {
                local: {
                  npm: '@ai-sdk/openai-compatible',
                  name: 'Loopback',
                  options: {
                    baseURL: model.baseURL,
                    apiKey: 'test',
                    setCacheKey: true,
                  },
                  models: { 'gpt-5': { name: 'gpt-5' } },
                },
              },
              plugins: [PACKAGE_ROOT],
            },
            message: others.map((role) => delegate(role, 'hello')).join('\n'),
          });
          outcomes.set('openai', { run, requests: [...model.requests] });
        } finally {
          await model.close();
        }
      },
      // The package folder under `.opencode/plugins/`, no `plugins` entry.
      anthropic('linked', {
        project: linked,
        agent: 'staff-backend',
        env: heretekEnv(),
        config: { plugins: [] },
        message: call('mcp_search_tools', { query: 'rename' }),
      }),
      // A bad variable: OpenCode starts, the meta-tools refuse with a code.
      anthropic('bad-config', {
        project: temporaryFolder('v2-project-bad'),
        agent: 'staff-backend',
        env: heretekEnv({ HERETEK_GATEWAY_TIMEOUT_MS: 'soon' }),
        message: call('mcp_search_tools', { query: 'rename' }),
      }),
      // A pins file that cannot be trusted stops the broker, as it stops the
      // stdio broker; the file is left as it was.
      anthropic('bad-pins', {
        project: temporaryFolder('v2-project-pins'),
        agent: 'staff-backend',
        env: heretekEnv({ HERETEK_PINS_FILE: brokenPins }),
        message: call('mcp_search_tools', { query: 'rename' }),
      }),
      // The gateway down: a coded refusal, and the session ends.
      anthropic('gateway-down', {
        project: temporaryFolder('v2-project-down'),
        agent: 'staff-backend',
        env: heretekEnv({ HERETEK_GATEWAY_URL: `http://127.0.0.1:${down}` }),
        message: call('mcp_call_tool', RENAME),
      }),
    ]);
  }, 900_000);

  afterAll(async () => {
    await ghidra?.close();
    // What each run sent and logged, for a failure to be read after the fact.
    const dump = join(temporaryFolder('v2-e2e-record'), 'outcomes.json');
    writeFileSync(dump, JSON.stringify(Object.fromEntries(outcomes), null, 1));
    console.error(`OpenCode 2 runs recorded in ${dump}`);
  });

  const outcome = (name: string): Outcome => {
    const found = outcomes.get(name);
    if (found === undefined) throw new Error(`no OpenCode 2 run "${name}"`);
    return found;
  };

  /** The requests of role agents in the director's session and the five primary runs. */
  const roleRequests = () =>
    ROLE_NAMES.flatMap((name) =>
      agentRequests(outcome(name).requests).map((request) => ({
        name,
        request,
      })),
    );

  describe('every OpenCode 2 run', () => {
    it('ends on its own with exit code 0', () => {
      for (const [name, { run }] of outcomes) {
        expect({ name, timedOut: run.timedOut }).toEqual({
          name,
          timedOut: false,
        });
        expect({ name, code: run.code }).toEqual({ name, code: 0 });
      }
      expect(outcomes.size).toBe(12);
    });
  });

  describe('prompt layout', () => {
    it('sends the frozen prefix as system block 0 with a cache breakpoint, for each of the six roles as primary agents and as subagents', () => {
      const seen = new Set<string>();
      for (const { name, request } of roleRequests()) {
        const role = roleOf(request);
        expect(role).toBeDefined();
        const [block0] = systemOf(request);
        expect(block0?.text).toBe(FROZEN);
        expect(block0?.cache_control).toEqual({ type: 'ephemeral' });
        seen.add(
          `${role} ${name === 'director' && role !== 'director' ? 'subagent' : 'run'}`,
        );
      }
      for (const role of ROLE_NAMES) expect(seen).toContain(`${role} run`);
      for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
        expect(seen).toContain(`${role} subagent`);
    });

    it("sends everything but the role's own text before it, with a breakpoint after it, within Anthropic's four breakpoints", () => {
      for (const { request } of roleRequests()) {
        const system = systemOf(request);
        const role = roleOf(request)!;
        expect(system.at(-1)!.text.startsWith(`# Role: ${role}\n`)).toBe(true);
        expect(system.at(-2)!.cache_control).toEqual({ type: 'ephemeral' });
        // OpenCode's model information and Code Mode catalog are among them.
        expect(system.map((block) => block.text.split('\n')[0])).toEqual(
          expect.arrayContaining(['# Your Model', '# Code Mode']),
        );
        // Tools, block 0, the end of the shared blocks and the latest message.
        expect(breakpoints(request)).toBe(4);
        const messages = request.body.messages as Array<{
          content: Array<{ cache_control?: unknown }>;
        }>;
        expect(
          messages.at(-1)!.content.some((part) => part.cache_control),
        ).toBe(true);
      }
      // In one session (one working directory, which the Code Mode catalog
      // names) the six roles' system blocks are the same up to the role's.
      const shared = new Set(
        agentRequests(outcome('director').requests).map((request) =>
          JSON.stringify(systemOf(request).slice(0, -1)),
        ),
      );
      expect(shared.size).toBe(1);
    });

    it("reads at least 85 % of each delegated role's first request from the emulated Anthropic cache", () => {
      const shares = firstRequestReadShares(
        agentRequests(outcome('director').requests),
      );
      for (const role of ROLE_NAMES.filter((r) => r !== 'director'))
        expect(shares.get(role), role).toBeGreaterThanOrEqual(0.85);
    });

    it('sends a byte-identical tools array for the six roles, primary or delegated through the subagent tool, in six project folders, each tool once', () => {
      const tools = new Set<string>();
      for (const { request } of roleRequests())
        tools.add(JSON.stringify(request.body.tools));
      expect(tools.size).toBe(1);
      const names = (JSON.parse([...tools][0]!) as Array<{ name: string }>).map(
        (t) => t.name,
      );
      expect(new Set(names).size).toBe(names.length);
      expect(names).toEqual(
        expect.arrayContaining([
          'mcp_call_tool',
          'mcp_inspect_schema',
          'mcp_search_tools',
          'subagent',
          'execute',
        ]),
      );
    });

    it("sends a user's own agent and a user's agent named after a role with its own system prompt unchanged, and logs it", () => {
      const { run, requests } = outcome('user-agents');
      expect(run.stderr).toMatch(
        /agent qa-adversary has a system prompt of yours \(agents\.qa-adversary in your OpenCode configuration\): its requests go out as you wrote them/,
      );
      const agents = agentRequests(requests);
      const own = agents.filter(
        (r) => systemOf(r)[0]?.text === 'My own QA prompt.',
      );
      const reviewer = agents.filter(
        (r) => systemOf(r)[0]?.text === 'My reviewer prompt.',
      );
      expect(own.length).toBeGreaterThan(0);
      expect(reviewer.length).toBeGreaterThan(0);
      for (const request of [...own, ...reviewer])
        for (const block of systemOf(request))
          expect(block.text).not.toContain(FROZEN.slice(0, 200));
    });

    it("sends the frozen prefix's prompt_cache_key for every role to an OpenAI-compatible provider that takes keys, OpenCode's own for anything else", () => {
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
          expect(request.body.prompt_cache_key).toMatch(/^ses_/);
          continue;
        }
        keys.set(role, request.body.prompt_cache_key);
        expect(request.body.prompt_cache_key).toBe(CACHE_KEY);
      }
      expect([...keys.keys()].sort()).toEqual([...ROLE_NAMES].sort());
    });

    it('loads the package folder linked under .opencode/plugins/', () => {
      const agents = agentRequests(outcome('linked').requests);
      expect(agents.length).toBeGreaterThan(0);
      for (const request of agents) {
        expect(roleOf(request)).toBe('staff-backend');
        expect(systemOf(request)[0]?.text).toBe(FROZEN);
      }
      expect(agents.flatMap(toolResults)[0]).toMatch(
        /^ghidra_rename_function \[mutating\]/,
      );
    });
  });

  describe('role gate', () => {
    it("refuses director's mutating call without reaching the backend, whatever role its arguments name, and sends the same call handed to staff-backend", () => {
      const agents = agentRequests(outcome('director').requests);
      const directorResults = agents
        .filter((r) => roleOf(r) === 'director')
        .flatMap(toolResults);
      expect(directorResults[0]).toMatch(
        /^ROLE_FORBIDDEN: Role "director" is read-only/,
      );
      expect(directorResults[1]).toMatch(/^[A-Z_]+: /);
      expect(directorResults[1]).not.toMatch(/^rename_function ok/);
      const backendResults = agents
        .filter((r) => roleOf(r) === 'staff-backend')
        .flatMap(toolResults);
      expect(backendResults).toContain(
        'rename_function ok {"old_name":"FUN_1000","new_name":"main"}',
      );
      // One call reached the backend: staff-backend's, with its role as
      // the call's x-heretek-role.
      expect(
        ghidra.backends.calls.map((c) => [c.path, c.tool, c.arguments, c.role]),
      ).toEqual([
        ['/mcp/ghidra', 'rename_function', RENAME.arguments, 'staff-backend'],
      ]);
    });
  });

  describe("read-only roles and OpenCode 2's own tools", () => {
    readOnlyRoleTests({
      line: 2,
      outcome,
      projectOf: (name) => projects.get(name)!,
      refusalOf: failureOf,
    });
  });

  describe('configuration and failures', () => {
    it('logs a bad HERETEK_* value, starts, and answers meta-tool calls with INVALID_CONFIG', () => {
      const { run, requests } = outcome('bad-config');
      expect(run.stderr).toMatch(
        /broker not started.*HERETEK_GATEWAY_TIMEOUT_MS must be a whole number/s,
      );
      const results = agentRequests(requests).flatMap(toolResults);
      expect(results[0]).toMatch(
        /^INVALID_CONFIG: .*HERETEK_GATEWAY_TIMEOUT_MS/s,
      );
    });

    it('answers meta-tool calls with PINS_FILE_INVALID naming a pins file that cannot be trusted, as the stdio broker refuses to start', () => {
      const { run, requests } = outcome('bad-pins');
      expect(run.stderr).toMatch(/broker not started.*Pins file .*pins\.json/s);
      const results = agentRequests(requests).flatMap(toolResults);
      expect(results[0]).toMatch(/^PINS_FILE_INVALID: Pins file .*pins\.json/);
      expect(readFileSync(brokenPins, 'utf8')).toBe(BROKEN_PINS);
    });

    it('answers a call with a coded refusal when the gateway is down, and the session ends', () => {
      const { run, requests } = outcome('gateway-down');
      const results = agentRequests(requests).flatMap(toolResults);
      expect(results[0]).toMatch(/^(BACKEND_FAILED|CIRCUIT_OPEN): /);
      expect(run.timedOut).toBe(false);
    });
  });
});

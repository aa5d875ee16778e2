// The plugin inside the real Claude Code (the pinned @anthropic-ai/claude-code
// binary), headless, against a loopback stand-in for the Anthropic Messages
// API and real MCP backends behind a loopback gateway. Every Claude Code run
// happens once, at the same time, in beforeAll; the tests read what the
// stand-ins recorded.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROLE_NAMES,
  assemblePrefixCachedPrompt,
  isReadOnlyRole,
  type RoleName,
} from '@heretek/prefix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RENAME,
  startGhidraBackend,
  type GhidraBackend,
} from '#broker-fixtures/ghidra-backend.js';
import {
  delegationLine,
  scriptLine as call,
  toolResults,
  type RecordedRequest,
} from '#broker-fixtures/model-stand-in.js';
import { CALL_TOOL, CLAUDE_CODE_TOOLS } from './layout.js';
import { BROKER_TOOLS } from './plugin-files.js';
import {
  PACKAGE_ROOT,
  REPOSITORY_ROOT,
  claudeCommand,
  runClaudeRecorded,
  servePackedPackage,
  temporaryFolder,
  type RecordedRun,
  type RunClaudeOptions,
} from './__fixtures__/run-claude.js';

const expected = assemblePrefixCachedPrompt({
  role: 'director',
  workspaceRoot: REPOSITORY_ROOT,
  activeProfile: 'core',
});
const FROZEN = expected.layers[0].text + expected.layers[1].text;

/** An Agent tool call handing `prompt` to the plugin's `role`. */
const delegate = (role: RoleName, prompt: string) =>
  delegationLine({
    tool: 'Agent',
    role,
    subagentType: `heretek:${role}`,
    prompt,
  });

type SystemBlock = { type: string; text: string; cache_control?: unknown };
type Message = { role: string; content: unknown };

const systemOf = (request: RecordedRequest) =>
  (request.body.system ?? []) as SystemBlock[];
const messagesOf = (request: RecordedRequest) =>
  (request.body.messages ?? []) as Message[];
/** A message's content as JSON text (a string or blocks alike). */
const textOf = (content: unknown): string => JSON.stringify(content ?? '');

/** The role whose layers (from the hook) a request carries, read from its layer 3 heading. */
const roleOf = (request: RecordedRequest): RoleName | undefined =>
  ROLE_NAMES.find((role) =>
    messagesOf(request).some((m) =>
      textOf(m.content).includes(`# Role: ${role}\\n`),
    ),
  );

/** The requests of one subagent (its first user text is the delegated prompt). */
const requestsOfRole = (requests: RecordedRequest[], role: RoleName) =>
  requests.filter((r) => roleOf(r) === role);

const ALLOWED = ['Agent', ...BROKER_TOOLS];

/**
 * The workspace run: every agent tries to change the project folder with
 * Claude Code's own tools (allowed by `--allowedTools`, so only the plugin's
 * hook stands in the way), then reads a file and runs a read-only command.
 */
const WORKSPACE = temporaryFolder('workspace');
const SEED = 'seed text 42';
/** A user's project agent named like a role, and Claude Code's own agent. */
const OTHER_AGENTS = ['director', 'general-purpose'] as const;
/** The file an agent's `kind` of attempt writes (`kind`: write or shell). */
const attempted = (agent: string, kind: 'write' | 'shell') =>
  join(WORKSPACE, `${kind}-${agent.replace(':', '-')}.txt`);
/** The script of one agent in the workspace run. */
const workspaceScript = (agent: string) =>
  [
    call('Write', { file_path: attempted(agent, 'write'), content: agent }),
    call('Bash', {
      command: `echo ${agent} > ${attempted(agent, 'shell')}`,
      description: 'write a file from the shell',
    }),
    call('Read', { file_path: join(WORKSPACE, 'seed.txt') }),
    call('Bash', {
      command: `cat ${join(WORKSPACE, 'seed.txt')} | wc -c && git status 2>&1 | head -1`,
      description: 'a read-only command',
    }),
  ].join('\n');

let ghidra: GhidraBackend;
const installs: string[] = [];

/**
 * Installs the plugin into a fresh HOME with `claude plugin install heretek
 * --marketplace <folder>`, the folder holding the repository's marketplace
 * file with its npm package pointed at the packed package; returns the HOME.
 */
async function installPacked(): Promise<string> {
  const packed = await servePackedPackage();
  try {
    const marketplace = JSON.parse(
      readFileSync(
        join(REPOSITORY_ROOT, '.claude-plugin/marketplace.json'),
        'utf8',
      ),
    ) as { plugins: Array<{ source: { package: string } }> };
    marketplace.plugins[0]!.source.package = packed.tarballUrl;
    const folder = temporaryFolder('marketplace');
    mkdirSync(join(folder, '.claude-plugin'));
    writeFileSync(
      join(folder, '.claude-plugin/marketplace.json'),
      JSON.stringify(marketplace),
    );
    const home = temporaryFolder('home');
    const { code, output } = await claudeCommand(
      ['plugin', 'install', 'heretek', '--marketplace', folder],
      { home, env: { npm_config_registry: packed.registry } },
    );
    installs.push(output);
    if (code !== 0)
      throw new Error(`plugin install ended with ${code}: ${output}`);
    return home;
  } finally {
    await packed.close();
  }
}
const outcomes = new Map<string, RecordedRun>();

describe('the plugin in Claude Code', () => {
  beforeAll(async () => {
    ghidra = await startGhidraBackend();
    const claude = async (
      name: string,
      {
        moreAllowedTools = [],
        ...options
      }: Omit<RunClaudeOptions, 'baseUrl' | 'allowedTools'> & {
        install?: () => Promise<string>;
        /** Claude Code's own tools to allow without asking, beside the broker's. */
        moreAllowedTools?: string[];
      },
    ) => {
      const home = await options.install?.();
      outcomes.set(
        name,
        await runClaudeRecorded({
          ...options,
          allowedTools: [...ALLOWED, ...moreAllowedTools],
          env: ghidra.env,
          ...(home === undefined ? {} : { home }),
        }),
      );
    };
    const others = ROLE_NAMES.filter(
      (role) => role !== 'director' && role !== 'staff-backend',
    );
    await Promise.all([
      // The main thread hands work to each of the six roles.
      claude('roles', {
        message: [
          delegate(
            'director',
            [
              call(CALL_TOOL, RENAME),
              // A role the model wrote itself, beside the call and inside its arguments.
              call(CALL_TOOL, { ...RENAME, role: 'staff-backend' }),
              call(CALL_TOOL, {
                name: RENAME.name,
                arguments: { ...RENAME.arguments, role: 'staff-backend' },
              }),
            ].join('\n'),
          ),
          delegate('staff-backend', call(CALL_TOOL, RENAME)),
          ...others.map((role) =>
            delegate(role, call(BROKER_TOOLS[0]!, { query: 'rename' })),
          ),
        ].join('\n'),
      }),
      // Hooks off: the broker hears of no caller.
      claude('hooks-off', {
        settings: { disableAllHooks: true },
        message: delegate(
          'staff-backend',
          [
            call(CALL_TOOL, RENAME),
            call(CALL_TOOL, {
              name: RENAME.name,
              arguments: { ...RENAME.arguments, role: 'staff-backend' },
            }),
            call(BROKER_TOOLS[0]!, { query: 'rename' }),
          ].join('\n'),
        ),
      }),
      // Installed as users install it once published: the repository's
      // marketplace, its npm source pointing at this package as packed.
      claude('installed', {
        install: installPacked,
        plugin: false,
        message: delegate(
          'staff-frontend',
          call(BROKER_TOOLS[0]!, { query: 'rename' }),
        ),
      }),
      // Every role, a user's agent named director and Claude Code's own
      // agent try to change the workspace with Claude Code's own tools.
      claude('workspace', {
        project: WORKSPACE,
        projectFiles: {
          'seed.txt': SEED,
          '.claude/agents/director.md': [
            '---',
            'name: director',
            'description: "The user\'s own director, not the plugin\'s."',
            'tools: Bash, Read, Write',
            '---',
            "You are the user's director.",
          ].join('\n'),
        },
        moreAllowedTools: ['Write', 'Bash', 'Read'],
        message: [
          ...ROLE_NAMES.map((role) =>
            delegate(role, workspaceScript(`heretek:${role}`)),
          ),
          ...OTHER_AGENTS.map((agent) =>
            delegationLine({
              tool: 'Agent',
              role: agent,
              prompt: workspaceScript(agent),
            }),
          ),
        ].join('\n'),
      }),
      // A main thread started as a role.
      claude('main-agent', {
        agent: 'heretek:staff-backend',
        message: call(CALL_TOOL, {
          name: 'ghidra_list_functions',
          arguments: {},
        }),
      }),
    ]);
  }, 600_000);

  afterAll(async () => {
    await ghidra?.close();
    const dump = join(temporaryFolder('e2e-record'), 'outcomes.json');
    writeFileSync(dump, JSON.stringify(Object.fromEntries(outcomes), null, 1));
    console.error(`Claude Code runs recorded in ${dump}`);
  });

  const outcome = (name: string): RecordedRun => {
    const found = outcomes.get(name);
    if (found === undefined) throw new Error(`no Claude Code run "${name}"`);
    return found;
  };

  it('passes claude plugin validate, which lists the six agents, the broker and the three hooks', async () => {
    const { code, output } = await claudeCommand([
      'plugin',
      'validate',
      PACKAGE_ROOT,
    ]);
    expect(code).toBe(0);
    expect(output).toContain('Validation passed');
    for (const role of ROLE_NAMES)
      expect(output).toContain(`agents: heretek:${role}`);
    expect(output).toMatch(/mcpServers: broker stdio node/);
    expect(output).toMatch(/hooks: SessionStart command/);
    expect(output).toMatch(/hooks: SubagentStart command/);
    expect(output).toContain('hooks: PreToolUse * command');
  });

  it('ends every run on its own with exit code 0, the plugin loaded and its server connected', () => {
    for (const [name, { run }] of outcomes) {
      expect({ name, timedOut: run.timedOut, code: run.code }).toEqual({
        name,
        timedOut: false,
        code: 0,
      });
      const init = run.events.find(
        (e) => e.type === 'system' && e.subtype === 'init',
      ) as {
        agents?: string[];
        mcp_servers?: Array<{ name: string; status: string }>;
      };
      expect(init.mcp_servers).toContainEqual({
        name: 'plugin:heretek:broker',
        status: 'connected',
        source: 'plugin',
      });
      for (const role of ROLE_NAMES)
        expect(init.agents).toContain(`heretek:${role}`);
    }
    expect(outcomes.size).toBe(5);
  });

  it('installs from the packed package through the marketplace in one command, and the installed plugin runs without --plugin-dir', () => {
    expect(installs.join('\n')).toContain(
      'Successfully installed plugin: heretek@heretek',
    );
    const { requests } = outcome('installed');
    const frontend = requestsOfRole(requests, 'staff-frontend');
    expect(frontend.length).toBeGreaterThan(0);
    expect(frontend.flatMap(toolResults).join('\n')).toContain(
      'ghidra_rename_function',
    );
  });

  describe('the role gate', () => {
    it("refuses director's mutating call in the broker, and the backend never sees it", () => {
      const director = requestsOfRole(outcome('roles').requests, 'director');
      const results = director.flatMap(toolResults);
      expect(results.some((r) => r.includes('ROLE_FORBIDDEN'))).toBe(true);
    });

    it('sends the same call from staff-backend through to the backend, once, with staff-backend as its x-heretek-role', () => {
      const staff = requestsOfRole(outcome('roles').requests, 'staff-backend');
      expect(staff.flatMap(toolResults).join('\n')).not.toMatch(
        /ROLE_FORBIDDEN|ROLE_UNVERIFIED/,
      );
      const renames = ghidra.backends.calls.filter(
        (c) => c.tool === 'rename_function',
      );
      expect(renames).toHaveLength(1);
      expect(renames[0]!.arguments).toEqual(RENAME.arguments);
      expect(renames[0]!.role).toBe('staff-backend');
    });

    it('does not let a role the model wrote into the call pass: beside the arguments it is refused, inside them the caller stays director', () => {
      const director = requestsOfRole(outcome('roles').requests, 'director');
      const results = toolResults(director.at(-1)!);
      expect(results).toHaveLength(3);
      expect(results[1]).toMatch(
        /^INVALID_ARGUMENTS: [^]*unknown property "role"/,
      );
      expect(results[2]).toMatch(/^ROLE_FORBIDDEN: Role "director"/);
    });

    it('with hooks off, refuses every mcp_call_tool (ROLE_UNVERIFIED naming the fix), even with a role in the arguments, and still answers a search', () => {
      const { requests } = outcome('hooks-off');
      // The subagent's requests: the ones without the main thread's Agent tool.
      const staff = requests.filter(
        (r) =>
          !(r.body.tools as Array<{ name: string }>).some(
            (t) => t.name === 'Agent',
          ),
      );
      const results = toolResults(staff.at(-1)!);
      expect(results).toHaveLength(3);
      expect(results[0]).toMatch(/^ROLE_UNVERIFIED: [^]*disableAllHooks/);
      expect(results[1]).toMatch(/^ROLE_UNVERIFIED: /);
      expect(results[2]).toContain('ghidra_rename_function [mutating]');
      expect(
        ghidra.backends.calls.filter((c) => c.tool === 'rename_function'),
      ).toHaveLength(1);
      // Hooks off: no role layers reached the subagent either.
      expect(requests.some((r) => roleOf(r) !== undefined)).toBe(false);
    });

    it('gates a main thread started with --agent heretek:<role> as that role, sent to the backend as its x-heretek-role, with its layers from SessionStart', () => {
      const { requests } = outcome('main-agent');
      const results = requests.flatMap(toolResults).join('\n');
      expect(results).toContain('list_functions ok');
      expect(results).not.toMatch(/ROLE_UNVERIFIED|ROLE_FORBIDDEN/);
      expect(
        ghidra.backends.calls
          .filter((c) => c.tool === 'list_functions')
          .map((c) => c.role),
      ).toEqual(['staff-backend']);
      expect(requests.some((r) => roleOf(r) === 'staff-backend')).toBe(true);
    });
  });

  describe("read-only roles and Claude Code's own tools", () => {
    /** The tool results one agent of the workspace run received, in order. */
    const resultsOf = (agent: string) => {
      // The agent's own requests: its first message is its script (the
      // main thread's is every delegation).
      const last = outcome('workspace')
        .requests.filter((request) => {
          const first = textOf(messagesOf(request)[0]?.content);
          return (
            first.includes(attempted(agent, 'write')) &&
            !first.includes('@tool Agent')
          );
        })
        .at(-1);
      expect(last, `the requests of ${agent}`).toBeDefined();
      return toolResults(last!);
    };

    it('leaves no file from director and qa-adversary, and answers each attempt with a refusal naming the role', () => {
      for (const role of ROLE_NAMES.filter(isReadOnlyRole)) {
        const agent = `heretek:${role}`;
        expect(existsSync(attempted(agent, 'write'))).toBe(false);
        expect(existsSync(attempted(agent, 'shell'))).toBe(false);
        const [write, shell] = resultsOf(agent);
        expect(write).toContain(
          `ROLE_FORBIDDEN: Role "${role}" is read-only: Write changes files.`,
        );
        expect(write).toContain(
          'hand it to a writer role (staff-backend, staff-frontend, staff-mobile or security-researcher)',
        );
        expect(shell).toContain(
          `ROLE_FORBIDDEN: Role "${role}" is read-only: Bash runs only read-only commands for it, and the command holds an output redirection`,
        );
      }
    });

    it('lets director and qa-adversary read a file and run a read-only command', () => {
      for (const role of ROLE_NAMES.filter(isReadOnlyRole)) {
        const [, , read, shell] = resultsOf(`heretek:${role}`);
        expect(read).toContain(SEED);
        expect(shell).toContain(String(SEED.length));
        expect(shell).not.toContain('ROLE_FORBIDDEN');
      }
    });

    it("lets the four writer roles, the user's own director and Claude Code's general-purpose agent write with Write and with Bash", () => {
      const writers = [
        ...ROLE_NAMES.filter((role) => !isReadOnlyRole(role)).map(
          (role) => `heretek:${role}`,
        ),
        ...OTHER_AGENTS,
      ];
      expect(writers).toHaveLength(6);
      for (const agent of writers) {
        expect(readFileSync(attempted(agent, 'write'), 'utf8')).toBe(agent);
        expect(readFileSync(attempted(agent, 'shell'), 'utf8')).toBe(
          `${agent}\n`,
        );
        expect(resultsOf(agent).join('\n')).not.toContain('ROLE_FORBIDDEN');
      }
    });
  });

  describe('prompt layout', () => {
    const firstRequests = () =>
      ROLE_NAMES.map((role) => {
        const request = requestsOfRole(outcome('roles').requests, role)[0];
        expect(request, `a request of ${role}`).toBeDefined();
        return request!;
      });

    it('gives each role its own layers 3+4 through the SubagentStart hook, after the system prompt', () => {
      for (const [index, request] of firstRequests().entries()) {
        const role = ROLE_NAMES[index]!;
        const own = assemblePrefixCachedPrompt({
          role,
          workspaceRoot: REPOSITORY_ROOT,
          activeProfile: 'core',
        });
        const layers = own.layers[2].text + own.layers[3].text;
        expect(
          messagesOf(request).some((m) =>
            textOf(m.content).includes(JSON.stringify(layers).slice(1, -1)),
          ),
        ).toBe(true);
        expect(JSON.stringify(systemOf(request))).not.toContain(
          `# Role: ${role}`,
        );
      }
    });

    it('sends a byte-identical tools array and system blocks for the six roles, with the frozen prefix as the agent body and the broker tools loaded', () => {
      const requests = firstRequests();
      const tools = new Set(requests.map((r) => JSON.stringify(r.body.tools)));
      const system = new Set(
        requests.map((r) => JSON.stringify(r.body.system)),
      );
      expect(tools.size).toBe(1);
      expect(system.size).toBe(1);
      const blocks = systemOf(requests[0]!);
      expect(blocks.some((b) => b.text.startsWith(FROZEN.trimEnd()))).toBe(
        true,
      );
      const names = (
        requests[0]!.body.tools as Array<{
          name: string;
          defer_loading?: boolean;
        }>
      )
        .filter((t) => t.defer_loading !== true)
        .map((t) => t.name);
      for (const name of [...CLAUDE_CODE_TOOLS, ...BROKER_TOOLS])
        expect(names).toContain(name);
    });
  });
});

// OpenCode 2's setup(ctx), driven by a host written to OpenCode 2's
// documented plugin context (the parts the plugin uses; see the commits named
// in setup.ts): it records what setup registers and calls it as OpenCode
// does. The broker runs for real behind a loopback gateway with an MCP
// backend from the SDK.
import { ROLE_NAMES } from '@heretek/prefix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RENAME,
  startGhidraBackend,
  type GhidraBackend,
} from '#broker-fixtures/ghidra-backend.js';
import { CACHE_KEY, FROZEN } from './__fixtures__/expected.js';
import plugin from './index.js';
import type {
  AgentInfoV2,
  SessionContextV2,
  SystemPartV2,
  ToolInfoV2,
} from './setup.js';

import { REPOSITORY_ROOT } from './__fixtures__/run-opencode.js';

/** A host with OpenCode 2's context: agents, tools and session hooks, recorded. */
function openCode2Host(options: {
  directory: string;
  pluginOptions?: unknown;
  userAgents?: AgentInfoV2[];
}) {
  const agents = new Map<string, AgentInfoV2>(
    (options.userAgents ?? []).map((agent) => [agent.id, agent]),
  );
  const tools = new Map<string, ToolInfoV2>();
  const contextHooks: Array<(input: SessionContextV2) => Promise<void> | void> =
    [];
  const registration = { dispose: async () => {} };
  let added = { agents: 0, tools: 0 };
  const context = {
    options: options.pluginOptions ?? {},
    location: { directory: options.directory },
    agent: {
      transform: async (
        callback: (editor: {
          get(id: string): AgentInfoV2 | undefined;
          update(id: string, edit: (agent: AgentInfoV2) => void): void;
        }) => void,
      ) => {
        callback({
          get: (id) => agents.get(id),
          update: (id, edit) => {
            const agent = agents.get(id) ?? {
              id,
              mode: 'all' as const,
              hidden: false,
              request: { settings: {}, headers: {}, body: {} },
              permissions: [],
            };
            edit(agent);
            added = { ...added, agents: added.agents + 1 };
            agents.set(id, agent);
          },
        });
        return registration;
      },
    },
    tool: {
      transform: async (
        callback: (editor: { add(tool: ToolInfoV2): void }) => void,
      ) => {
        callback({
          add: (tool) => {
            added = { ...added, tools: added.tools + 1 };
            tools.set(tool.name, tool);
          },
        });
        return registration;
      },
    },
    session: {
      hook: async (
        name: string,
        callback: (input: SessionContextV2) => Promise<void> | void,
      ) => {
        if (name === 'context') contextHooks.push(callback);
        return registration;
      },
    },
  };
  /** The request OpenCode would send for an agent: its system prompt, then OpenCode's environment. */
  const request = async (agent: string): Promise<SessionContextV2> => {
    const info = agents.get(agent) ?? { system: 'You are OpenCode.' };
    const input: SessionContextV2 = {
      sessionID: `ses_${agent}`,
      agent,
      model: { providerID: 'openai', id: 'gpt-5' },
      system: [
        { type: 'text', text: `${info.system}\n\nWorking directory: /work` },
      ],
      messages: [],
      options: {},
      tools: Object.fromEntries(
        [...tools.values()]
          .filter((tool) => tool.options?.codemode === false)
          .map((tool) => [
            tool.name,
            { description: tool.description, input: tool.input },
          ]),
      ),
    };
    for (const hook of contextHooks) await hook(input);
    return input;
  };
  /** Calls a registered tool as OpenCode does, with the calling agent in the context. */
  const call = (agent: string, name: string, input: unknown) => {
    const tool = tools.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return tool.execute(input, {
      sessionID: `ses_${agent}`,
      agent,
      signal: new AbortController().signal,
      progress: async () => {},
    });
  };
  return {
    context,
    agents,
    tools,
    contextHooks,
    request,
    call,
    added: () => added,
  };
}

let ghidra: GhidraBackend;
let host: ReturnType<typeof openCode2Host>;
let cleanup: (() => Promise<void>) | void;

beforeAll(async () => {
  ghidra = await startGhidraBackend();
  host = openCode2Host({
    directory: REPOSITORY_ROOT,
    pluginOptions: { env: ghidra.env },
  });
  cleanup = await plugin.setup(host.context);
}, 60_000);

afterAll(async () => {
  if (typeof cleanup === 'function') await cleanup();
  await ghidra?.close();
});

describe('setup() in OpenCode 2 (documented context)', () => {
  it('is the default export beside id and server', () => {
    expect(plugin.id).toBe('@heretek/opencode');
    expect(typeof plugin.server).toBe('function');
    expect(typeof plugin.setup).toBe('function');
  });

  it('registers the six role agents once, the three meta-tools once, and one context hook', () => {
    expect(host.added()).toEqual({ agents: 6, tools: 3 });
    expect([...host.agents.keys()].sort()).toEqual([...ROLE_NAMES].sort());
    expect(host.agents.get('director')?.mode).toBe('primary');
    expect(host.agents.get('staff-backend')?.mode).toBe('all');
    expect([...host.tools.keys()].sort()).toEqual([
      'mcp_call_tool',
      'mcp_inspect_schema',
      'mcp_search_tools',
    ]);
    for (const tool of host.tools.values())
      expect(tool.options).toEqual({ codemode: false });
    expect(host.contextHooks).toHaveLength(1);
  });

  it("sends the frozen prefix as system part 0 with a cache breakpoint and the prefix's cache key, the same tools for all six roles", async () => {
    const tools = new Set<string>();
    for (const role of ROLE_NAMES) {
      const request = await host.request(role);
      const [part0, part1] = request.system as [SystemPartV2, SystemPartV2];
      expect(part0).toEqual({
        type: 'text',
        text: FROZEN,
        cache: { type: 'ephemeral' },
      });
      expect(part1.text.startsWith(`# Role: ${role}\n`)).toBe(true);
      expect(part1.text.endsWith('Working directory: /work')).toBe(true);
      expect(request.options.promptCacheKey).toBe(CACHE_KEY);
      tools.add(JSON.stringify(request.tools));
    }
    expect(tools.size).toBe(1);
  });

  it('leaves the request of an agent that is not a role unchanged', async () => {
    const request = await host.request('build');
    expect(request.system).toEqual([
      {
        type: 'text',
        text: 'You are OpenCode.\n\nWorking directory: /work',
      },
    ]);
    expect(request.options).toEqual({});
  });

  it("refuses director's mutating call without reaching the backend, and sends the same call from staff-backend", async () => {
    const refused = await host.call('director', 'mcp_call_tool', RENAME);
    expect(refused.content).toMatch(
      /^ROLE_FORBIDDEN: Role "director" is read-only/,
    );
    expect(refused.metadata).toMatchObject({
      role: 'director',
      isError: true,
      title: 'ROLE_FORBIDDEN',
    });
    expect(ghidra.backends.calls).toEqual([]);
    const sent = await host.call('staff-backend', 'mcp_call_tool', RENAME);
    expect(sent.content).toBe(
      'rename_function ok {"old_name":"FUN_1000","new_name":"main"}',
    );
    expect(
      ghidra.backends.calls.map((c) => [c.path, c.tool, c.arguments, c.role]),
    ).toEqual([
      ['/mcp/ghidra', 'rename_function', RENAME.arguments, 'staff-backend'],
    ]);
  });

  it('takes the role from the calling agent, not from anything in the arguments', async () => {
    const forged = await host.call('director', 'mcp_call_tool', {
      ...RENAME,
      role: 'staff-backend',
    });
    expect(forged.metadata).toMatchObject({ isError: true });
    expect(ghidra.backends.calls).toHaveLength(1);
  });
});

describe('setup() beside a user agent of a role name', () => {
  it("keeps the user's agent and does not shape its requests", async () => {
    const own: AgentInfoV2 = {
      id: 'qa-adversary',
      mode: 'primary',
      hidden: false,
      system: 'My own QA prompt.',
      request: { settings: {}, headers: {}, body: {} },
      permissions: [],
    };
    const userHost = openCode2Host({
      directory: REPOSITORY_ROOT,
      userAgents: [own],
    });
    const done = await plugin.setup(userHost.context);
    expect(userHost.added().agents).toBe(5);
    expect(userHost.agents.get('qa-adversary')).toBe(own);
    const request = await userHost.request('qa-adversary');
    expect(request.system).toHaveLength(1);
    expect(request.options).toEqual({});
    if (typeof done === 'function') await done();
  });
});

describe("setup() in OpenCode 1's preview context", () => {
  it('registers nothing: server() does the work there', async () => {
    const calls: string[] = [];
    const record = (name: string) => async () => {
      calls.push(name);
      return { dispose: async () => {} };
    };
    // The preview context of OpenCode 1.18.33: no tool, no session domain.
    const preview = {
      options: {},
      agent: { transform: record('agent'), reload: async () => {} },
      aisdk: { sdk: record('sdk'), language: record('language') },
      catalog: { transform: record('catalog'), reload: async () => {} },
      command: { transform: record('command'), reload: async () => {} },
      integration: { transform: record('integration'), reload: async () => {} },
      plugin: { add: async () => {}, remove: async () => {} },
      reference: { transform: record('reference'), reload: async () => {} },
      skill: { transform: record('skill'), reload: async () => {} },
    };
    expect(await plugin.setup(preview)).toBeUndefined();
    expect(calls).toEqual([]);
  });
});

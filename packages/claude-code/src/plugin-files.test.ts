import { ROLE_NAMES, assemblePrefixCachedPrompt } from '@heretek/prefix';
import { describe, expect, it } from 'vitest';
import { roleOfAgentType } from './layout.js';
import { BROKER_TOOLS, pluginFiles } from './plugin-files.js';
import { REPOSITORY_ROOT } from './__fixtures__/run-claude.js';

const files = pluginFiles({ workspaceRoot: REPOSITORY_ROOT, version: '1.2.3' });
const prompt = (role: string, activeProfile = 'core') =>
  assemblePrefixCachedPrompt({
    role,
    workspaceRoot: REPOSITORY_ROOT,
    activeProfile,
  });

/** An agent file's front matter lines and its body. */
const split = (text: string) => {
  const end = text.indexOf('\n---\n', 4);
  return {
    front: text.slice(4, end).split('\n'),
    body: text.slice(end + '\n---\n'.length),
  };
};

describe('pluginFiles', () => {
  it('writes six agents whose bodies are the frozen prefix and whose tools lines are one line, with the broker tools', () => {
    const agents = ROLE_NAMES.map((role) => split(files[`agents/${role}.md`]!));
    const frozen = prompt('director').layers;
    for (const [index, agent] of agents.entries()) {
      expect(agent.body).toBe(frozen[0].text + frozen[1].text);
      expect(agent.front).toContain(`name: ${ROLE_NAMES[index]}`);
    }
    const tools = new Set(
      agents.map((a) => a.front.find((l) => l.startsWith('tools: '))),
    );
    expect(tools.size).toBe(1);
    for (const tool of BROKER_TOOLS) expect([...tools][0]).toContain(tool);
  });

  it("gives the hook each role's layers 3+4 for every profile", () => {
    const layers = JSON.parse(files['hooks/role-layers.json']!) as Record<
      string,
      Record<string, string>
    >;
    const android = prompt('staff-mobile', 'android');
    expect(layers.android!['staff-mobile']).toBe(
      android.layers[2].text + android.layers[3].text,
    );
    expect(Object.keys(layers.core!)).toEqual([...ROLE_NAMES]);
  });

  it('starts the bundled broker in hook-role mode with its tools always loaded, and runs the PreToolUse hook on every tool call', () => {
    const mcp = JSON.parse(files['.mcp.json']!) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    expect(mcp.mcpServers.broker).toMatchObject({
      command: 'node',
      args: ['${CLAUDE_PLUGIN_ROOT}/broker/cli.js'],
      env: { HERETEK_HOOK_ROLES_DIR: '${CLAUDE_PLUGIN_DATA}/caller-roles' },
      alwaysLoad: true,
    });
    const hooks = JSON.parse(files['hooks/hooks.json']!) as {
      hooks: Record<string, Array<{ matcher?: string; hooks: unknown[] }>>;
    };
    expect(Object.keys(hooks.hooks)).toEqual([
      'SessionStart',
      'SubagentStart',
      'PreToolUse',
    ]);
    expect(hooks.hooks.PreToolUse).toHaveLength(1);
    expect(hooks.hooks.PreToolUse![0]).toMatchObject({
      matcher: '*',
      hooks: [
        {
          args: [
            '${CLAUDE_PLUGIN_ROOT}/hooks/heretek-hook.mjs',
            'pre-tool-use',
            '${CLAUDE_PLUGIN_DATA}/caller-roles',
          ],
        },
      ],
    });
    expect(JSON.parse(files['.claude-plugin/plugin.json']!)).toMatchObject({
      name: 'heretek',
      version: '1.2.3',
    });
  });
});

describe('roleOfAgentType', () => {
  it('knows the plugin agents only', () => {
    expect(roleOfAgentType('heretek:qa-adversary')).toBe('qa-adversary');
    for (const other of ['qa-adversary', 'heretek:root', 'other:director', 7])
      expect(roleOfAgentType(other)).toBeUndefined();
  });
});

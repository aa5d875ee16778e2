// Adding a meta-tool touches one file, the broker's table
// (apps/broker/src/meta-tools.ts): the broker's stdio server lists every
// tool of the table and names each in its instructions, the OpenCode plugin
// registers each, and the Claude Code plugin gives each to every agent, all
// read from the table. Each is checked here as built, against the table.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { listedMetaTools } from '@heretek/broker';
import opencode from '@heretek/opencode';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const table = listedMetaTools();
const names = Object.keys(table);

/** The built broker's `initialize` and `tools/list` answers, offline. */
async function brokerAnswers(): Promise<{
  instructions: string;
  tools: Array<{ name: string } & Record<string, unknown>>;
}> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'apps/broker/dist/cli.js')],
    {
      env: {
        ...process.env,
        HERETEK_BROKER_OFFLINE: '1',
        HERETEK_USAGE_FILE: 'off',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const answers = new Map<number, Record<string, unknown>>();
  const lines = createInterface({ input: child.stdout });
  const answered = (id: number) =>
    new Promise<Record<string, unknown>>((resolve) => {
      lines.on('line', (line) => {
        const message = JSON.parse(line) as {
          id?: number;
          result: Record<string, unknown>;
        };
        if (message.id !== undefined) answers.set(message.id, message.result);
        if (answers.has(id)) resolve(answers.get(id)!);
      });
    });
  const send = (message: object) =>
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  try {
    const initialized = answered(1);
    send({
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'meta-tool-table', version: '1' },
      },
    });
    const { instructions } = await initialized;
    send({ method: 'notifications/initialized' });
    const listed = answered(2);
    send({ id: 2, method: 'tools/list' });
    const { tools } = await listed;
    return {
      instructions: instructions as string,
      tools: tools as Array<{ name: string }>,
    };
  } finally {
    child.kill();
  }
}

describe("the broker's meta-tool table", () => {
  it('is what the broker lists, one instructions line a tool, in its order', async () => {
    const { instructions, tools } = await brokerAnswers();
    expect(tools).toEqual(
      names.map((name) => ({ name, ...table[name as keyof typeof table] })),
    );
    const described = instructions
      .split('\n')
      .flatMap((line) => /^- (mcp_\w+): /.exec(line)?.[1] ?? []);
    expect(described).toEqual(names);
  });

  it('is what the OpenCode plugin registers', async () => {
    const hooks = await opencode.server(
      {
        directory: ROOT,
        client: { app: { log: async () => ({}) } },
      } as never,
      {},
    );
    const tools = hooks.tool ?? {};
    expect(Object.keys(tools)).toEqual(names);
    for (const name of names)
      expect(tools[name]?.description).toBe(
        table[name as keyof typeof table].description,
      );
    await (hooks as { dispose?: () => Promise<void> }).dispose?.();
  });

  it("is what the Claude Code plugin gives every agent, with the call tool's role hook", () => {
    const plugin = dirname(
      createRequire(import.meta.url).resolve(
        '@heretek/claude-code/package.json',
      ),
    );
    const agent = readFileSync(join(plugin, 'agents/director.md'), 'utf8');
    const line = agent.split('\n').find((text) => text.startsWith('tools: '));
    const brokerTools = line
      ?.slice('tools: '.length)
      .split(', ')
      .filter((tool) => tool.startsWith('mcp__plugin_heretek_broker__'));
    expect(brokerTools).toEqual(
      names.map((name) => `mcp__plugin_heretek_broker__${name}`),
    );
    const hooks = JSON.parse(
      readFileSync(join(plugin, 'hooks/hooks.json'), 'utf8'),
    ) as { hooks: { PreToolUse: Array<{ matcher: string }> } };
    // One PreToolUse hook sees every tool (read-only roles' own tools are
    // refused there); the hook program records the role for the call tool,
    // which it knows by the name the table gives.
    expect(hooks.hooks.PreToolUse.map((hook) => hook.matcher)).toEqual(['*']);
    const hookProgram = readFileSync(
      join(plugin, 'hooks/heretek-hook.mjs'),
      'utf8',
    );
    expect(hookProgram).toContain('"mcp__plugin_heretek_broker__"');
    expect(hookProgram).toContain('claudeCodeToolName("mcp_call_tool")');
    expect(names).toContain('mcp_call_tool');
  });
});

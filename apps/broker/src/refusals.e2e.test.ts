import { MAX_SEARCH_LIMIT } from '@heretek/catalog';
import { describe, expect, it } from 'vitest';
import {
  resultText,
  type TextResult,
  useBroker,
} from './__fixtures__/spawn-broker.js';

const MIB = 1024 * 1024;

describe('refusals an agent can act on (built broker over stdio, offline)', () => {
  const broker = useBroker({
    HERETEK_BROKER_OFFLINE: '1',
    HERETEK_BROKER_ROLE: 'staff-mobile',
  });

  const call = async (name: string, args: unknown) => {
    const result = await broker.client.callTool({
      name,
      arguments: args as Record<string, unknown>,
    });
    return {
      isError: (result as TextResult).isError,
      text: resultText(result),
    };
  };

  it.each([
    [
      'mcp_search_tools',
      { query: 42 },
      /query must be a string, got number 42/,
    ],
    [
      'mcp_search_tools',
      { query: 'x', limit: 0 },
      /limit must be an integer from 1 to 200/,
    ],
    [
      'mcp_search_tools',
      { query: 'x', limit: 2.5 },
      /limit must be an integer/,
    ],
    [
      'mcp_search_tools',
      { query: 'x', profile: 'andr0id' },
      /profile must be one of core, /,
    ],
    ['mcp_search_tools', {}, /give a query .* or a target to list its tools/],
    [
      'mcp_search_tools',
      { query: 'x', __proto__x: 1, deep: { a: { b: {} } } },
      /unknown properties "__proto__x", "deep"; allowed: query, profile, target, limit, offset/,
    ],
    ['mcp_inspect_schema', {}, /missing required property "name"/],
    [
      'mcp_inspect_schema',
      { name: ['adb_tap'] },
      /name must be a string, got an array/,
    ],
    [
      'mcp_call_tool',
      { name: 'adb_tap', arguments: [1, 2] },
      /arguments must be an object of the tool's arguments, got an array/,
    ],
    [
      'mcp_call_tool',
      { name: 'adb_tap', arguments: 'x=1' },
      /arguments must be an object/,
    ],
    ['mcp_call_tool', { name: null }, /name must be a string, got null/],
  ])(
    '%s with %j is INVALID_ARGUMENTS naming the problem',
    async (tool, args, problem) => {
      const answer = await call(tool, args);
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(
        new RegExp(
          `^INVALID_ARGUMENTS: Arguments for ${tool} do not match its schema:\\n- `,
        ),
      );
      expect(answer.text).toMatch(problem);
      expect(answer.text).not.toMatch(/Input validation error/);
    },
  );

  it('never lets a JSON "__proto__" key stand in for a required argument', async () => {
    const raw = JSON.parse(
      '{"name":"core_read_file","arguments":{"__proto__":{"path":"README.md"}}}',
    ) as Record<string, unknown>;
    const answer = await call('mcp_call_tool', raw);
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(
      /^INVALID_ARGUMENTS: Arguments for "core_read_file" do not match its schema; nothing was sent:\n- arguments: missing required property "path"/,
    );
  });

  it('never echoes a 1 MiB query whole when nothing matches', async () => {
    const query = `zzq${'x'.repeat(MIB)}`;
    const answer = await call('mcp_search_tools', { query });
    expect(answer.text.length).toBeLessThan(4_000);
    expect(answer.text).toMatch(
      /^No tools match "zzqx+"… \(1048579 characters\)/,
    );
  });

  it('never echoes a 1 MiB tool name whole', async () => {
    const name = `adb_${'y'.repeat(MIB)}`;
    for (const tool of ['mcp_inspect_schema', 'mcp_call_tool']) {
      const answer = await call(tool, { name });
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(
        /^UNKNOWN_TOOL: No tool named "adb_y+"… \(1048580 characters\)/,
      );
      expect(answer.text.length).toBeLessThan(4_000);
    }
  });

  it('caps the SDK’s own JSON-RPC errors too: an unknown 1 MiB tool name is not echoed whole', async () => {
    const name = `x${'z'.repeat(MIB)}`;
    const error = await broker.client.callTool({ name, arguments: {} }).then(
      (result) => new Error(`answered: ${resultText(result).slice(0, 200)}`),
      (failure: unknown) => failure as Error,
    );
    expect(error.message.length).toBeLessThan(2_000);
    expect(error.message).toMatch(/… \(\d+ characters\)/);
    const lastLine = broker.transport.stdoutLines.at(-1) ?? '';
    expect(lastLine.length).toBeLessThan(2_000);
  });

  it('lists a target’s tools, compact and paged, for a target and no query', async () => {
    const first = await call('mcp_search_tools', { target: 'adb', limit: 2 });
    expect(first.isError).not.toBe(true);
    const lines = first.text.split('\n');
    expect(lines[0]).toMatch(/^Target adb: (\d+) tools, 1-2:$/);
    expect(lines[1]).toMatch(/^adb_\S+ \[(read-only|mutating)\]/);
    expect(lines[3]).toBe('More: offset 2.');
    const total = Number(/: (\d+) tools/.exec(lines[0]!)![1]);
    const second = await call('mcp_search_tools', {
      target: 'adb',
      limit: 2,
      offset: 2,
    });
    expect(second.text.split('\n')[0]).toMatch(
      new RegExp(`^Target adb: ${total} tools, 3-`),
    );
    expect(second.text).not.toContain(lines[1]!.split(' ')[0]!);
    const all = await call('mcp_search_tools', {
      target: 'adb',
      query: '  ',
      limit: 200,
    });
    expect(all.text.split('\n')).toHaveLength(total + 1);
    expect(all.text).not.toContain('More:');
  });

  it('names the known targets with their tool counts when a search matches nothing', async () => {
    const answer = await call('mcp_search_tools', { query: 'zzyzxq qqqfoo' });
    expect(answer.text).toMatch(/^No tools match "zzyzxq qqqfoo"\. /);
    expect(answer.text).toMatch(
      /\nTargets \(tools\): core \(\d+\), ghidra \(\d+\), .*adb \(\d+\)/,
    );
  });

  it('answers an unknown target with its own code, for a search and for a browse', async () => {
    for (const args of [
      { target: 'nosuch' },
      { target: 'nosuch', query: 'read file' },
    ]) {
      const answer = await call('mcp_search_tools', args);
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(
        /^UNKNOWN_TARGET: No backend target "nosuch"\. Known targets \(tools\): core \(\d+\)/,
      );
    }
  });

  it('lists a limit maximum that the search accepts, and no tools.listChanged', async () => {
    const { tools } = await broker.client.listTools();
    const search = tools.find((t) => t.name === 'mcp_search_tools')!;
    const limit = (
      search.inputSchema.properties as Record<string, { maximum?: number }>
    )['limit'];
    expect(limit?.maximum).toBe(MAX_SEARCH_LIMIT);
    const ok = await call('mcp_search_tools', {
      query: 'file',
      limit: MAX_SEARCH_LIMIT,
    });
    expect(ok.isError).not.toBe(true);
    const over = await call('mcp_search_tools', {
      query: 'file',
      limit: MAX_SEARCH_LIMIT + 1,
    });
    expect(over.text).toMatch(/^INVALID_ARGUMENTS: /);
    expect(broker.client.getServerCapabilities()?.tools?.listChanged).not.toBe(
      true,
    );
  });
});

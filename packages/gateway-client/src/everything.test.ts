import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayClient } from './gateway-client.js';
import { useProxiedServers } from './__fixtures__/third-party.js';

/**
 * `@modelcontextprotocol/server-everything` (stdio) behind supergateway and
 * a path-rewriting proxy, as a user would run it: progress of
 * `trigger-long-running-operation`, the task-required
 * `simulate-research-query` (with and without its elicitation), and
 * sampling, each through this client.
 */
describe(
  'server-everything behind supergateway and a reverse proxy',
  { timeout: 120_000 },
  () => {
    const proxy = useProxiedServers({
      everything: { bin: 'mcp-server-everything', args: ['stdio'] },
    });
    const clients: GatewayClient[] = [];
    const elicited: string[] = [];
    const sampled: string[] = [];

    const client = (
      extra: Partial<ConstructorParameters<typeof GatewayClient>[0]> = {},
    ) => {
      const created = new GatewayClient({
        url: proxy().url,
        mode: 'per-target',
        role: 'director',
        timeoutMs: 20_000,
        ...extra,
      });
      clients.push(created);
      return created;
    };

    afterAll(async () => {
      for (const created of clients) await created.close();
    });

    it('passes on as many progress notifications as a direct client gets', async () => {
      const direct = new Client({ name: 'direct', version: '1.0.0' });
      await direct.connect(
        new StreamableHTTPClientTransport(
          new URL(`${proxy().url}/mcp/everything`),
        ),
      );
      let directCount = 0;
      try {
        await direct.callTool(
          {
            name: 'trigger-long-running-operation',
            arguments: { duration: 1.5, steps: 3 },
          },
          { onprogress: () => (directCount += 1) },
        );
      } finally {
        await direct.close();
      }
      const seen: Array<{ progress: number; total?: number }> = [];
      const result = await client().callTool({
        target: 'everything',
        tool: 'trigger-long-running-operation',
        arguments: { duration: 1.5, steps: 3 },
        onProgress: (progress) => seen.push(progress),
      });
      expect(result.isError).toBeFalsy();
      expect(directCount).toBe(3);
      expect(seen).toHaveLength(directCount);
      expect(seen.map((progress) => progress.progress)).toEqual([1, 2, 3]);
      expect(seen[2]?.total).toBe(3);
    });

    it('answers a task-required tool through a task-augmented call', async () => {
      const gateway = client();
      const tools = await gateway.listTools({ target: 'everything' });
      expect(
        tools.find((tool) => tool.name === 'simulate-research-query')?.execution
          ?.taskSupport,
      ).toBe('required');
      const result = await gateway.callTool({
        target: 'everything',
        tool: 'simulate-research-query',
        arguments: { topic: 'radare2' },
        task: true,
      });
      const text = (result.content[0] as { text?: string }).text ?? '';
      expect(text).toContain('# Research Report: radare2');
    });

    /** A research query the server finds ambiguous, run as a task. */
    const AMBIGUOUS_RESEARCH = {
      target: 'everything',
      tool: 'simulate-research-query',
      arguments: { topic: 'python', ambiguous: true },
      task: true,
    } as const;

    it('round-trips the elicitation an ambiguous research task asks for', async () => {
      // An answer slower than timeoutMs is proven against the SDK fixture
      // (interactive.test.ts): here the reference server's task asks, and
      // the answer goes back through tasks/result.
      const gateway = client({
        // timeoutMs also bounds the connect below, in which supergateway
        // starts the server's process: on a loaded 2-core machine that has
        // taken over 6 s.
        timeoutMs: 12_000,
        onElicitation: async ({ target, params }) => {
          elicited.push(`${target}: ${params.message}`);
          return { action: 'accept', content: { interpretation: 'snake' } };
        },
      });
      // The session is opened first (supergateway starts the server's
      // process for it): what is timed below is the task, not that start.
      await gateway.listTools({ target: 'everything' });
      const result = await gateway.callTool(AMBIGUOUS_RESEARCH);
      const text = (result.content[0] as { text?: string }).text ?? '';
      expect(text).toContain('# Research Report: python (snake)');
      expect(elicited).toHaveLength(1);
      expect(elicited[0]).toMatch(/^everything: The research query "python"/);
    });

    it('without onElicitation the task is answered without asking, not a hang', async () => {
      const result = await client().callTool(AMBIGUOUS_RESEARCH);
      const text = (result.content[0] as { text?: string }).text ?? '';
      // The server asks only a client that declared elicitation.
      expect(text).toContain('# Research Report: python\n');
      expect(text).not.toContain('Clarification');
    });

    it('round-trips sampling', async () => {
      const gateway = client({
        onSampling: async ({ target, params }) => {
          sampled.push(target);
          return {
            role: 'assistant',
            model: 'test-model',
            content: {
              type: 'text',
              text: `a reply to ${params.messages.length} message(s)`,
            },
          };
        },
      });
      const result = await gateway.callTool({
        target: 'everything',
        tool: 'trigger-sampling-request',
        arguments: { prompt: 'Name a colour.' },
      });
      expect(JSON.stringify(result.content)).toContain(
        'a reply to 1 message(s)',
      );
      expect(sampled).toEqual(['everything']);
    });
  },
);

// Test fixture: a sessionful MCP backend with the behaviours of
// server-everything that a call's lifecycle depends on, built with SDK v1
// (`@modelcontextprotocol/sdk` 1.32, whose experimental task runtime answers
// tasks/get, tasks/result and tasks/cancel; SDK v2 has no task runtime).
// Served on 127.0.0.1 at /mcp/<target> (per-target routing). Tools:
// - `steps` {count}: one notifications/progress per step (progress, total, message), then a result;
// - `ask`: elicitation/create during the call; answers with what came back, or the error;
// - `sample`: sampling/createMessage during the call, the same way;
// - `chatty`: two notifications/message (warning, error) during the call;
// - `research` {ms, topic} (taskSupport required): works `ms` in the background as a task;
// - `erase` (mutating): asks the user to confirm (elicitation/create), then answers what came back.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  registerResearchTask,
  startTaskSessions,
} from '#gateway-client-fixtures/task-server.js';
import {
  callThrough,
  resultText,
  scratchFolder,
  type SpawnedBroker,
  type spawnBroker,
} from './spawn-broker.js';

export type InteractiveBackend = {
  url: string;
  /** Task ids whose work saw a cancellation. */
  cancelledTasks: string[];
  /** Task ids created. */
  createdTasks: string[];
  /** One entry per call of the mutating `erase` tool that reached the backend. */
  eraseCalls: string[];
  /** Every `notifications/cancelled` reason seen, for plain calls. */
  close: () => Promise<void>;
};

const text = (value: string) => ({
  content: [{ type: 'text' as const, text: value }],
});

/**
 * What the client answered to a request the tool sent it (`<label> <answer>`),
 * or how that request failed (`<what> failed: <message> (code <code>)`).
 */
async function relayed(
  label: string,
  what: string,
  ask: () => Promise<unknown>,
): Promise<ReturnType<typeof text>> {
  try {
    return text(`${label} ${JSON.stringify(await ask())}`);
  } catch (error) {
    return text(
      `${what} failed: ${(error as Error).message} (code ${String((error as { code?: unknown }).code)})`,
    );
  }
}

/** Starts the backend for `target`. */
export async function startInteractiveBackend(
  target: string,
): Promise<InteractiveBackend> {
  const cancelledTasks: string[] = [];
  const createdTasks: string[] = [];
  const eraseCalls: string[] = [];

  const register = (server: McpServer) => {
    server.registerTool(
      'steps',
      {
        description: 'Work in steps, reporting progress',
        inputSchema: { count: z.number().int().min(1).max(20) },
        annotations: { readOnlyHint: true },
      },
      async ({ count }, extra) => {
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= count; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken: token,
                progress: i,
                total: count,
                message: `step ${i} of ${count}`,
              },
            });
        }
        return text(`${count} steps done`);
      },
    );
    server.registerTool(
      'ask',
      {
        description: 'Ask the user for a colour',
        annotations: { readOnlyHint: true },
      },
      (extra) =>
        relayed('answer', 'elicitation', () =>
          extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                message: 'Which colour?',
                requestedSchema: {
                  type: 'object',
                  properties: { colour: { type: 'string' } },
                  required: ['colour'],
                },
              },
            },
            ElicitResultSchema,
          ),
        ),
    );
    server.registerTool(
      'sample',
      {
        description: 'Ask the client model for a haiku',
        annotations: { readOnlyHint: true },
      },
      (extra) =>
        relayed('sampled', 'sampling', () =>
          extra.sendRequest(
            {
              method: 'sampling/createMessage',
              params: {
                messages: [
                  {
                    role: 'user',
                    content: { type: 'text', text: 'Write a haiku' },
                  },
                ],
                maxTokens: 50,
              },
            },
            CreateMessageResultSchema,
          ),
        ),
    );
    server.registerTool(
      'erase',
      { description: 'Erase the scratch area after the user confirms' },
      async (extra) => {
        eraseCalls.push(new Date().toISOString());
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              message: 'Erase the scratch area?',
              requestedSchema: {
                type: 'object',
                properties: { confirm: { type: 'boolean' } },
              },
            },
          },
          ElicitResultSchema,
        );
        return text(`erase answer ${JSON.stringify(answer)}`);
      },
    );
    server.registerTool(
      'chatty',
      {
        description: 'Log while working',
        annotations: { readOnlyHint: true },
      },
      async (extra) => {
        for (const [level, data] of [
          ['warning', 'disk almost full'],
          ['error', { detail: 'retrying once' }],
        ] as const)
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level, logger: 'worker', data },
          });
        return text('chatty done');
      },
    );
    registerResearchTask(server, {
      description: 'Research a topic as a task',
      annotations: { readOnlyHint: true },
      cancelledTasks,
      done: (topic) => `research on ${topic} done`,
      onCreated: (taskId) => void createdTasks.push(taskId),
    });
  };

  const sessions = await startTaskSessions({
    name: 'interactive-backend',
    logging: true,
    path: `/mcp/${target}`,
    register,
  });
  return {
    url: sessions.url,
    cancelledTasks,
    createdTasks,
    eraseCalls,
    close: sessions.close,
  };
}

/**
 * For one test file: the backend `live` started before its tests and closed
 * after them, and the environment of a broker that reaches it through a
 * one-row backend table as a `staff-mobile` caller. Both are set once the
 * file's `beforeAll` has run.
 */
export function useInteractiveBackend(prefix: string): {
  backend: InteractiveBackend;
  env: Record<string, string>;
} {
  const scratch = scratchFolder(prefix);
  const live = {} as {
    backend: InteractiveBackend;
    env: Record<string, string>;
  };
  beforeAll(async () => {
    live.backend = await startInteractiveBackend('live');
    live.env = {
      HERETEK_GATEWAY_URL: live.backend.url,
      HERETEK_BACKENDS_FILE: scratch.backends(['live']),
      HERETEK_BROKER_ROLE: 'staff-mobile',
    };
  });
  afterAll(async () => {
    await live.backend?.close();
    scratch.remove();
  });
  return live;
}

type ClientSide = Pick<
  NonNullable<Parameters<typeof spawnBroker>[1]>,
  'capabilities' | 'prepare'
>;

/**
 * A client that declares elicitation and sampling and answers both: accepts
 * with `{ colour: 'teal' }`, and samples "autumn moon rises". What the backend
 * asked is pushed onto `asked`.
 */
export function answeringClient(asked: unknown[]): ClientSide {
  return {
    capabilities: { elicitation: { form: {} }, sampling: {} },
    prepare: (client) => {
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { colour: 'teal' } };
      });
      client.setRequestHandler('sampling/createMessage', async () => ({
        role: 'assistant',
        content: { type: 'text', text: 'autumn moon rises' },
        model: 'test-model',
      }));
    },
  };
}

/**
 * Calls `live_ask` and `live_sample` through `broker`, whose client is an
 * {@link answeringClient}, and checks that each backend call got the
 * client's answer.
 */
export async function expectAnswersRoundTrip(
  broker: SpawnedBroker,
  asked: unknown[],
): Promise<void> {
  const ask = await callThrough(broker, 'live_ask');
  expect(resultText(ask)).toBe(
    'answer {"action":"accept","content":{"colour":"teal"}}',
  );
  expect(asked).toEqual([
    expect.objectContaining({ message: 'Which colour?' }),
  ]);
  const sample = await callThrough(broker, 'live_sample');
  expect(resultText(sample)).toMatch(/^sampled \{/);
  expect(resultText(sample)).toContain('"text":"autumn moon rises"');
  expect(resultText(sample)).toContain('"model":"test-model"');
}

/**
 * Test fixture: a sessionful MCP server with task-augmented tools
 * (2025-11-25 tasks), built with SDK v1 (`@modelcontextprotocol/sdk` 1.32),
 * whose experimental task runtime (`registerToolTask`, `InMemoryTaskStore`)
 * answers `tasks/get`, `tasks/result` and `tasks/cancel`. SDK v2 has the
 * task wire types but no task runtime. Not shipped.
 */
import { listenV1, type SessionfulServer } from './servers.js';

/** What the task server saw, for assertions. */
export type TaskServer = SessionfulServer & {
  /** Task ids whose work noticed a cancellation. */
  cancelledTasks: string[];
};

/**
 * Start the server. Tools: `research` (`taskSupport: 'required'`: works
 * `ms` milliseconds in the background, then completes with a text result),
 * `maybe-task` (`taskSupport: 'optional'`).
 */
export async function startTaskServer(): Promise<TaskServer> {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { InMemoryTaskStore } =
    await import('@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js');
  const { z } = await import('zod');
  const taskStore = new InMemoryTaskStore();
  const cancelledTasks: string[] = [];

  const createServer = () => {
    const server = new McpServer(
      { name: 'fixture-tasks', version: '1.0.0' },
      {
        capabilities: {
          tools: {},
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
        },
        taskStore,
      },
    );
    const work =
      (label: string) =>
      async (
        args: { ms?: number | undefined; topic?: string | undefined },
        extra: {
          taskStore: {
            createTask: (o: {
              ttl?: number;
              pollInterval?: number;
            }) => Promise<{
              taskId: string;
            }>;
            getTask: (id: string) => Promise<{ status: string } | null>;
            storeTaskResult: (
              id: string,
              status: 'completed' | 'failed',
              result: unknown,
            ) => Promise<void>;
          };
        },
      ) => {
        const task = await extra.taskStore.createTask({
          ttl: 60_000,
          pollInterval: 50,
        });
        const ms = Number(args.ms ?? 100);
        void (async () => {
          const end = Date.now() + ms;
          while (Date.now() < end) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            const current = await extra.taskStore.getTask(task.taskId);
            if (current?.status === 'cancelled') {
              cancelledTasks.push(task.taskId);
              return;
            }
          }
          await extra.taskStore
            .storeTaskResult(task.taskId, 'completed', {
              content: [
                {
                  type: 'text',
                  text: `${label}: ${args.topic ?? 'nothing'} done`,
                },
              ],
            })
            .catch(() => undefined);
        })();
        return { task };
      };
    const handler = (label: string) => ({
      createTask: work(label) as never,
      getTask: (async (
        _args: unknown,
        extra: {
          taskId: string;
          taskStore: { getTask: (id: string) => Promise<unknown> };
        },
      ) => extra.taskStore.getTask(extra.taskId)) as never,
      getTaskResult: (async (
        _args: unknown,
        extra: {
          taskId: string;
          taskStore: { getTaskResult: (id: string) => Promise<unknown> };
        },
      ) => extra.taskStore.getTaskResult(extra.taskId)) as never,
    });
    server.experimental.tasks.registerToolTask(
      'research',
      {
        description: 'Research a topic as a task.',
        inputSchema: {
          topic: z.string().optional(),
          ms: z.number().optional(),
        },
        execution: { taskSupport: 'required' },
      },
      handler('research'),
    );
    return server;
  };

  const listening = await listenV1((transport) =>
    createServer().connect(transport),
  );
  return {
    ...listening,
    cancelledTasks,
    close: async () => {
      await listening.close();
      taskStore.cleanup();
    },
  };
}

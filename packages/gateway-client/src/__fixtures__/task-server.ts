/**
 * Test fixture: a sessionful MCP server with task-augmented tools
 * (2025-11-25 tasks), built with SDK v1 (`@modelcontextprotocol/sdk` 1.32),
 * whose experimental task runtime (`registerToolTask`, `InMemoryTaskStore`)
 * answers `tasks/get`, `tasks/result` and `tasks/cancel`. SDK v2 has the
 * task wire types but no task runtime. Not shipped.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { listenV1, type SessionfulServer } from './servers.js';

/** What the task server saw, for assertions. */
export type TaskServer = SessionfulServer & {
  /** Task ids whose work noticed a cancellation. */
  cancelledTasks: string[];
};

type TaskExtra = {
  taskId: string;
  taskStore: {
    createTask: (o: { ttl?: number; pollInterval?: number }) => Promise<{
      taskId: string;
    }>;
    getTask: (id: string) => Promise<{ status: string } | null>;
    getTaskResult: (id: string) => Promise<unknown>;
    storeTaskResult: (
      id: string,
      status: 'completed' | 'failed',
      result: unknown,
    ) => Promise<void>;
  };
};

/**
 * The handlers of a task-required tool for SDK v1's `registerToolTask`
 * (arguments `{ ms, topic }`): the task works `ms` (100 by default) in the
 * background, noting a cancellation in `cancelledTasks`, then completes with
 * one text block, `done(topic)`. `onCreated` sees each task id once the
 * work has started; the answer naming the task waits for what it returns.
 */
function backgroundTask({
  cancelledTasks,
  done,
  onCreated,
}: {
  cancelledTasks: string[];
  done: (topic: string) => string;
  onCreated?: (taskId: string) => unknown;
}) {
  return {
    createTask: (async (
      args: { ms?: number | undefined; topic?: string | undefined },
      extra: TaskExtra,
    ) => {
      const task = await extra.taskStore.createTask({
        ttl: 60_000,
        pollInterval: 50,
      });
      const end = Date.now() + Number(args.ms ?? 100);
      void (async () => {
        while (Date.now() < end) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          // Gone once its time-to-live has passed: the work stops.
          const current = await extra.taskStore
            .getTask(task.taskId)
            .catch(() => undefined);
          if (current === undefined || current === null) return;
          if (current.status === 'cancelled') {
            cancelledTasks.push(task.taskId);
            return;
          }
        }
        await extra.taskStore
          .storeTaskResult(task.taskId, 'completed', {
            content: [{ type: 'text', text: done(args.topic ?? 'nothing') }],
          })
          .catch(() => undefined);
      })();
      await onCreated?.(task.taskId);
      return { task };
    }) as never,
    getTask: (async (_args: unknown, extra: TaskExtra) =>
      extra.taskStore.getTask(extra.taskId)) as never,
    getTaskResult: (async (_args: unknown, extra: TaskExtra) =>
      extra.taskStore.getTaskResult(extra.taskId)) as never,
  };
}

/**
 * Registers `research` on an SDK v1 server: a task-required tool with
 * arguments `{ topic, ms }` that runs as {@link backgroundTask}. Also used by
 * the broker's interactive backend.
 */
export function registerResearchTask(
  server: McpServer,
  {
    description,
    annotations,
    ...task
  }: {
    description: string;
    annotations?: { readOnlyHint?: boolean };
  } & Parameters<typeof backgroundTask>[0],
): void {
  server.experimental.tasks.registerToolTask(
    'research',
    {
      description,
      inputSchema: {
        topic: z.string().optional(),
        ms: z.number().optional(),
      },
      execution: { taskSupport: 'required' },
      ...(annotations === undefined ? {} : { annotations }),
    },
    backgroundTask(task),
  );
}

/**
 * A sessionful SDK v1 server whose tools may run as tasks: each session gets
 * a new `McpServer` (tools, tasks and, with `logging`, logging capabilities)
 * with `register`'s tools, all of them sharing one `InMemoryTaskStore`. With
 * `path`, only that path is served (any other answers 404). `close` also
 * empties the task store.
 */
export async function startTaskSessions({
  name,
  logging = false,
  path,
  register,
}: {
  name: string;
  logging?: boolean;
  path?: string;
  register: (server: McpServer) => void;
}): Promise<SessionfulServer> {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { InMemoryTaskStore } =
    await import('@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js');
  const taskStore = new InMemoryTaskStore();
  const listening = await listenV1(
    (transport) => {
      const server = new McpServer(
        { name, version: '1.0.0' },
        {
          capabilities: {
            tools: {},
            ...(logging ? { logging: {} } : {}),
            tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          },
          taskStore,
        },
      );
      register(server);
      return server.connect(transport);
    },
    { path },
  );
  return {
    ...listening,
    close: async () => {
      await listening.close();
      taskStore.cleanup();
    },
  };
}

/**
 * Start the server. Tools: `research` (`taskSupport: 'required'`: works
 * `ms` milliseconds in the background, then completes with a text result).
 */
export async function startTaskServer({
  onCreated,
}: {
  /** Sees each task id; the answer naming the task waits for what it returns. */
  onCreated?: (taskId: string) => unknown;
} = {}): Promise<TaskServer> {
  const cancelledTasks: string[] = [];
  const sessions = await startTaskSessions({
    name: 'fixture-tasks',
    register: (server) =>
      registerResearchTask(server, {
        description: 'Research a topic as a task.',
        cancelledTasks,
        done: (topic) => `research: ${topic} done`,
        ...(onCreated === undefined ? {} : { onCreated }),
      }),
  });
  return { ...sessions, cancelledTasks };
}

import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import type { Operation } from './operation.js';

export type TaskCall = {
  name: string;
  arguments: Record<string, unknown>;
  ttlMs: number | undefined;
  onprogress: ((progress: Progress) => void) | undefined;
};

const taskSchema = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});

/** `CreateTaskResult`, or a plain result from a server that ran the call at once. */
const createdSchema = z.looseObject({
  task: taskSchema.optional(),
  content: z.array(z.looseObject({ type: z.string() })).optional(),
});

const resultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })).default([]),
  isError: z.boolean().optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
});

const emptySchema = z.looseObject({});

/** Statuses after which `tasks/result` answers at once. */
const READY = new Set(['completed', 'failed', 'cancelled', 'input_required']);

const DEFAULT_POLL_MS = 500;
const MIN_POLL_MS = 20;
const MAX_POLL_MS = 5_000;

const ignore = () => undefined;

/** Send `tasks/cancel` for `taskId` (best effort: a failure is ignored). */
function cancelTask(requester: Operation, taskId: string): void {
  requester
    .detached((client, options) =>
      client.request(
        { method: 'tasks/cancel', params: { taskId } },
        emptySchema,
        options,
      ),
    )
    .catch(ignore);
}

/**
 * Call a tool task-augmented (MCP 2025-11-25; the SDK v2 client runs no
 * tasks): `tools/call` with `params.task`, `tasks/get` at the task's
 * `pollInterval` (20 ms - 5 s, at most half the request timeout), then
 * `tasks/result`. When the operation stops, `tasks/cancel` is sent for it.
 */
export async function callAsTask(
  requester: Operation,
  call: TaskCall,
): Promise<CallToolResult> {
  const created = await requester.request(
    'during tools/call (task-augmented)',
    (client, options) =>
      client.request(
        {
          method: 'tools/call',
          params: {
            name: call.name,
            arguments: call.arguments,
            task: call.ttlMs === undefined ? {} : { ttl: call.ttlMs },
          },
        },
        createdSchema,
        options,
      ),
    {
      onprogress: call.onprogress,
      // Stopped before the answer came: the server may have made the task
      // already, so its answer is awaited and the task it names cancelled.
      afterStop: (late) =>
        void late.then(({ task }) => {
          if (task) cancelTask(requester, task.taskId);
        }, ignore),
    },
  );
  if (!created.task) return resultSchema.parse(created) as CallToolResult;
  const { taskId } = created.task;
  let { status } = created.task;
  let pollMs = created.task.pollInterval ?? DEFAULT_POLL_MS;

  const signal = requester.signal;
  const cancel = () => cancelTask(requester, taskId);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    while (!READY.has(status)) {
      await delay(
        Math.min(
          Math.max(pollMs, MIN_POLL_MS),
          MAX_POLL_MS,
          Math.floor(requester.plan.endpoint.settings.timeoutMs / 2),
        ),
        undefined,
        { signal },
      );
      const task = await requester.request(
        `while polling task ${taskId}`,
        (client, options) =>
          client.request(
            { method: 'tasks/get', params: { taskId } },
            taskSchema,
            options,
          ),
      );
      status = task.status;
      pollMs = task.pollInterval ?? pollMs;
    }
    // While the task waits for input, tasks/result carries the server's
    // requests and blocks until the task ends: only the ceiling bounds it.
    const blocking = status === 'input_required';
    const result = await requester.request(
      `while fetching the result of task ${taskId}`,
      (client, options) =>
        client.request(
          { method: 'tasks/result', params: { taskId } },
          resultSchema,
          options,
        ),
      blocking ? { timeoutMs: requester.plan.ceilingMs } : undefined,
    );
    return result as CallToolResult;
  } catch (error) {
    throw requester.reason ?? error;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

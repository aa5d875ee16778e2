import {
  Client,
  StreamableHTTPClientTransport,
  type Progress,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { CallProgress } from './gateway-client.js';
import { GatewayErrorCode, type GatewayError } from './errors.js';
import type { GatewayLogEntry } from './config.js';
import {
  startModernServer,
  startSessionfulServer,
  type Listening,
} from './__fixtures__/servers.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';
import { requestArrived, requestsOf } from './__fixtures__/requests.js';
import { startTaskServer } from './__fixtures__/task-server.js';

const { track, client, connect } = closeAfterEach();

const text = (result: { content: unknown[] }) =>
  (result.content[0] as { text?: string } | undefined)?.text ?? '';

function initializeCapabilities(server: Listening): Record<string, unknown> {
  const initialize = server.requests.find((r) => r.rpcMethod === 'initialize');
  return (
    (
      initialize?.body as {
        params?: { capabilities?: Record<string, unknown> };
      }
    )?.params?.capabilities ?? {}
  );
}

describe('progress', () => {
  it('passes on as many notifications as a direct call gets, unchanged', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/alpha`)),
    );
    track(direct);
    const seenDirect: Progress[] = [];
    await direct.callTool(
      { name: 'progress', arguments: { steps: 4 } },
      { onprogress: (progress) => seenDirect.push(progress) },
    );

    const seen: CallProgress[] = [];
    const gateway = client(server);
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'progress',
      arguments: { steps: 4 },
      onProgress: (progress) => seen.push(progress),
    });
    expect(text(result)).toBe('done in 4 steps (token present)');
    expect(seenDirect).toHaveLength(4);
    expect(seen).toEqual(
      seenDirect.map(({ progress, total, message }) => ({
        progress,
        total,
        message,
      })),
    );
    expect(seen[3]).toEqual({
      progress: 4,
      total: 4,
      message: 'step 4 of 4',
    });
  });

  it('sends no progress token without onProgress', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    const result = await client(server).callTool({
      target: 'alpha',
      tool: 'progress',
      arguments: { steps: 2 },
    });
    expect(text(result)).toBe('done in 2 steps (token absent)');
  });

  it('restarts the timeout on each progress, up to maxTotalTimeoutMs', async () => {
    const { gateway } = await connect(
      startSessionfulServer({ interactive: true }),
      { timeoutMs: 2_000 },
    );
    // Connect first: the first request of a client also covers connecting.
    await gateway.listTools({ target: 'alpha' });
    // 8 steps 500 ms apart: 4 s in all, twice the timeout, and never 2 s
    // without progress (1.5 s of room for a loaded machine at each step).
    let count = 0;
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'progress',
      arguments: { steps: 8, ms: 500 },
      onProgress: () => {
        count += 1;
      },
    });
    expect(text(result)).toBe('done in 8 steps (token present)');
    expect(count).toBe(8);

    const silent = (await gateway
      .callTool({ target: 'alpha', tool: 'sleep', arguments: { ms: 4_000 } })
      .catch((caught: unknown) => caught)) as GatewayError;
    expect(silent.code).toBe(GatewayErrorCode.Timeout);

    // 20 steps 500 ms apart would take 10 s; the total cap ends it at 3 s.
    const capped = (await gateway
      .callTool({
        target: 'alpha',
        tool: 'progress',
        arguments: { steps: 20, ms: 500 },
        onProgress: () => undefined,
        maxTotalTimeoutMs: 3_000,
      })
      .catch((caught: unknown) => caught)) as GatewayError;
    expect(capped.code).toBe(GatewayErrorCode.Timeout);
    expect(capped.message).toContain('maxTotalTimeoutMs');
  });
});

/** A 20-second task-augmented `research` call, settling with its error when aborted. */
function slowTask(
  gateway: ReturnType<typeof client>,
  signal: AbortSignal,
): Promise<unknown> {
  return gateway
    .callTool({
      target: 'tasks',
      tool: 'research',
      arguments: { topic: 'slow', ms: 20_000 },
      task: true,
      signal,
    })
    .catch((caught: unknown) => caught);
}

describe('task-augmented calls (2025-11-25 tasks)', () => {
  it('calls a task-required tool and returns the final result', async () => {
    const { server, gateway } = await connect(startTaskServer());
    const tools = await gateway.listTools({ target: 'tasks' });
    expect(tools[0]?.execution?.taskSupport).toBe('required');
    const result = await gateway.callTool({
      target: 'tasks',
      tool: 'research',
      arguments: { topic: 'radare2', ms: 300 },
      task: { ttlMs: 30_000 },
    });
    expect(text(result)).toBe('research: radare2 done');
    const methods = server.requests.map((r) => r.rpcMethod);
    expect(methods).toContain('tasks/get');
    expect(methods).toContain('tasks/result');
    const call = server.requests.find((r) => r.rpcMethod === 'tools/call');
    expect(
      (call?.body as { params?: { task?: unknown } }).params?.task,
    ).toEqual({ ttl: 30_000 });
  });

  it('a plain call of a task-required tool is refused by the server', async () => {
    const server = track(await startTaskServer());
    const result = await client(server).callTool({
      target: 'tasks',
      tool: 'research',
      arguments: {},
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('requires task augmentation');
  });

  it('aborting the signal mid-task sends tasks/cancel, and the work stops', async () => {
    const { server, gateway } = await connect(startTaskServer());
    const controller = new AbortController();
    const call = slowTask(gateway, controller.signal);
    await requestArrived(server, 'tasks/get');
    controller.abort();
    expect(((await call) as GatewayError).code).toBe(GatewayErrorCode.Aborted);
    await requestArrived(server, 'tasks/cancel');
    await expect.poll(() => server.cancelledTasks.length).toBe(1);
  });

  it('cancels a task the server made before the abort, though its answer came after', async () => {
    let created: string | undefined;
    let answer: () => void = () => undefined;
    const { server, gateway } = await connect(
      startTaskServer({
        onCreated: (taskId) =>
          new Promise<void>((resolve) => {
            created = taskId;
            answer = resolve;
          }),
      }),
    );
    const controller = new AbortController();
    const call = slowTask(gateway, controller.signal);
    await expect.poll(() => created).toBeDefined();
    controller.abort();
    expect(((await call) as GatewayError).code).toBe(GatewayErrorCode.Aborted);
    answer();
    await requestArrived(server, 'tasks/cancel');
    await expect.poll(() => server.cancelledTasks).toEqual([created]);
    expect(requestsOf(server, 'tasks/get')).toEqual([]);
  });
});

describe('server-to-client requests during a call', () => {
  it('round-trips an elicitation through onElicitation, naming the target', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    const asked: Array<{ target: string; message: unknown }> = [];
    const gateway = client(server, {
      onElicitation: async (request, extra) => {
        expect(extra.signal.aborted).toBe(false);
        asked.push({ target: request.target, message: request.params.message });
        return { action: 'accept', content: { binary: 'a.out' } };
      },
    });
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'ask',
      arguments: {},
    });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('"binary":"a.out"');
    expect(asked).toEqual([{ target: 'alpha', message: 'Which binary?' }]);
    expect(initializeCapabilities(server)).toHaveProperty('elicitation');
  });

  it('waits for an answer that takes longer than timeoutMs: the server waits for the user, and so does the call', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    // 2 s for each leg of the call (the elicitation's delivery, then the
    // result's after the answer): room for a loaded machine.
    const timeoutMs = 2_000;
    const answerAfterMs = 3_000;
    let asked = 0;
    const gateway = client(server, {
      timeoutMs,
      onElicitation: async () => {
        asked += 1;
        await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
        return { action: 'accept', content: { binary: 'slow.out' } };
      },
    });
    // The first request of a client also covers connecting, and the first
    // connection in a process is slow (nothing is warm yet on either side):
    // connect before timing the call, so that its timeoutMs is spent only
    // on delivering the elicitation, whatever ran before in the process.
    await gateway.listTools({ target: 'alpha' });
    const started = performance.now();
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'ask',
      arguments: {},
    });
    expect(text(result)).toContain('"binary":"slow.out"');
    expect(asked).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(answerAfterMs);
  });

  it('bounds a slow answer by maxTotalTimeoutMs', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    let handlerSignal: AbortSignal | undefined;
    // The request timeout leaves a loaded machine room to deliver the
    // elicitation; the user's answer would come after the total cap.
    const gateway = client(server, {
      timeoutMs: 2_000,
      onElicitation: async (_request, extra) => {
        handlerSignal = extra.signal;
        await new Promise((resolve) => setTimeout(resolve, 6_000));
        return { action: 'accept', content: { binary: 'too-late.out' } };
      },
    });
    const error = (await gateway
      .callTool({
        target: 'alpha',
        tool: 'ask',
        arguments: {},
        maxTotalTimeoutMs: 2_500,
      })
      .catch((caught: unknown) => caught)) as GatewayError;
    expect(error.code).toBe(GatewayErrorCode.Timeout);
    expect(error.message).toMatch(/maxTotalTimeoutMs/);
    expect(handlerSignal?.aborted).toBe(true);
  });

  it("aborts the elicitation handler's signal when the call is cancelled", async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    let handlerSignal: AbortSignal | undefined;
    const gateway = client(server, {
      onElicitation: (_request, extra) => {
        handlerSignal = extra.signal;
        // A user who never answers: only the signal ends the wait.
        return new Promise((_resolve, reject) =>
          extra.signal.addEventListener('abort', () =>
            reject(new Error('dismissed')),
          ),
        );
      },
    });
    const controller = new AbortController();
    const call = gateway
      .callTool({
        target: 'alpha',
        tool: 'ask',
        arguments: {},
        signal: controller.signal,
      })
      .catch((caught: unknown) => caught);
    await expect.poll(() => handlerSignal !== undefined).toBe(true);
    expect(handlerSignal?.aborted).toBe(false);
    controller.abort();
    expect(((await call) as GatewayError).code).toBe(GatewayErrorCode.Aborted);
    expect(handlerSignal?.aborted).toBe(true);
  });

  it('without onElicitation declares no capability and the server gets -32601 at once', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({ interactive: true }),
      { timeoutMs: 60_000 },
    );
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'ask',
      arguments: {},
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/refused: .*(-32601|Method not found)/);
    expect(initializeCapabilities(server)).not.toHaveProperty('elicitation');
  });

  it('round-trips sampling through onSampling', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    const gateway = client(server, {
      onSampling: async (request) => ({
        role: 'assistant',
        model: 'test-model',
        content: {
          type: 'text',
          text: `teal for ${request.target} (${request.params.messages.length} message)`,
        },
      }),
    });
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'sample',
      arguments: {},
    });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('teal for alpha (1 message)');
    expect(initializeCapabilities(server)).toHaveProperty('sampling');
  });

  it('without onSampling declares no capability and the server gets -32601 at once', async () => {
    const server = track(await startSessionfulServer({ interactive: true }));
    const result = await client(server, { timeoutMs: 60_000 }).callTool({
      target: 'alpha',
      tool: 'sample',
      arguments: {},
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/refused: .*(-32601|Method not found)/);
    expect(initializeCapabilities(server)).not.toHaveProperty('sampling');
  });
});

describe('per-call handlers', () => {
  /** An elicitation handler that answers with `binary` and records the target. */
  const answering =
    (binary: string, asked: string[]) =>
    async (request: { target: string }) => {
      asked.push(request.target);
      return { action: 'accept' as const, content: { binary } };
    };

  for (const [era, start] of [
    [
      '2025 (request on the call stream)',
      () => startSessionfulServer({ interactive: true }),
    ],
    [
      '2026-07-28 (input_required answer)',
      () => startModernServer({ interactive: true, inputRounds: true }),
    ],
  ] as const) {
    it(`each of two concurrent calls is answered by its own handler, before the client-wide one: ${era}`, async () => {
      const server = track(await start());
      const clientWide: string[] = [];
      const gateway = client(server, {
        onElicitation: answering('client-wide', clientWide),
      });
      const first: string[] = [];
      const second: string[] = [];
      const [one, two, plain] = await Promise.all([
        gateway.callTool({
          target: 'alpha',
          tool: 'ask',
          arguments: {},
          onElicitation: answering('first', first),
        }),
        gateway.callTool({
          target: 'alpha',
          tool: 'ask',
          arguments: {},
          onElicitation: answering('second', second),
        }),
        gateway.callTool({ target: 'alpha', tool: 'ask', arguments: {} }),
      ]);
      expect(text(one)).toContain('"binary":"first"');
      expect(text(two)).toContain('"binary":"second"');
      expect(text(plain)).toContain('"binary":"client-wide"');
      expect([first, second, clientWide]).toEqual([
        ['alpha'],
        ['alpha'],
        ['alpha'],
      ]);
    });
  }

  it('serverRequests declares the capability for per-call handlers; a call without one gets -32601', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({ interactive: true }),
      {
        serverRequests: ['elicitation', 'sampling'],
        timeoutMs: 60_000,
      },
    );
    const asked: string[] = [];
    const answered = await gateway.callTool({
      target: 'alpha',
      tool: 'ask',
      arguments: {},
      onElicitation: answering('own', asked),
    });
    expect(text(answered)).toContain('"binary":"own"');
    expect(asked).toEqual(['alpha']);
    const unanswered = await gateway.callTool({
      target: 'alpha',
      tool: 'sample',
      arguments: {},
    });
    expect(unanswered.isError).toBe(true);
    expect(text(unanswered)).toMatch(/refused: .*No sampling handler/);
    expect(initializeCapabilities(server)).toHaveProperty('elicitation');
    expect(initializeCapabilities(server)).toHaveProperty('sampling');
  });

  it('refuses a per-call handler whose capability the client does not declare, saying how to declare it', async () => {
    const { server, gateway } = await connect(
      startSessionfulServer({ interactive: true }),
    );
    const refused = await gateway
      .callTool({
        target: 'alpha',
        tool: 'ask',
        arguments: {},
        onElicitation: answering('never', []),
      })
      .catch((caught: unknown) => caught as GatewayError);
    expect((refused as GatewayError).code).toBe(GatewayErrorCode.InvalidConfig);
    expect((refused as GatewayError).message).toMatch(
      /'onElicitation'.*serverRequests: \['elicitation'\]/,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('backend logs', () => {
  it('passes notifications/message of a call on with level and target', async () => {
    const server = track(await startSessionfulServer());
    const entries: GatewayLogEntry[] = [];
    const gateway = client(server, { onLog: (entry) => entries.push(entry) });
    const result = await gateway.callTool({
      target: 'alpha',
      tool: 'chatty',
      arguments: {},
    });
    expect(text(result)).toBe('done after notifications');
    expect(entries).toEqual([
      { target: 'alpha', level: 'info', data: 'working on it' },
      { target: 'alpha', level: 'info', data: 'almost done' },
    ]);
  });
});

describe('multiplexed mode', () => {
  it('names the target whose call carried the elicitation and the logs', async () => {
    const server = track(
      await startSessionfulServer({
        interactive: true,
        multiplexedNames: true,
      }),
    );
    const asked: string[] = [];
    const entries: GatewayLogEntry[] = [];
    const gateway = client(server, {
      mode: 'multiplexed',
      onElicitation: async (request) => {
        asked.push(request.target);
        return { action: 'decline' };
      },
      onLog: (entry) => entries.push(entry),
    });
    const [first, second] = await Promise.all([
      gateway.callTool({ target: 'alpha', tool: 'ask', arguments: {} }),
      gateway.callTool({ target: 'beta', tool: 'chatty', arguments: {} }),
    ]);
    expect(text(first)).toContain('"action":"decline"');
    expect(text(second)).toBe('done after notifications');
    expect(asked).toEqual(['alpha']);
    expect(entries.map((entry) => entry.target)).toEqual(['beta', 'beta']);
    const calls = requestsOf(server, 'tools/call');
    expect(
      calls.map((r) => (r.body as { params: { name: string } }).params.name),
    ).toEqual(expect.arrayContaining(['alpha_ask', 'beta_chatty']));
  });
});

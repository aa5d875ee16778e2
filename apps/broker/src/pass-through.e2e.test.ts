import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import {
  answeringClient,
  expectAnswersRoundTrip,
  useInteractiveBackend,
} from './__fixtures__/interactive-backend.js';
import {
  resultText,
  callThrough,
  spawnBroker,
  type SpawnedBroker,
  type TextResult,
  useBroker,
} from './__fixtures__/spawn-broker.js';

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

const live = useInteractiveBackend('broker-pass-');

/** `live_ask` and `live_sample` are refused at once: the client declared neither capability. */
async function expectUndeclaredRefused(broker: SpawnedBroker): Promise<void> {
  const ask = await callThrough(broker, 'live_ask');
  expect(resultText(ask)).toMatch(
    /^elicitation failed: .*The broker's MCP client does not support elicitation .* \(code -32601\)$/,
  );
  const sample = await callThrough(broker, 'live_sample');
  expect(resultText(sample)).toMatch(
    /^sampling failed: .*does not support sampling .* \(code -32601\)$/,
  );
}

describe('a call through the broker behaves as if made directly', () => {
  const plain = useBroker(() => live.env);

  it('forwards as many progress notifications as a direct call gets, with progress, total and message unchanged', async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StreamableHTTPClientTransport(
        new URL(`${live.backend.url}/mcp/live`),
      ),
    );
    const directProgress: unknown[] = [];
    await direct.callTool(
      { name: 'steps', arguments: { count: 4 } },
      { onprogress: (p) => directProgress.push(p) },
    );
    await direct.close();

    // Read from the broker's stdout: an SDK stdio client drops a progress
    // notification that arrives in the same read as the response (it hands
    // notifications on a microtask, after the response has ended the call).
    const before = plain.transport.stdoutLines.length;
    const result = await callThrough(
      plain,
      'live_steps',
      { count: 4 },
      { onprogress: () => {}, resetTimeoutOnProgress: true },
    );
    expect(resultText(result)).toBe('4 steps done');
    const lines = plain.transport.stdoutLines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const answeredAt = lines.findIndex((message) => 'result' in message);
    const brokered = lines
      .slice(0, answeredAt)
      .filter((message) => message.method === 'notifications/progress')
      .map((message) => {
        const { progressToken: _token, ...progress } = message.params as {
          progressToken: unknown;
        };
        return progress;
      });
    expect(directProgress).toHaveLength(4);
    expect(brokered).toEqual(directProgress);
    expect(brokered[3]).toEqual({
      progress: 4,
      total: 4,
      message: 'step 4 of 4',
    });
  });

  it('asks for no progress and forwards none when the client sent no token', async () => {
    const seen: string[] = [];
    const before = plain.transport.stdoutLines.length;
    const result = await callThrough(plain, 'live_steps', { count: 3 });
    expect(resultText(result)).toBe('3 steps done');
    for (const line of plain.transport.stdoutLines.slice(before))
      if (line.includes('notifications/progress')) seen.push(line);
    expect(seen).toEqual([]);
  });

  it('calls a task-required tool as a task and answers with its result', async () => {
    const tasksBefore = live.backend.createdTasks.length;
    const result = await callThrough(plain, 'live_research', {
      topic: 'quokkas',
      ms: 200,
    });
    expect((result as TextResult).isError).not.toBe(true);
    expect(resultText(result)).toBe('research on quokkas done');
    expect(live.backend.createdTasks.length).toBe(tasksBefore + 1);
  });

  it('cancels the backend task when the client cancels the call', async () => {
    const controller = new AbortController();
    const tasksBefore = live.backend.createdTasks.length;
    const pending = callThrough(
      plain,
      'live_research',
      { topic: 'forever', ms: 60_000 },
      { signal: controller.signal },
    ).catch((error: unknown) => error);
    await expect
      .poll(() => live.backend.createdTasks.length)
      .toBe(tasksBefore + 1);
    const taskId = live.backend.createdTasks.at(-1)!;
    controller.abort();
    await pending;
    await expect.poll(() => live.backend.cancelledTasks).toContain(taskId);
  });

  it('refuses elicitation and sampling at once for a client that declared neither', async () => {
    await expectUndeclaredRefused(plain);
    expect(plain.stderr()).toMatch(
      /elicitation: backend "live" asked, but the client did not declare elicitation; refused/,
    );
  });

  it('writes backend log notifications to stderr with level and backend, never to stdout', async () => {
    const before = plain.transport.stdoutLines.length;
    const result = await callThrough(plain, 'live_chatty');
    expect(resultText(result)).toBe('chatty done');
    await expect
      .poll(() => plain.stderr())
      .toMatch(/backend "live" warning \[worker\]: disk almost full/);
    expect(plain.stderr()).toMatch(
      /backend "live" error \[worker\]: \{"detail":"retrying once"\}/,
    );
    for (const line of plain.transport.stdoutLines.slice(before))
      expect(line).not.toContain('notifications/message');
  });
});

describe('elicitation and sampling with a client that supports them', () => {
  it('round-trips both: the client answers, the backend gets that answer', async () => {
    const asked: unknown[] = [];
    const broker = await spawnBroker(live.env, answeringClient(asked));
    try {
      await expectAnswersRoundTrip(broker, asked);
    } finally {
      await broker.close();
    }
  });
});

// MCP 2026-07-28 replaces server-to-client requests with multi round-trip
// requests: the broker answers mcp_call_tool with `input_required`, the
// client retries with its answers, the backend's call goes on.

/** The broker's stdout messages since `from`, parsed. */
const sent = (broker: SpawnedBroker, from: number) =>
  broker.transport.stdoutLines
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** No answer since `from` was an `input_required` round. */
const expectNoRound = (broker: SpawnedBroker, from: number) => {
  for (const message of sent(broker, from))
    expect(
      (message.result as { resultType?: unknown } | undefined)?.resultType,
    ).not.toBe('input_required');
};

describe('elicitation and sampling for a client on MCP 2026-07-28', () => {
  it('answers with input_required, takes the retry with the answers to the backend and returns its result', async () => {
    const asked: unknown[] = [];
    const broker = await spawnBroker(live.env, {
      clientOptions: MODERN,
      ...answeringClient(asked),
    });
    try {
      const before = broker.transport.stdoutLines.length;
      await expectAnswersRoundTrip(broker, asked);

      const messages = sent(broker, before);
      // No server-to-client request: the asks came inside results.
      expect(
        messages.filter((m) => typeof m.method === 'string' && 'id' in m),
      ).toEqual([]);
      const rounds = messages
        .map((m) => m.result as Record<string, unknown> | undefined)
        .filter((r) => r?.resultType === 'input_required');
      expect(rounds).toHaveLength(2);
      expect(rounds[0]).toMatchObject({
        inputRequests: {
          'elicitation-1': {
            method: 'elicitation/create',
            params: { message: 'Which colour?' },
          },
        },
        requestState: expect.any(String),
      });
      expect(rounds[1]).toMatchObject({
        inputRequests: {
          'sampling-1': { method: 'sampling/createMessage' },
        },
      });
      expect(broker.stderr()).toMatch(
        /elicitation: backend "live" asks the user; handed to the client in an input_required answer/,
      );

      // The state of a call that ended, or one never made, is refused clearly.
      for (const requestState of [
        (rounds[0] as { requestState: string }).requestState,
        'not-a-call-the-broker-knows',
      ]) {
        const retried = await broker.client
          .callTool({
            name: 'mcp_call_tool',
            arguments: { name: 'live_ask', arguments: {} },
            inputResponses: {
              'elicitation-1': { action: 'accept', content: { colour: 'red' } },
            },
            requestState,
          } as never)
          .then(
            (result) => resultText(result),
            (error: unknown) => (error as Error).message,
          );
        expect(retried).toMatch(
          /^INVALID_ARGUMENTS: Unknown or expired requestState for live_ask/,
        );
      }
      expect(asked).toHaveLength(1);
    } finally {
      await broker.close();
    }
  });

  it('refuses at once, with no round, when the client declared neither capability', async () => {
    const broker = await spawnBroker(live.env, { clientOptions: MODERN });
    try {
      const before = broker.transport.stdoutLines.length;
      await expectUndeclaredRefused(broker);
      expectNoRound(broker, before);
    } finally {
      await broker.close();
    }
  });

  it('applies the role gate first: a read-only role never reaches the backend, so nothing is asked', async () => {
    const broker = await spawnBroker(
      { ...live.env, HERETEK_BROKER_ROLE: 'director' },
      {
        clientOptions: MODERN,
        capabilities: { elicitation: { form: {} } },
        prepare: (client) => {
          client.setRequestHandler('elicitation/create', async () => ({
            action: 'accept',
            content: { confirm: true },
          }));
        },
      },
    );
    try {
      const callsBefore = live.backend.eraseCalls.length;
      const before = broker.transport.stdoutLines.length;
      const result = await callThrough(broker, 'live_erase');
      expect(resultText(result)).toMatch(
        /^ROLE_FORBIDDEN: Role "director" is read-only/,
      );
      expect(live.backend.eraseCalls.length).toBe(callsBefore);
      expectNoRound(broker, before);
    } finally {
      await broker.close();
    }
  });

  it('lets a writer role call the mutating tool, whose confirmation round-trips', async () => {
    const broker = await spawnBroker(live.env, {
      clientOptions: MODERN,
      capabilities: { elicitation: { form: {} } },
      prepare: (client) => {
        client.setRequestHandler('elicitation/create', async () => ({
          action: 'decline',
        }));
      },
    });
    try {
      const callsBefore = live.backend.eraseCalls.length;
      const result = await callThrough(broker, 'live_erase');
      expect(resultText(result)).toBe('erase answer {"action":"decline"}');
      expect(live.backend.eraseCalls.length).toBe(callsBefore + 1);
    } finally {
      await broker.close();
    }
  });
});

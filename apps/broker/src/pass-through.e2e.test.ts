import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
} from './__fixtures__/spawn-broker.js';

const POLL = { timeout: 10_000, interval: 25 };

const live = useInteractiveBackend('broker-pass-');

describe('a call through the broker behaves as if made directly', () => {
  let plain: SpawnedBroker;

  beforeAll(async () => {
    plain = await spawnBroker(live.env);
  });
  afterAll(async () => {
    await plain?.close();
  });

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

    const brokered: unknown[] = [];
    const result = await callThrough(
      plain,
      'live_steps',
      { count: 4 },
      { onprogress: (p) => brokered.push(p), resetTimeoutOnProgress: true },
    );
    expect(resultText(result)).toBe('4 steps done');
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
      .poll(() => live.backend.createdTasks.length, POLL)
      .toBe(tasksBefore + 1);
    const taskId = live.backend.createdTasks.at(-1)!;
    controller.abort();
    await pending;
    await expect
      .poll(() => live.backend.cancelledTasks, POLL)
      .toContain(taskId);
  });

  it('refuses elicitation and sampling at once for a client that declared neither', async () => {
    const ask = await callThrough(plain, 'live_ask');
    expect(resultText(ask)).toMatch(
      /^elicitation failed: .*The broker's MCP client does not support elicitation .* \(code -32601\)$/,
    );
    const sample = await callThrough(plain, 'live_sample');
    expect(resultText(sample)).toMatch(
      /^sampling failed: .*does not support sampling .* \(code -32601\)$/,
    );
    expect(plain.stderr()).toMatch(
      /elicitation: backend "live" asked, but the client did not declare elicitation; refused/,
    );
  });

  it('writes backend log notifications to stderr with level and backend, never to stdout', async () => {
    const before = plain.transport.stdoutLines.length;
    const result = await callThrough(plain, 'live_chatty');
    expect(resultText(result)).toBe('chatty done');
    await expect
      .poll(() => plain.stderr(), POLL)
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

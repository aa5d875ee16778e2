import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startInteractiveBackend,
  type InteractiveBackend,
} from './__fixtures__/interactive-backend.js';
import {
  spawnBroker,
  type SpawnedBroker,
} from './__fixtures__/spawn-broker.js';

type TextResult = {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
};
const text = (result: unknown) =>
  (result as TextResult).content.map((c) => c.text ?? '').join('\n');
const POLL = { timeout: 10_000, interval: 25 };

let backend: InteractiveBackend;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  backend = await startInteractiveBackend('live');
  dir = mkdtempSync(join(tmpdir(), 'broker-pass-'));
  const file = join(dir, 'backends.json');
  writeFileSync(
    file,
    JSON.stringify([{ backend: 'live', target: 'live', profile: 'core' }]),
  );
  env = {
    HERETEK_GATEWAY_URL: backend.url,
    HERETEK_BACKENDS_FILE: file,
    HERETEK_BROKER_ROLE: 'staff-mobile',
  };
});

afterAll(async () => {
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

const callThrough = (
  broker: SpawnedBroker,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client['callTool']>[1] = {},
) =>
  broker.client.callTool(
    { name: 'mcp_call_tool', arguments: { name, arguments: args } },
    options,
  );

describe('a call through the broker behaves as if made directly', () => {
  let plain: SpawnedBroker;

  beforeAll(async () => {
    plain = await spawnBroker(env);
  });
  afterAll(async () => {
    await plain?.close();
  });

  it('forwards as many progress notifications as a direct call gets, with progress, total and message unchanged', async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.url}/mcp/live`)),
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
    expect(text(result)).toBe('4 steps done');
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
    expect(text(result)).toBe('3 steps done');
    for (const line of plain.transport.stdoutLines.slice(before))
      if (line.includes('notifications/progress')) seen.push(line);
    expect(seen).toEqual([]);
  });

  it('calls a task-required tool as a task and answers with its result', async () => {
    const tasksBefore = backend.createdTasks.length;
    const result = await callThrough(plain, 'live_research', {
      topic: 'quokkas',
      ms: 200,
    });
    expect((result as TextResult).isError).not.toBe(true);
    expect(text(result)).toBe('research on quokkas done');
    expect(backend.createdTasks.length).toBe(tasksBefore + 1);
  });

  it('cancels the backend task when the client cancels the call', async () => {
    const controller = new AbortController();
    const tasksBefore = backend.createdTasks.length;
    const pending = callThrough(
      plain,
      'live_research',
      { topic: 'forever', ms: 60_000 },
      { signal: controller.signal },
    ).catch((error: unknown) => error);
    await expect
      .poll(() => backend.createdTasks.length, POLL)
      .toBe(tasksBefore + 1);
    const taskId = backend.createdTasks.at(-1)!;
    controller.abort();
    await pending;
    await expect.poll(() => backend.cancelledTasks, POLL).toContain(taskId);
  });

  it('refuses elicitation and sampling at once for a client that declared neither', async () => {
    const ask = await callThrough(plain, 'live_ask');
    expect(text(ask)).toMatch(
      /^elicitation failed: .*The broker's MCP client does not support elicitation .* \(code -32601\)$/,
    );
    const sample = await callThrough(plain, 'live_sample');
    expect(text(sample)).toMatch(
      /^sampling failed: .*does not support sampling .* \(code -32601\)$/,
    );
    expect(plain.stderr()).toMatch(
      /elicitation: backend "live" asked, but the client did not declare elicitation; refused/,
    );
  });

  it('writes backend log notifications to stderr with level and backend, never to stdout', async () => {
    const before = plain.transport.stdoutLines.length;
    const result = await callThrough(plain, 'live_chatty');
    expect(text(result)).toBe('chatty done');
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
    const broker = await spawnBroker(env, {
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
    });
    try {
      const ask = await callThrough(broker, 'live_ask');
      expect(text(ask)).toBe(
        'answer {"action":"accept","content":{"colour":"teal"}}',
      );
      expect(asked).toEqual([
        expect.objectContaining({ message: 'Which colour?' }),
      ]);
      const sample = await callThrough(broker, 'live_sample');
      expect(text(sample)).toMatch(/^sampled \{/);
      expect(text(sample)).toContain('"text":"autumn moon rises"');
      expect(text(sample)).toContain('"model":"test-model"');
    } finally {
      await broker.close();
    }
  });
});

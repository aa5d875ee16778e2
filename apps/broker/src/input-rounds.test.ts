import { describe, expect, it, vi } from 'vitest';
import {
  ANSWER_TIMEOUT_MS,
  InputRounds,
  MAX_PENDING_CALLS,
  type InputRequiredAnswer,
} from './input-rounds.js';
import type { CallHandlers, ToolCallResult } from './types.js';

const BOTH = { elicitation: true, sampling: true };
const ELICIT = {
  message: 'Which colour?',
  requestedSchema: { type: 'object' as const, properties: {} },
};

/** A backend call that asks once and answers with what it got (or the error). */
function asking(seen: { signal?: AbortSignal } = {}) {
  return async (
    signal: AbortSignal,
    handlers: CallHandlers,
  ): Promise<ToolCallResult> => {
    seen.signal = signal;
    if (handlers.onElicitation === undefined)
      throw new Error('no elicitation handler for the call');
    try {
      const answer = await handlers.onElicitation(
        { target: 't', params: ELICIT },
        { signal },
      );
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    } catch (error) {
      const { message, code } = error as Error & { code?: number };
      return { content: [{ type: 'text', text: `${code}: ${message}` }] };
    }
  };
}

const first = (
  rounds: InputRounds,
  start: Parameters<InputRounds['round']>[0]['start'],
  signal = new AbortController().signal,
) =>
  rounds.round({
    name: 'live_ask',
    capabilities: BOTH,
    requestState: undefined,
    inputResponses: undefined,
    signal,
    onProgress: undefined,
    start,
  });

const retry = (
  rounds: InputRounds,
  requestState: string,
  inputResponses: Record<string, unknown>,
  name = 'live_ask',
) =>
  rounds.round({
    name,
    capabilities: BOTH,
    requestState,
    inputResponses,
    signal: new AbortController().signal,
    onProgress: undefined,
    start: () => Promise.reject(new Error('a retry never starts a call')),
  });

const textOf = (result: unknown) =>
  (result as ToolCallResult & { content: Array<{ text: string }> }).content[0]!
    .text;

describe('InputRounds', () => {
  it('answers input_required, then the retry resumes the same backend call with the answer', async () => {
    const rounds = new InputRounds();
    const answer = (await first(rounds, asking())) as InputRequiredAnswer;
    expect(answer).toEqual({
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': { method: 'elicitation/create', params: ELICIT },
      },
      requestState: expect.any(String),
    });
    expect(rounds.pending).toBe(1);
    const done = await retry(rounds, answer.requestState, {
      'elicitation-1': { action: 'accept', content: { colour: 'teal' } },
    });
    expect(textOf(done)).toBe(
      '{"action":"accept","content":{"colour":"teal"}}',
    );
    expect(rounds.pending).toBe(0);
  });

  it('returns the result directly when the backend asks for nothing', async () => {
    const rounds = new InputRounds();
    const result = await first(rounds, async () => ({
      content: [{ type: 'text', text: 'plain' }],
    }));
    expect(textOf(result)).toBe('plain');
    expect(rounds.pending).toBe(0);
  });

  it('gives a call up when no retry comes in time: the backend gets an error and its call is aborted', async () => {
    const rounds = new InputRounds();
    const seen: { signal?: AbortSignal } = {};
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const answer = (await first(rounds, asking(seen))) as InputRequiredAnswer;
      vi.advanceTimersByTime(ANSWER_TIMEOUT_MS - 1);
      expect(seen.signal?.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(seen.signal?.aborted).toBe(true);
      expect(rounds.pending).toBe(0);
      await expect(
        retry(rounds, answer.requestState, {
          'elicitation-1': { action: 'accept', content: {} },
        }),
      ).rejects.toThrow(/Unknown or expired requestState for live_ask/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a backend request at once beyond the limit of waiting calls', async () => {
    const rounds = new InputRounds();
    for (let waiting = 0; waiting < MAX_PENDING_CALLS; waiting += 1)
      expect(
        ((await first(rounds, asking())) as InputRequiredAnswer).resultType,
      ).toBe('input_required');
    const refused = await first(rounds, asking());
    expect(textOf(refused)).toMatch(
      /^-32603: Too many calls already wait for the client's answers; elicitation for backend "t" refused/,
    );
    rounds.close();
  });

  it('refuses at once when the client did not declare the capability', async () => {
    const rounds = new InputRounds();
    const result = await rounds.round({
      name: 'live_ask',
      capabilities: { elicitation: false, sampling: true },
      requestState: undefined,
      inputResponses: undefined,
      signal: new AbortController().signal,
      onProgress: undefined,
      start: asking(),
    });
    expect(textOf(result)).toMatch(
      /^-32601: The broker's MCP client does not support elicitation/,
    );
    expect(rounds.pending).toBe(0);
  });

  it('fails the backend request with -32602 when the answer has the wrong shape', async () => {
    const rounds = new InputRounds();
    const answer = (await first(rounds, asking())) as InputRequiredAnswer;
    const done = await retry(rounds, answer.requestState, {
      'elicitation-1': { role: 'assistant' },
    });
    expect(textOf(done)).toMatch(
      /^-32602: The client's answer to elicitation\/create is not usable: missing required property "action"/,
    );
  });

  it('names what is wrong with a sampling answer', async () => {
    const rounds = new InputRounds();
    const sampling = async (
      signal: AbortSignal,
      handlers: CallHandlers,
    ): Promise<ToolCallResult> => {
      try {
        await handlers.onSampling!(
          { target: 't', params: { messages: [], maxTokens: 8 } },
          { signal },
        );
        return { content: [{ type: 'text', text: 'answered' }] };
      } catch (error) {
        const { message, code } = error as Error & { code?: number };
        return { content: [{ type: 'text', text: `${code}: ${message}` }] };
      }
    };
    const answer = (await first(rounds, sampling)) as InputRequiredAnswer;
    const [key] = Object.keys(answer.inputRequests);
    const done = await retry(rounds, answer.requestState, {
      [key!]: { role: 7, content: 'text' },
    });
    expect(textOf(done)).toMatch(
      /^-32602: The client's answer to sampling\/createMessage is not usable: role must be a string \(user or assistant\), got number 7; content must be a content block or a list of them, got the string "text"\.$/,
    );
  });

  it('asks again for what a retry left unanswered', async () => {
    const rounds = new InputRounds();
    const answer = (await first(rounds, asking())) as InputRequiredAnswer;
    const again = (await retry(
      rounds,
      answer.requestState,
      {},
    )) as InputRequiredAnswer;
    expect(again.resultType).toBe('input_required');
    expect(Object.keys(again.inputRequests)).toEqual(['elicitation-1']);
    expect(again.requestState).toBe(answer.requestState);
    rounds.close();
  });

  it('refuses a requestState presented for another tool', async () => {
    const rounds = new InputRounds();
    const answer = (await first(rounds, asking())) as InputRequiredAnswer;
    await expect(
      retry(rounds, answer.requestState, {}, 'live_other'),
    ).rejects.toThrow(/belongs to another tool/);
    rounds.close();
  });

  it('cancels the backend call when the client cancels a round', async () => {
    const rounds = new InputRounds();
    const seen: { signal?: AbortSignal } = {};
    const controller = new AbortController();
    const pending = first(
      rounds,
      async (signal) => {
        seen.signal = signal;
        await new Promise((resolve) =>
          signal.addEventListener('abort', resolve),
        );
        throw new Error('aborted');
      },
      controller.signal,
    ).catch((error: unknown) => error);
    await expect
      .poll(() => seen.signal !== undefined, { timeout: 10_000 })
      .toBe(true);
    controller.abort();
    await pending;
    expect(seen.signal?.aborted).toBe(true);
  });

  it('refuses at once a request that arrives for a call that already ended', async () => {
    const rounds = new InputRounds();
    let call: CallHandlers = {};
    const result = await first(rounds, async (_signal, handlers) => {
      call = handlers;
      return { content: [{ type: 'text', text: 'done' }] };
    });
    expect(textOf(result)).toBe('done');
    expect(rounds.modernClient).toBe(true);
    await expect(
      call.onSampling!(
        { target: 't', params: { messages: [], maxTokens: 1 } },
        { signal: new AbortController().signal },
      ),
    ).rejects.toThrow(/arrived after the call it belongs to ended/);
  });
});

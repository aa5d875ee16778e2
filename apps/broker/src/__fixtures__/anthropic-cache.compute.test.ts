import { describe, expect, it } from 'vitest';
import { emulateAnthropicCache } from './anthropic-cache.js';

const mark = { type: 'ephemeral' };
const text = (t: string, cached = false) => ({
  type: 'text',
  text: t,
  ...(cached ? { cache_control: mark } : {}),
});
const big = (c: string) => c.repeat(2000);
// One token per character of the block's JSON.
const countTokens = (t: string) => t.length;

const request = (options: {
  model?: string;
  system: object[];
  messages: object[];
}) => ({
  model: options.model ?? 'claude-sonnet-4-5',
  system: options.system,
  messages: options.messages,
});

describe('the Anthropic cache emulation', () => {
  it('reads a shared system block 0 that carries its own breakpoint, and nothing without it', () => {
    const user = { role: 'user', content: [text('hi', true)] };
    const split = emulateAnthropicCache(
      [
        request({
          system: [text(big('a'), true), text('role one', true)],
          messages: [user],
        }),
        request({
          system: [text(big('a'), true), text('role two', true)],
          messages: [user],
        }),
      ],
      { countTokens },
    );
    const shared = JSON.stringify(text(big('a'))).length;
    expect(split.requests[0]!.read).toBe(0);
    expect(split.requests[1]!.read).toBe(shared);

    const joined = emulateAnthropicCache(
      [
        request({
          system: [text(`${big('a')}role one`, true)],
          messages: [user],
        }),
        request({
          system: [text(`${big('a')}role two`, true)],
          messages: [user],
        }),
      ],
      { countTokens },
    );
    expect(joined.read).toBe(0);
  });

  it('finds a cached prefix up to 20 blocks before a breakpoint, not 21', () => {
    const history = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: [text(`turn ${i}`)],
      }));
    const first = request({
      system: [text(big('s'), true)],
      messages: [{ role: 'user', content: [text('start', true)] }],
    });
    const later = (n: number) =>
      request({
        system: [text(big('s'))],
        messages: [
          { role: 'user', content: [text('start')] },
          ...history(n),
          { role: 'user', content: [text('end', true)] },
        ],
      });
    // The cached prefix ends at "start"; the breakpoint is n + 1 blocks later.
    expect(
      emulateAnthropicCache([first, later(19)], { countTokens }).requests[1]!
        .read,
    ).toBeGreaterThan(0);
    expect(
      emulateAnthropicCache([first, later(20)], { countTokens }).requests[1]!
        .read,
    ).toBe(0);
  });

  it('writes no prefix below the minimum, and shares nothing across models', () => {
    const small = request({
      system: [text('short', true)],
      messages: [{ role: 'user', content: [text('hi', true)] }],
    });
    expect(emulateAnthropicCache([small, small], { countTokens }).read).toBe(0);
    const long = request({
      system: [text(big('x'), true)],
      messages: [{ role: 'user', content: [text('hi', true)] }],
    });
    const other = { ...long, model: 'claude-haiku-4-5' };
    expect(emulateAnthropicCache([long, other], { countTokens }).read).toBe(0);
    const again = emulateAnthropicCache([long, long], { countTokens });
    expect(again.requests[1]!.read).toBe(again.requests[1]!.input);
    expect(again.readShare).toBeCloseTo(0.5);
  });
});

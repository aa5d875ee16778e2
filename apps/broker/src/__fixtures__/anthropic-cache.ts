/**
 * Bench fixture: Anthropic's prompt caching emulated over recorded Messages
 * API requests, as its documentation describes it:
 *
 * - the cached prefix runs in the order tools, system, messages; a
 *   `cache_control` marker makes a breakpoint at the end of its block;
 * - a request reads the longest cached prefix it shares, found by checking
 *   each breakpoint and the block boundaries up to 20 blocks before it;
 * - a request writes the prefix at each of its breakpoints into the cache,
 *   when that prefix is at least the model's minimum (1,024 tokens for the
 *   Sonnet and Opus models).
 *
 * Entries never expire here (a scripted session lasts well under the 5-minute
 * lifetime). Tokens are estimated per block with a caller's counter.
 */
import { createHash } from 'node:crypto';

/** One request's share of the input, in estimated tokens. */
export type CachedRequest = {
  /** Every input token of the request. */
  input: number;
  /** Read from the cache. */
  read: number;
  /** Written to the cache (the prefix past what was read, up to the last breakpoint that qualifies). */
  written: number;
};

/** The emulation's result over a series of requests: their sums, and each request. */
export type CacheReport = CachedRequest & {
  requests: CachedRequest[];
  /** read / input. */
  readShare: number;
};

type Block = { key: string; tokens: number; breakpoint: boolean };

/** A block's content without its cache marker: what must match byte for byte. */
function keyOf(value: Record<string, unknown>, role?: string): string {
  const rest = Object.fromEntries(
    Object.entries(value).filter(([key]) => key !== 'cache_control'),
  );
  return JSON.stringify(role === undefined ? rest : { role, ...rest });
}

/** The request as the sequence of blocks that the cache sees, in prefix order. */
export function blocksOf(
  body: Record<string, unknown>,
  countTokens: (text: string) => number,
): Block[] {
  const blocks: Block[] = [];
  const push = (value: Record<string, unknown>, role?: string) => {
    const key = keyOf(value, role);
    blocks.push({
      key,
      tokens: countTokens(key),
      breakpoint: value.cache_control !== undefined,
    });
  };
  for (const tool of (body.tools ?? []) as Array<Record<string, unknown>>)
    push(tool);
  const system = body.system;
  if (typeof system === 'string') push({ type: 'text', text: system });
  else
    for (const block of (system ?? []) as Array<Record<string, unknown>>)
      push(block);
  for (const message of (body.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>) {
    if (typeof message.content === 'string')
      push({ type: 'text', text: message.content }, message.role);
    else
      for (const block of message.content as Array<Record<string, unknown>>)
        push(block, message.role);
  }
  return blocks;
}

/**
 * Emulates the cache over `bodies` in order, from an empty cache. Requests
 * of different models never share entries (the model is part of the key).
 */
export function emulateAnthropicCache(
  bodies: ReadonlyArray<Record<string, unknown>>,
  options: {
    countTokens: (text: string) => number;
    minimumTokens?: number;
    lookbackBlocks?: number;
  },
): CacheReport {
  const minimum = options.minimumTokens ?? 1024;
  const lookback = options.lookbackBlocks ?? 20;
  const cache = new Set<string>();
  const requests: CachedRequest[] = [];
  for (const body of bodies) {
    const blocks = blocksOf(body, options.countTokens);
    const hashes: string[] = [];
    const tokens: number[] = [];
    let hash = createHash('sha256').update(String(body.model)).digest('hex');
    let total = 0;
    for (const block of blocks) {
      hash = createHash('sha256').update(hash).update(block.key).digest('hex');
      total += block.tokens;
      hashes.push(hash);
      tokens.push(total);
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let read = 0;
    for (const point of breakpoints) {
      for (let i = point; i >= Math.max(0, point - lookback); i--) {
        if (cache.has(hashes[i]!)) {
          read = Math.max(read, tokens[i]!);
          break;
        }
      }
    }
    let writtenEnd = read;
    for (const point of breakpoints) {
      if (tokens[point]! < minimum) continue;
      cache.add(hashes[point]!);
      writtenEnd = Math.max(writtenEnd, tokens[point]!);
    }
    requests.push({ input: total, read, written: writtenEnd - read });
  }
  const sum = (pick: (r: CachedRequest) => number) =>
    requests.reduce((acc, r) => acc + pick(r), 0);
  const input = sum((r) => r.input);
  const read = sum((r) => r.read);
  return {
    requests,
    input,
    read,
    written: sum((r) => r.written),
    readShare: input === 0 ? 0 : read / input,
  };
}

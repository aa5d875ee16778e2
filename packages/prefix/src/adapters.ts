/**
 * Provider adapters: turn an assembled prompt into the shapes providers take,
 * with cache breakpoints where the layers end, and warn when a cached
 * segment is estimated below the provider's minimum cacheable length.
 */
import type { AssembledPrefix } from './assemble.js';
import { lookupMinimumCacheableTokens } from './cache-minimums.js';
import type { CacheProvider } from './cache-minimums.js';
import {
  InvalidArgumentError,
  TooManyCacheBreakpointsError,
} from './errors.js';
import { estimateTokens, TOKEN_ENCODING } from './tokens.js';

/**
 * Where a cache breakpoint can go:
 * - `frozen`: end of layer 2, shared by every role and profile;
 * - `role`: end of layer 3, shared by every profile of one role;
 * - `profile`: end of layer 4, the whole system prompt.
 */
export type CacheSegment = 'frozen' | 'role' | 'profile';

/** The segments in prompt order. */
export const CACHE_SEGMENTS: readonly CacheSegment[] = Object.freeze([
  'frozen',
  'role',
  'profile',
]);

/** Anthropic allows at most this many `cache_control` breakpoints in one request. */
export const ANTHROPIC_MAX_CACHE_BREAKPOINTS = 4;

/** A warning about a cached segment estimated below the provider's minimum. */
export type CacheLengthWarning = {
  /** Always `BELOW_MINIMUM_CACHEABLE_LENGTH`. */
  readonly code: 'BELOW_MINIMUM_CACHEABLE_LENGTH';
  /** The provider checked against. */
  readonly provider: CacheProvider;
  /** The model id as given. */
  readonly model: string;
  /** The segment whose prefix is too short. */
  readonly segment: CacheSegment;
  /** UTF-8 byte offset where the segment ends. */
  readonly byteOffset: number;
  /** Estimated tokens of the prompt up to the segment's end (o200k_base). */
  readonly estimatedTokens: number;
  /** The provider's documented minimum for the model. */
  readonly minimumTokens: number;
  /** True when the model was not in the table and the provider's largest figure was assumed. */
  readonly assumedMinimum: boolean;
  /** A sentence a person can act on. */
  readonly message: string;
};

function segmentOffset(prompt: AssembledPrefix, segment: CacheSegment): number {
  return prompt.cacheBreakpoints[CACHE_SEGMENTS.indexOf(segment)] as number;
}

function textUpTo(prompt: AssembledPrefix, segment: CacheSegment): string {
  const count = CACHE_SEGMENTS.indexOf(segment) + 2;
  return prompt.layers
    .slice(0, count)
    .map((layer) => layer.text)
    .join('');
}

function validateSegments(segments: readonly CacheSegment[]): CacheSegment[] {
  if (!Array.isArray(segments)) {
    throw new InvalidArgumentError({
      argument: 'breakpoints',
      message: 'breakpoints must be an array of "frozen", "role", "profile".',
    });
  }
  for (const segment of segments) {
    if (!CACHE_SEGMENTS.includes(segment)) {
      throw new InvalidArgumentError({
        argument: 'breakpoints',
        message: `Unknown cache segment ${JSON.stringify(segment)}: expected one of ${CACHE_SEGMENTS.join(', ')}.`,
      });
    }
  }
  return CACHE_SEGMENTS.filter((segment) => segments.includes(segment));
}

/**
 * Warnings for every segment in `segments` whose prefix (the prompt up to
 * the segment's end) is estimated below `model`'s minimum cacheable length.
 * The estimate uses o200k_base and counts the system prompt alone: tools or
 * messages placed before it by the provider only make the real prefix
 * longer.
 */
export function checkCacheableLengths({
  prompt,
  provider,
  model,
  segments = CACHE_SEGMENTS,
}: {
  /** An assembled prompt. */
  prompt: AssembledPrefix;
  /** The provider whose minimums apply. */
  provider: CacheProvider;
  /** The model id; selects the minimum. */
  model: string;
  /** Segments to check. Default: all three. */
  segments?: readonly CacheSegment[];
}): CacheLengthWarning[] {
  const { minimumTokens, assumed } = lookupMinimumCacheableTokens({
    provider,
    model,
  });
  const warnings: CacheLengthWarning[] = [];
  for (const segment of validateSegments(segments)) {
    const estimatedTokens = estimateTokens(textUpTo(prompt, segment));
    if (estimatedTokens >= minimumTokens) continue;
    warnings.push(
      Object.freeze({
        code: 'BELOW_MINIMUM_CACHEABLE_LENGTH',
        provider,
        model,
        segment,
        byteOffset: segmentOffset(prompt, segment),
        estimatedTokens,
        minimumTokens,
        assumedMinimum: assumed,
        message:
          `The ${segment} segment of the ${prompt.role} prompt is about ${estimatedTokens} tokens (${TOKEN_ENCODING} estimate), ` +
          `below the ${minimumTokens}-token minimum ${provider} caches for ${model}${assumed ? ' (model not in the table: largest documented minimum assumed)' : ''}: ` +
          'this breakpoint will not be cached unless tools or earlier content make the prefix longer.',
      }),
    );
  }
  return warnings;
}

/** An Anthropic `system` text block. */
export type AnthropicSystemTextBlock = {
  /** Always `text`. */
  type: 'text';
  /** A slice of the prompt, never empty. */
  text: string;
  /** Present on the blocks that end at a chosen breakpoint. */
  cache_control?: { type: 'ephemeral'; ttl?: '5m' | '1h' };
};

/** The result of {@link toAnthropicSystem}. */
export type AnthropicSystem = {
  /** The `system` parameter of a Messages API request. Block texts concatenate to the prompt exactly. */
  readonly system: AnthropicSystemTextBlock[];
  /** The segments that carry `cache_control`. */
  readonly breakpoints: readonly CacheSegment[];
  /** Breakpoints still free for the caller's tools and messages. */
  readonly remainingBreakpoints: number;
  /** Chosen segments estimated below the model's minimum cacheable length. */
  readonly warnings: readonly CacheLengthWarning[];
};

/**
 * Anthropic `system` blocks for `prompt`: one text block per cache segment
 * (layers 1+2, layer 3, layer 4), with `cache_control` on the blocks that end
 * at the chosen breakpoints. By default the frozen prefix and the whole
 * prompt are marked, which leaves 2 of Anthropic's 4 breakpoints per request
 * for the caller. Throws `TooManyCacheBreakpointsError` when the chosen
 * breakpoints plus `reserveForCaller` exceed 4.
 *
 * @example
 * const { system, warnings } = toAnthropicSystem({ prompt, model: 'claude-sonnet-4-5' });
 * // anthropic.messages.create({ model: 'claude-sonnet-4-5', system, messages, max_tokens: 1024 })
 */
export function toAnthropicSystem({
  prompt,
  model,
  breakpoints = ['frozen', 'profile'],
  reserveForCaller = 2,
  ttl,
}: {
  /** An assembled prompt. */
  prompt: AssembledPrefix;
  /** The model id; selects the minimum cacheable length for warnings. */
  model: string;
  /** Segments whose block gets `cache_control`. Default `['frozen', 'profile']`. */
  breakpoints?: readonly CacheSegment[];
  /** Breakpoints to leave free for the caller's own tools and messages. Default 2. */
  reserveForCaller?: number;
  /** Cache lifetime; omitted means the provider default (5 minutes). */
  ttl?: '5m' | '1h';
}): AnthropicSystem {
  const chosen = validateSegments(breakpoints);
  if (
    !Number.isInteger(reserveForCaller) ||
    reserveForCaller < 0 ||
    reserveForCaller > ANTHROPIC_MAX_CACHE_BREAKPOINTS
  ) {
    throw new InvalidArgumentError({
      argument: 'reserveForCaller',
      message: `reserveForCaller must be an integer from 0 to ${ANTHROPIC_MAX_CACHE_BREAKPOINTS}.`,
    });
  }
  if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') {
    throw new InvalidArgumentError({
      argument: 'ttl',
      message: 'ttl must be "5m" or "1h".',
    });
  }
  if (chosen.length + reserveForCaller > ANTHROPIC_MAX_CACHE_BREAKPOINTS) {
    throw new TooManyCacheBreakpointsError({
      requested: chosen.length + reserveForCaller,
      limit: ANTHROPIC_MAX_CACHE_BREAKPOINTS,
      reserved: reserveForCaller,
    });
  }
  const [layer1, layer2, layer3, layer4] = prompt.layers;
  const texts: Record<CacheSegment, string> = {
    frozen: layer1.text + layer2.text,
    role: layer3.text,
    profile: layer4.text,
  };
  const system = CACHE_SEGMENTS.map((segment): AnthropicSystemTextBlock => {
    const block: AnthropicSystemTextBlock = {
      type: 'text',
      text: texts[segment],
    };
    if (chosen.includes(segment)) {
      block.cache_control =
        ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl };
    }
    return block;
  });
  return Object.freeze({
    system,
    breakpoints: Object.freeze(chosen),
    remainingBreakpoints: ANTHROPIC_MAX_CACHE_BREAKPOINTS - chosen.length,
    warnings: Object.freeze(
      checkCacheableLengths({
        prompt,
        provider: 'anthropic',
        model,
        segments: chosen,
      }),
    ),
  });
}

/**
 * `heretek-<first 24 hex digits of the frozen prefix's SHA-256>`: the prompt
 * cache key of every role that shares the frozen prefix, for any role,
 * profile and session ({@link toOpenAIPromptCache}'s key without a scope,
 * without its length checks).
 */
export function frozenPromptCacheKey(
  prompt: Pick<AssembledPrefix, 'frozenPrefixSha256'>,
): string {
  return `heretek-${prompt.frozenPrefixSha256.slice(0, 24)}`;
}

/** The result of {@link toOpenAIPromptCache}. */
export type OpenAIPromptCache = {
  /** The system prompt, unchanged: send it first (as `instructions` or the first system/developer message). */
  readonly instructions: string;
  /** A `prompt_cache_key` derived from the frozen prefix fingerprint. */
  readonly promptCacheKey: string;
  /** The frozen prefix or the whole prompt estimated below 1024 tokens. */
  readonly warnings: readonly CacheLengthWarning[];
};

const SCOPE_PATTERN = /^[A-Za-z0-9-]{1,32}$/;

/**
 * The OpenAI request parts for `prompt`: the instructions and a
 * `prompt_cache_key` derived from the SHA-256 of layers 1+2, so every role
 * sharing the frozen prefix is routed to the same cache. Pass `scope` (for
 * instance the role name) to spread a high request rate over several keys.
 * Warns when the frozen prefix or the whole prompt is estimated below the
 * 1024-token minimum.
 *
 * @example
 * const { instructions, promptCacheKey } = toOpenAIPromptCache({ prompt, model: 'gpt-5' });
 * // openai.responses.create({ model: 'gpt-5', instructions, input, prompt_cache_key: promptCacheKey })
 */
export function toOpenAIPromptCache({
  prompt,
  model,
  scope,
}: {
  /** An assembled prompt. */
  prompt: AssembledPrefix;
  /** The model id; selects the minimum cacheable length for warnings. */
  model: string;
  /** Optional suffix of the key: 1-32 of `A-Z a-z 0-9 -`. */
  scope?: string;
}): OpenAIPromptCache {
  if (scope !== undefined && !SCOPE_PATTERN.test(scope)) {
    throw new InvalidArgumentError({
      argument: 'scope',
      message: 'scope must be 1-32 characters of A-Z, a-z, 0-9 and -.',
    });
  }
  const promptCacheKey = `${frozenPromptCacheKey(prompt)}${scope === undefined ? '' : `-${scope}`}`;
  return Object.freeze({
    instructions: prompt.systemPrompt,
    promptCacheKey,
    warnings: Object.freeze(
      checkCacheableLengths({
        prompt,
        provider: 'openai',
        model,
        segments: ['frozen', 'profile'],
      }),
    ),
  });
}

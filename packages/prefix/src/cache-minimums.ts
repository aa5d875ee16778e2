/**
 * Minimum cacheable prompt lengths per provider and model, as documented by
 * each provider. A prefix shorter than the minimum is processed without
 * caching and without an error, so a cache breakpoint placed there is
 * silently wasted. Values were read in the providers' documentation on
 * 2026-11-29; the README lists the sources. Update this table when the
 * providers change their figures.
 */
import { InvalidArgumentError } from './errors.js';

/** A provider with prompt caching. */
export type CacheProvider = 'anthropic' | 'openai' | 'gemini';

/** The providers in {@link MINIMUM_CACHEABLE_TOKENS}. */
export const CACHE_PROVIDERS: readonly CacheProvider[] = Object.freeze([
  'anthropic',
  'openai',
  'gemini',
]);

/** One row of the table: models of one provider sharing a minimum. */
export type MinimumCacheableLength = {
  /** The provider the row applies to. */
  readonly provider: CacheProvider;
  /**
   * Model id prefixes this row covers (lowercase, dots written as dashes).
   * A model id matches a prefix when it equals it or continues it with `-`;
   * the longest matching prefix wins. `*` covers every model of the provider
   * that no other row matches.
   */
  readonly models: readonly string[];
  /** Minimum number of tokens in the cached prefix. */
  readonly minimumTokens: number;
  /** Where the figure is documented. */
  readonly source: string;
  /** What to know about this figure, if anything. */
  readonly note?: string;
};

const ANTHROPIC_DOCS =
  'https://platform.claude.com/docs/en/build-with-claude/prompt-caching';
const OPENAI_DOCS =
  'https://developers.openai.com/api/docs/guides/prompt-caching';
const GEMINI_DOCS = 'https://ai.google.dev/gemini-api/docs/caching';

function row(
  provider: CacheProvider,
  minimumTokens: number,
  models: readonly string[],
  source: string,
  note?: string,
): MinimumCacheableLength {
  return Object.freeze({
    provider,
    models: Object.freeze([...models]),
    minimumTokens,
    source,
    ...(note === undefined ? {} : { note }),
  });
}

/** The documented minimum cacheable lengths. Frozen data. */
export const MINIMUM_CACHEABLE_TOKENS: readonly MinimumCacheableLength[] =
  Object.freeze([
    row(
      'anthropic',
      512,
      ['claude-opus-5', 'claude-fable-5', 'claude-mythos-5'],
      ANTHROPIC_DOCS,
    ),
    row(
      'anthropic',
      1024,
      [
        'claude-sonnet-5',
        'claude-opus-4-8',
        'claude-sonnet-4-6',
        'claude-sonnet-4-5',
        'claude-opus-4-1',
        'claude-opus-4',
        'claude-sonnet-4',
        'claude-sonnet-3-7',
        'claude-3-7-sonnet',
        'claude-3-5-sonnet',
        'claude-3-opus',
      ],
      ANTHROPIC_DOCS,
      'Claude Opus 4.8 lowered its minimum to 1024 (platform.claude.com, "What\'s new in Claude Opus 4.8").',
    ),
    row(
      'anthropic',
      4096,
      ['claude-opus-4-7'],
      ANTHROPIC_DOCS,
      'Published figures for Opus 4.7 differ (2048 and 4096); the larger one is used so a short prefix is never assumed cacheable.',
    ),
    row(
      'anthropic',
      4096,
      ['claude-opus-4-6', 'claude-opus-4-5', 'claude-haiku-4-5'],
      ANTHROPIC_DOCS,
    ),
    row(
      'anthropic',
      2048,
      [
        'claude-haiku-3-5',
        'claude-3-5-haiku',
        'claude-haiku-3',
        'claude-3-haiku',
      ],
      ANTHROPIC_DOCS,
    ),
    row(
      'anthropic',
      4096,
      ['*'],
      ANTHROPIC_DOCS,
      'Model not in the table: the largest documented Anthropic minimum is assumed.',
    ),
    row(
      'openai',
      1024,
      ['*'],
      OPENAI_DOCS,
      'Caching applies automatically to prompts of 1024 tokens or more on gpt-4o and newer models; hits grow in 128-token steps.',
    ),
    row('gemini', 2048, ['gemini-2-5-flash', 'gemini-2-5-pro'], GEMINI_DOCS),
    row(
      'gemini',
      4096,
      [
        'gemini-3-1-pro',
        'gemini-3-5-flash',
        'gemini-3-6-flash',
        'gemini-3-7-flash',
        'gemini-3-8-flash',
        'gemini-4',
      ],
      GEMINI_DOCS,
    ),
    row(
      'gemini',
      4096,
      ['*'],
      GEMINI_DOCS,
      'Model not in the table: the largest documented Gemini minimum is assumed.',
    ),
  ]);

/** Normalise a model id for lookup: lowercase, dots and underscores as dashes, `models/` and provider prefixes dropped. */
function normalizeModelId(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^(models\/|anthropic\/|openai\/|google\/|gemini\/)/, '')
    .replace(/[._]/g, '-');
}

/** The result of {@link lookupMinimumCacheableTokens}. */
export type MinimumCacheableLookup = {
  /** Minimum number of tokens in a cached prefix. */
  readonly minimumTokens: number;
  /** The table row used. */
  readonly entry: MinimumCacheableLength;
  /** True when the model is not in the table and the provider's fallback row was used. */
  readonly assumed: boolean;
};

/**
 * The minimum cacheable prefix length for `model` of `provider`.
 *
 * @example
 * lookupMinimumCacheableTokens({ provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' }).minimumTokens // 1024
 */
export function lookupMinimumCacheableTokens({
  provider,
  model,
}: {
  provider: CacheProvider;
  model: string;
}): MinimumCacheableLookup {
  if (!CACHE_PROVIDERS.includes(provider)) {
    throw new InvalidArgumentError({
      argument: 'provider',
      message: `Unknown cache provider ${JSON.stringify(provider)}: expected one of ${CACHE_PROVIDERS.join(', ')}.`,
    });
  }
  if (typeof model !== 'string' || model.trim() === '') {
    throw new InvalidArgumentError({
      argument: 'model',
      message: 'model must be a non-empty model id, e.g. "claude-sonnet-4-5".',
    });
  }
  const id = normalizeModelId(model);
  let best: { entry: MinimumCacheableLength; length: number } | undefined;
  let fallback: MinimumCacheableLength | undefined;
  for (const entry of MINIMUM_CACHEABLE_TOKENS) {
    if (entry.provider !== provider) continue;
    for (const prefix of entry.models) {
      if (prefix === '*') {
        fallback = entry;
      } else if (
        (id === prefix || id.startsWith(`${prefix}-`)) &&
        (best === undefined || prefix.length > best.length)
      ) {
        best = { entry, length: prefix.length };
      }
    }
  }
  if (best !== undefined)
    return {
      minimumTokens: best.entry.minimumTokens,
      entry: best.entry,
      assumed: false,
    };
  if (fallback === undefined)
    throw new Error(`No fallback row for ${provider}`);
  return {
    minimumTokens: fallback.minimumTokens,
    entry: fallback,
    assumed: provider !== 'openai',
  };
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_MAX_CACHE_BREAKPOINTS } from './adapters.js';
import { MINIMUM_CACHEABLE_TOKENS } from './cache-minimums.js';
import { estimateTokens } from './tokens.js';
import {
  InvalidArgumentError,
  PROFILE_NAMES,
  ROLE_NAMES,
  TooManyCacheBreakpointsError,
  assemblePrefixCachedPrompt,
  checkCacheableLengths,
  frozenPromptCacheKey,
  lookupMinimumCacheableTokens,
  toAnthropicSystem,
  toOpenAIPromptCache,
} from './index.js';
import type { CacheSegment } from './index.js';
import { REPO_ROOT, useTempWorkspaces } from './__fixtures__/workspace.js';

const workspaces = useTempWorkspaces();

const assemble = (
  role: string,
  activeProfile = 'android',
  workspaceRoot = REPO_ROOT,
) => assemblePrefixCachedPrompt({ role, workspaceRoot, activeProfile });

/** A workspace whose prompt sources are one short line each. */
function tinyWorkspace(): string {
  const root = workspaces.copy();
  for (const file of [
    'shared/01-context.md',
    'shared/02-protocol.md',
    ...ROLE_NAMES.map((role) => `${role}.md`),
  ]) {
    writeFileSync(
      join(root, 'roles', ...file.split('/')),
      `# ${file}\n\nShort.\n`,
    );
  }
  return root;
}

describe('frozen prefix size', () => {
  // At least the 1024 tokens OpenAI and most Anthropic models need to cache it on its
  // own; under 2000 so every agent on every turn pays for no more than the protocol
  // needs (the README lists which models cache it and which do not).
  it('sizes layers 1+2 for caching: at least 1024 and under 2000 o200k tokens', () => {
    const prompt = assemble('director');
    const tokens = estimateTokens(
      prompt.layers[0].text + prompt.layers[1].text,
    );
    expect(tokens).toBeGreaterThanOrEqual(1024);
    expect(tokens).toBeLessThan(2000);
  });
});

describe('toAnthropicSystem', () => {
  it('returns system blocks that concatenate to the prompt exactly, marked where the chosen layers end', () => {
    const segmentSets: CacheSegment[][] = [
      [],
      ['frozen'],
      ['frozen', 'profile'],
      ['role'],
      ['frozen', 'role', 'profile'],
    ];
    for (const role of ROLE_NAMES) {
      const prompt = assemble(role);
      for (const breakpoints of segmentSets) {
        const reserveForCaller =
          ANTHROPIC_MAX_CACHE_BREAKPOINTS - breakpoints.length;
        const { system, remainingBreakpoints } = toAnthropicSystem({
          prompt,
          model: 'claude-sonnet-4-5',
          breakpoints,
          reserveForCaller,
        });
        expect(system.map((block) => block.text).join('')).toBe(
          prompt.systemPrompt,
        );
        expect(
          system.every(
            (block) => block.type === 'text' && block.text.length > 0,
          ),
        ).toBe(true);
        let end = 0;
        const markedEnds: number[] = [];
        for (const block of system) {
          end += Buffer.byteLength(block.text, 'utf8');
          if (block.cache_control !== undefined) {
            expect(block.cache_control).toEqual({ type: 'ephemeral' });
            markedEnds.push(end);
          }
        }
        const expectedEnds = breakpoints
          .map(
            (segment) =>
              prompt.cacheBreakpoints[
                ['frozen', 'role', 'profile'].indexOf(segment)
              ],
          )
          .sort((a, b) => (a as number) - (b as number));
        expect(markedEnds).toEqual(expectedEnds);
        expect(markedEnds.length).toBeLessThanOrEqual(
          ANTHROPIC_MAX_CACHE_BREAKPOINTS,
        );
        expect(remainingBreakpoints).toBe(
          ANTHROPIC_MAX_CACHE_BREAKPOINTS - breakpoints.length,
        );
      }
    }
  });

  it('marks the frozen prefix and the whole prompt by default, leaving 2 breakpoints for the caller', () => {
    const { system, breakpoints, remainingBreakpoints } = toAnthropicSystem({
      prompt: assemble('qa-adversary'),
      model: 'claude-sonnet-4-5',
      ttl: '1h',
    });
    expect(breakpoints).toEqual(['frozen', 'profile']);
    expect(remainingBreakpoints).toBe(2);
    expect(system.map((block) => block.cache_control)).toEqual([
      { type: 'ephemeral', ttl: '1h' },
      undefined,
      { type: 'ephemeral', ttl: '1h' },
    ]);
    // The first block is the same for every role and profile: one cache entry serves all of them.
    const first = system[0]?.text;
    for (const role of ROLE_NAMES) {
      for (const profile of PROFILE_NAMES) {
        expect(
          toAnthropicSystem({
            prompt: assemble(role, profile),
            model: 'claude-sonnet-4-5',
          }).system[0]?.text,
        ).toBe(first);
      }
    }
  });

  it('never exceeds 4 breakpoints with the caller reservation', () => {
    const prompt = assemble('director');
    expect(() =>
      toAnthropicSystem({
        prompt,
        model: 'claude-sonnet-4-5',
        breakpoints: ['frozen', 'role', 'profile'],
      }),
    ).toThrow(TooManyCacheBreakpointsError);
    expect(() =>
      toAnthropicSystem({
        prompt,
        model: 'claude-sonnet-4-5',
        breakpoints: ['frozen', 'role', 'profile'],
        reserveForCaller: 1,
      }),
    ).not.toThrow();
    expect(() =>
      toAnthropicSystem({
        prompt,
        model: 'claude-sonnet-4-5',
        reserveForCaller: 5,
      }),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      toAnthropicSystem({
        prompt,
        model: 'claude-sonnet-4-5',
        breakpoints: ['everything' as CacheSegment],
      }),
    ).toThrow(/Unknown cache segment "everything"/);
    // Duplicates count once.
    expect(
      toAnthropicSystem({
        prompt,
        model: 'claude-sonnet-4-5',
        breakpoints: ['frozen', 'frozen'],
      }).system.filter((block) => block.cache_control),
    ).toHaveLength(1);
  });

  it('warns when a cached segment is estimated below the model minimum', () => {
    const prompt = assemble('staff-backend');
    // Layers 1+2 are about 1.8k tokens: enough for 1024-token models, short of 4096-token ones.
    expect(
      toAnthropicSystem({ prompt, model: 'claude-sonnet-4-5-20250929' })
        .warnings,
    ).toEqual([]);
    const warnings = toAnthropicSystem({
      prompt,
      model: 'claude-opus-4-5',
    }).warnings;
    expect(warnings.map((warning) => warning.segment)).toEqual([
      'frozen',
      'profile',
    ]);
    for (const warning of warnings) {
      expect(warning.code).toBe('BELOW_MINIMUM_CACHEABLE_LENGTH');
      expect(warning.minimumTokens).toBe(4096);
      expect(warning.estimatedTokens).toBeGreaterThan(1024);
      expect(warning.estimatedTokens).toBeLessThan(4096);
      expect(warning.message).toContain('claude-opus-4-5');
    }
    expect(warnings[0]?.byteOffset).toBe(prompt.frozenPrefixBytes);

    const tiny = assemble('staff-backend', 'core', tinyWorkspace());
    const tinyWarnings = toAnthropicSystem({
      prompt: tiny,
      model: 'claude-sonnet-4-5',
    }).warnings;
    expect(
      tinyWarnings.map((warning) => [warning.segment, warning.minimumTokens]),
    ).toEqual([
      ['frozen', 1024],
      ['profile', 1024],
    ]);
    expect(
      toAnthropicSystem({ prompt: tiny, model: 'claude-opus-5' }).warnings.map(
        (w) => w.minimumTokens,
      ),
    ).toEqual([512, 512]);
  });
});

describe('toOpenAIPromptCache', () => {
  it('derives one prompt_cache_key from the frozen prefix fingerprint for every role and profile', () => {
    const keys = new Set<string>();
    for (const role of ROLE_NAMES) {
      for (const profile of PROFILE_NAMES) {
        const prompt = assemble(role, profile);
        const result = toOpenAIPromptCache({ prompt, model: 'gpt-5' });
        expect(result.instructions).toBe(prompt.systemPrompt);
        expect(result.promptCacheKey).toBe(
          `heretek-${prompt.frozenPrefixSha256.slice(0, 24)}`,
        );
        expect(frozenPromptCacheKey(prompt)).toBe(result.promptCacheKey);
        keys.add(result.promptCacheKey);
      }
    }
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    expect(key).toMatch(/^heretek-[0-9a-f]{24}$/);
    expect(
      toOpenAIPromptCache({
        prompt: assemble('director'),
        model: 'gpt-5',
        scope: 'director',
      }).promptCacheKey,
    ).toBe(`${key}-director`);
    expect(() =>
      toOpenAIPromptCache({
        prompt: assemble('director'),
        model: 'gpt-5',
        scope: 'a b',
      }),
    ).toThrow(InvalidArgumentError);
  });

  it('changes the key when the frozen prefix drifts, not when a role changes', () => {
    const root = workspaces.copy();
    const before = toOpenAIPromptCache({
      prompt: assemble('director', 'core', root),
      model: 'gpt-4o',
    }).promptCacheKey;
    writeFileSync(
      join(root, 'roles', 'director.md'),
      '# Role: director\n\nPlan.\n',
    );
    expect(
      toOpenAIPromptCache({
        prompt: assemble('director', 'core', root),
        model: 'gpt-4o',
      }).promptCacheKey,
    ).toBe(before);
    writeFileSync(
      join(root, 'roles', 'shared', '01-context.md'),
      '# Shared context\n\nChanged.\n',
    );
    expect(
      toOpenAIPromptCache({
        prompt: assemble('director', 'core', root),
        model: 'gpt-4o',
      }).promptCacheKey,
    ).not.toBe(before);
  });

  it('warns below the 1024-token minimum only', () => {
    expect(
      toOpenAIPromptCache({ prompt: assemble('director'), model: 'gpt-5' })
        .warnings,
    ).toEqual([]);
    const tiny = toOpenAIPromptCache({
      prompt: assemble('director', 'core', tinyWorkspace()),
      model: 'gpt-5',
    });
    expect(
      tiny.warnings.map((warning) => [
        warning.provider,
        warning.segment,
        warning.minimumTokens,
      ]),
    ).toEqual([
      ['openai', 'frozen', 1024],
      ['openai', 'profile', 1024],
    ]);
  });
});

describe('minimum cacheable lengths', () => {
  it.each([
    ['anthropic', 'claude-sonnet-4-5-20250929', 1024, false],
    ['anthropic', 'claude-sonnet-4.6', 1024, false],
    ['anthropic', 'claude-opus-4-20250514', 1024, false],
    ['anthropic', 'claude-opus-4-1-20250805', 1024, false],
    ['anthropic', 'claude-opus-4-5-20251101', 4096, false],
    ['anthropic', 'claude-opus-4-6', 4096, false],
    ['anthropic', 'claude-opus-4-8', 1024, false],
    ['anthropic', 'claude-haiku-4-5-20251001', 4096, false],
    ['anthropic', 'claude-3-5-haiku-20241022', 2048, false],
    ['anthropic', 'claude-opus-5', 512, false],
    ['anthropic', 'anthropic/claude-sonnet-5', 1024, false],
    ['anthropic', 'claude-something-new', 4096, true],
    ['openai', 'gpt-4o-2024-08-06', 1024, false],
    ['openai', 'gpt-5.6', 1024, false],
    ['gemini', 'gemini-2.5-flash', 2048, false],
    ['gemini', 'models/gemini-2.5-pro', 2048, false],
    ['gemini', 'gemini-3.5-flash', 4096, false],
    ['gemini', 'gemini-9-ultra', 4096, true],
  ] as const)(
    '%s %s -> %i tokens',
    (provider, model, minimumTokens, assumed) => {
      const result = lookupMinimumCacheableTokens({ provider, model });
      expect(result.minimumTokens).toBe(minimumTokens);
      expect(result.assumed).toBe(assumed);
      expect(result.entry.source).toMatch(/^https:\/\//);
    },
  );

  it('documents a source for every row and covers every provider with a fallback', () => {
    for (const entry of MINIMUM_CACHEABLE_TOKENS) {
      expect(entry.minimumTokens).toBeGreaterThan(0);
      expect(entry.source).toMatch(
        /^https:\/\/(platform\.claude\.com|developers\.openai\.com|ai\.google\.dev)\//,
      );
    }
    for (const provider of ['anthropic', 'openai', 'gemini']) {
      expect(
        MINIMUM_CACHEABLE_TOKENS.some(
          (entry) => entry.provider === provider && entry.models.includes('*'),
        ),
      ).toBe(true);
    }
    expect(() =>
      lookupMinimumCacheableTokens({
        provider: 'mistral' as 'openai',
        model: 'x',
      }),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      lookupMinimumCacheableTokens({ provider: 'openai', model: ' ' }),
    ).toThrow(/model must be/);
  });

  it('checks any provider through checkCacheableLengths, e.g. Gemini', () => {
    const prompt = assemble('security-researcher', 'appsec');
    const warnings = checkCacheableLengths({
      prompt,
      provider: 'gemini',
      model: 'gemini-2.5-flash',
    });
    const layers = prompt.layers.map((layer) => layer.text);
    const expected = (['frozen', 'role', 'profile'] as const).filter(
      (_segment, index) =>
        estimateTokens(layers.slice(0, index + 2).join('')) < 2048,
    );
    expect(expected[0]).toBe('frozen'); // about 1.8k tokens, below Gemini 2.5's 2048
    expect(warnings.map((warning) => warning.segment)).toEqual(expected);
    expect(
      checkCacheableLengths({
        prompt,
        provider: 'gemini',
        model: 'gemini-3.5-flash',
      }),
    ).toHaveLength(3);
  });
});

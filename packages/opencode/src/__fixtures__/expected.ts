/**
 * Test fixture: what the tests of both OpenCode lines expect of a role
 * agent's request (the frozen prefix, the prompt cache key).
 */
import {
  assemblePrefixCachedPrompt,
  toOpenAIPromptCache,
} from '@heretek/prefix';
import { REPOSITORY_ROOT } from './run-opencode.js';

const director = assemblePrefixCachedPrompt({
  role: 'director',
  workspaceRoot: REPOSITORY_ROOT,
  activeProfile: 'core',
});

/** Layers 1+2 of the role prompts, byte for byte: system block 0 of every role agent's request. */
export const FROZEN = Buffer.from(director.systemPrompt)
  .subarray(0, director.frozenPrefixBytes)
  .toString('utf8');

/** The prompt cache key every role agent's request carries. */
export const CACHE_KEY = toOpenAIPromptCache({
  prompt: director,
  model: 'gpt-5',
}).promptCacheKey;

/**
 * Test fixture: what the tests of both OpenCode lines expect of a role
 * agent's request (the frozen prefix, the prompt cache key) and the mutating
 * backend tool the role gate is tried with.
 */
import {
  assemblePrefixCachedPrompt,
  toOpenAIPromptCache,
} from '@heretek/prefix';
import type { FixtureTool } from '#broker-fixtures/mcp-backends.js';
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

/** A mutating Ghidra tool, served by the backend `ghidra`. */
export const RENAME_TOOL: FixtureTool = {
  name: 'rename_function',
  description: 'Rename a function in the Ghidra project database.',
  inputSchema: {
    type: 'object',
    properties: {
      old_name: { type: 'string' },
      new_name: { type: 'string' },
    },
    required: ['old_name', 'new_name'],
  },
};

/** The meta-tool call of {@link RENAME_TOOL} through the broker. */
export const RENAME = {
  name: 'ghidra_rename_function',
  arguments: { old_name: 'FUN_1000', new_name: 'main' },
};

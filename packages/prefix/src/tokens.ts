/**
 * Token estimates with the o200k_base encoding (js-tiktoken). The rank table
 * is large, so it is loaded on the first estimate, not when the package is
 * imported (the broker imports this package for the role table alone).
 */
import { createRequire } from 'node:module';
import { Tiktoken } from 'js-tiktoken/lite';
import type { TiktokenBPE } from 'js-tiktoken/lite';

let encoder: Tiktoken | undefined;

function getEncoder(): Tiktoken {
  if (encoder === undefined) {
    const require = createRequire(import.meta.url);
    const ranks = require('js-tiktoken/ranks/o200k_base') as
      TiktokenBPE | { default: TiktokenBPE };
    encoder = new Tiktoken('default' in ranks ? ranks.default : ranks);
  }
  return encoder;
}

/** The name of the encoding used by {@link estimateTokens}. */
export const TOKEN_ENCODING = 'o200k_base';

/**
 * Estimated token count of `text` with the o200k_base encoding (the
 * tokenizer of OpenAI's GPT-4o and later models). Other providers tokenize
 * differently, so for Anthropic and Gemini this is an estimate.
 */
export function estimateTokens(text: string): number {
  return getEncoder().encode(text).length;
}

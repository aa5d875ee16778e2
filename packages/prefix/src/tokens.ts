/**
 * Token estimates with the o200k_base encoding (js-tiktoken, an optional
 * peer dependency). The encoder and its rank table are loaded on the first
 * estimate, not when the package is imported.
 */
import type * as JsTiktokenLite from 'js-tiktoken/lite';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import { requireOptionalPeer, TOKENIZER_PEER } from './optional-peer.js';

let encoder: Tiktoken | undefined;

function getEncoder(): Tiktoken {
  if (encoder === undefined) {
    const lite = requireOptionalPeer<typeof JsTiktokenLite>(
      'js-tiktoken/lite',
      TOKENIZER_PEER,
    );
    const ranks = requireOptionalPeer<TiktokenBPE | { default: TiktokenBPE }>(
      'js-tiktoken/ranks/o200k_base',
      TOKENIZER_PEER,
    );
    encoder = new lite.Tiktoken('default' in ranks ? ranks.default : ranks);
  }
  return encoder;
}

/** The name of the encoding used by {@link estimateTokens}. */
export const TOKEN_ENCODING = 'o200k_base';

/**
 * Estimated token count of `text` with the o200k_base encoding (the
 * tokenizer of OpenAI's GPT-4o and later models). Other providers tokenize
 * differently, so for Anthropic and Gemini this is an estimate. Throws a
 * `PrefixError` with code `OPTIONAL_DEPENDENCY_MISSING` when js-tiktoken is
 * not installed.
 */
export function estimateTokens(text: string): number {
  return getEncoder().encode(text).length;
}

import { getEncoding } from 'js-tiktoken';

/** The o200k_base token budget of the server instructions, whatever the backend table. */
export const INSTRUCTIONS_TOKEN_BUDGET = 500;

const encoding = getEncoding('o200k_base');

/** The o200k_base tokens of `text`. */
export const tokens = (text: string): number => encoding.encode(text).length;

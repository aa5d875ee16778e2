import type { SearchHit } from './types.js';

/** Longest one-line description kept in a hit, in characters. */
export const MAX_HIT_DESCRIPTION_CHARS = 160;

/**
 * Collapses a description to one line and trims it at a word boundary to at most `maxChars`
 * characters (an ellipsis marks the cut).
 */
export function compactDescription(options: {
  description: string;
  maxChars?: number;
}): string {
  const maxChars = Math.max(8, options.maxChars ?? MAX_HIT_DESCRIPTION_CHARS);
  const line = options.description.replace(/\s+/g, ' ').trim();
  const characters = Array.from(line);
  if (characters.length <= maxChars) return line;
  const head = characters.slice(0, maxChars - 1).join('');
  const boundary = head.search(/\s\S*$/);
  const cut = boundary > maxChars / 2 ? head.slice(0, boundary) : head;
  return `${cut.replace(/[\s,;:.-]+$/, '')}…`;
}

/**
 * One compact line for an agent: `name [read-only|mutating] - description`.
 *
 * @example
 * ```ts
 * renderHit({ name: 'adb_tap', target: 'adb', description: 'Tap the screen', mutating: true, score: 3 });
 * // 'adb_tap [mutating] - Tap the screen'
 * ```
 */
export function renderHit(hit: SearchHit): string {
  const flag = hit.mutating ? 'mutating' : 'read-only';
  const description = compactDescription({ description: hit.description });
  return description
    ? `${hit.name} [${flag}] - ${description}`
    : `${hit.name} [${flag}]`;
}

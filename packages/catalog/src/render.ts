import type { SearchHit } from './types.js';

/** Longest one-line description kept in a hit, in code points. */
const MAX_HIT_DESCRIPTION_CHARS = 160;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Collapses a description to one line and trims it to at most `maxChars` code points
 * (default 160): at a word boundary when one is in the second half, and never inside a
 * grapheme (an emoji sequence, a letter with its combining marks or an Indic cluster stays
 * whole). An ellipsis marks the cut.
 */
export function compactDescription(options: {
  description: string;
  maxChars?: number;
}): string {
  const maxChars = Math.max(8, options.maxChars ?? MAX_HIT_DESCRIPTION_CHARS);
  const line = options.description.replace(/\s+/g, ' ').trim();
  if (line.length <= maxChars || Array.from(line).length <= maxChars)
    return line;
  let head = '';
  let used = 0;
  for (const { segment } of graphemes.segment(line)) {
    const size = Array.from(segment).length;
    if (used + size > maxChars - 1) break;
    head += segment;
    used += size;
  }
  const boundary = head.search(/\s\S*$/u);
  const cut = boundary > head.length / 2 ? head.slice(0, boundary) : head;
  return `${cut.replace(/[\s,;:.-]+$/u, '')}…`;
}

/**
 * One compact line for an agent: `name [read-only|mutating] - description`, the
 * description cut by {@link compactDescription}, then `marks` (if any), each after a space.
 * Takes a search hit, or any tool with a name, a description and the `mutating` flag.
 *
 * @example
 * ```ts
 * renderHit({ name: 'adb_tap', description: 'Tap the screen', mutating: true });
 * // 'adb_tap [mutating] - Tap the screen'
 * renderHit({ name: 'adb_tap', description: 'Tap the screen', mutating: true }, ['[changed]']);
 * // 'adb_tap [mutating] - Tap the screen [changed]'
 * ```
 */
export function renderHit(
  hit: Pick<SearchHit, 'name' | 'mutating' | 'description'> &
    Partial<SearchHit>,
  marks: readonly string[] = [],
): string {
  const flag = hit.mutating ? 'mutating' : 'read-only';
  const description = compactDescription({ description: hit.description });
  const head = `${hit.name} [${flag}]`;
  return [description ? `${head} - ${description}` : head, ...marks].join(' ');
}

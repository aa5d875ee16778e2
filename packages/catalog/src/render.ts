import type { SearchHit } from './types.js';

/** Longest one-line description kept in a hit, in code points. */
const MAX_HIT_DESCRIPTION_CHARS = 160;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The code-unit index after the first `count` code points of `text` (`undefined`: at most `count + 1`, nothing to cut). */
function cutIndex(text: string, count: number): number | undefined {
  let index = 0;
  for (let points = 0; points < count && index < text.length; points += 1) {
    const unit = text.charCodeAt(index);
    index += unit >= 0xd800 && unit <= 0xdbff ? 2 : 1;
  }
  const rest = text.length - index;
  if (rest <= 1) return undefined;
  if (rest === 2) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) return undefined;
  }
  return index;
}

/**
 * A description on one line, cut to at most `maxChars` code points with an ellipsis: at a word
 * boundary in the second half if any, never inside a grapheme (emoji sequences, combining marks).
 */
export function compactDescription(
  description: string,
  maxChars = MAX_HIT_DESCRIPTION_CHARS,
): string {
  const line = description.replace(/\s+/g, ' ').trim();
  if (line.length <= maxChars) return line;
  let end = cutIndex(line, maxChars - 1);
  if (end === undefined) return line;
  // Between two ASCII characters (no CR LF after the collapse) there is always a grapheme
  // boundary; anywhere else, step back to the start of the grapheme the cut falls in.
  if (line.charCodeAt(end - 1) >= 0x80 || line.charCodeAt(end) >= 0x80) {
    const grapheme = graphemes.segment(line).containing(end);
    if (grapheme !== undefined && grapheme.index < end) end = grapheme.index;
  }
  const head = line.slice(0, end);
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
  const description = compactDescription(hit.description);
  const head = `${hit.name} [${flag}]`;
  return [description ? `${head} - ${description}` : head, ...marks].join(' ');
}

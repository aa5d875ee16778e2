/**
 * Cleaning of tool descriptions before they reach an agent.
 *
 * The rule, applied code point by code point:
 *
 * - **Tag characters** U+E0000-U+E007F are always removed. They render as
 *   nothing and spell ASCII ("ASCII smuggling"); the spelled text is reported
 *   so the log can show it. (Emoji subdivision flags such as England's use
 *   them too; such a flag shows as a plain black flag.)
 * - **Bidi controls** are always removed: U+061C, U+200E, U+200F,
 *   U+202A-U+202E, U+2066-U+2069. They reorder what a person sees without
 *   changing what a model reads.
 * - **Zero-width characters** U+200B, U+2060, U+FEFF, U+180E are removed.
 *   U+200C (ZWNJ) and U+200D (ZWJ) are kept only where a script needs them:
 *   between two letters or marks of a joining script (Arabic, Syriac, Thaana,
 *   N'Ko, Mongolian, the Indic scripts, Sinhala, Tibetan, Myanmar, Khmer and a
 *   few more; see `JOINING_SCRIPT`), and ZWJ also between two emoji (an emoji,
 *   optionally followed by a skin-tone modifier or U+FE0F, then ZWJ, then an
 *   emoji). Anywhere else they are removed.
 * - **Controls**: C0 controls except tab and line feed, DEL and the C1 controls
 *   U+0080-U+009F are removed. CR LF and a lone CR become LF; U+2028 and
 *   U+2029 become LF (not counted as removals).
 * - **Variation selectors**: one of U+FE00-U+FE0F directly after a visible
 *   character is kept (emoji and text presentation); any further one in a row,
 *   or one with nothing to select, is removed. U+E0100-U+E01EF are kept only
 *   directly after a Han ideograph, one at a time. Runs of selectors are how
 *   bytes are smuggled in "invisible" text.
 * - **Fillers** that render blank: U+115F, U+1160, U+3164, U+FFA0 are removed.
 * - **Other format characters** (`\p{Cf}`, e.g. soft hyphen U+00AD, invisible
 *   math operators U+2061-U+2064, interlinear annotations U+FFF9-U+FFFB) are
 *   removed, except the visible prepended concatenation marks (U+0600-U+0605,
 *   U+06DD, U+070F, U+0890, U+0891, U+08E2, U+110BD, U+110CD) and the Egyptian
 *   hieroglyph format controls U+13430-U+1345F next to a hieroglyph, which
 *   those scripts need.
 *
 * Everything else, including ordinary spaces and private-use characters, is
 * left as it is.
 */

/** A class of removed characters, as named in the report and the log line. */
export type HiddenCharacterClass =
  | 'tag'
  | 'bidi'
  | 'zero-width'
  | 'control'
  | 'variation-selector'
  | 'filler'
  | 'format';

/** What {@link sanitizeDescription} returns. */
export type SanitizedDescription = {
  /** The cleaned text: safe to show an agent. */
  text: string;
  /** How many code points were removed (0 when the text was clean). */
  removed: number;
  /** Removed code points per class. */
  classes: Partial<Record<HiddenCharacterClass, number>>;
  /** The ASCII spelled by removed tag characters (`''` when there were none). */
  tagText: string;
};

export const JOINING_SCRIPT =
  /[\p{Script_Extensions=Arabic}\p{Script_Extensions=Syriac}\p{Script_Extensions=Thaana}\p{Script_Extensions=Nko}\p{Script_Extensions=Mongolian}\p{Script_Extensions=Devanagari}\p{Script_Extensions=Bengali}\p{Script_Extensions=Gurmukhi}\p{Script_Extensions=Gujarati}\p{Script_Extensions=Oriya}\p{Script_Extensions=Tamil}\p{Script_Extensions=Telugu}\p{Script_Extensions=Kannada}\p{Script_Extensions=Malayalam}\p{Script_Extensions=Sinhala}\p{Script_Extensions=Tibetan}\p{Script_Extensions=Myanmar}\p{Script_Extensions=Khmer}\p{Script_Extensions=Lao}\p{Script_Extensions=Thai}\p{Script_Extensions=Balinese}\p{Script_Extensions=Javanese}\p{Script_Extensions=Phags_Pa}\p{Script_Extensions=Manichaean}\p{Script_Extensions=Mandaic}]/u;
export const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
export const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
export const EMOJI_MODIFIER = /\p{Emoji_Modifier}/u;
export const HAN = /\p{Script=Han}/u;
export const EGYPTIAN = /\p{Script=Egyptian_Hieroglyphs}/u;
export const FORMAT = /\p{Cf}/u;
export const VISIBLE_FORMAT = new Set([
  0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x6dd, 0x70f, 0x890, 0x891, 0x8e2,
  0x110bd, 0x110cd,
]);
export const BIDI = new Set([
  0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067,
  0x2068, 0x2069,
]);
export const ZERO_WIDTH = new Set([0x200b, 0x2060, 0xfeff, 0x180e]);
export const FILLERS = new Set([0x115f, 0x1160, 0x3164, 0xffa0]);

/**
 * Any character the rule might remove or rewrite: text without one is
 * returned as is, and in other text only these are looked at one by one.
 * Global: use it with `search`, `matchAll` and `replace`, which ignore its
 * `lastIndex`.
 */
// Control characters and lone variation selectors are exactly what this class looks for.
const SUSPECT =
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\p{Cf}\u0000-\u0008\u000B-\u001F\u007F-\u009F\u115F\u1160\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u2028\u2029]/gu;

function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

function joinsScript(char: string | undefined): boolean {
  return (
    char !== undefined && LETTER_OR_MARK.test(char) && JOINING_SCRIPT.test(char)
  );
}

/** Whether the kept text ends in an emoji a ZWJ may follow: pictograph, optionally + modifier or FE0F. */
function endsEmoji(
  last: string | undefined,
  beforeLast: string | undefined,
): boolean {
  const char =
    last !== undefined && (last === '\uFE0F' || EMOJI_MODIFIER.test(last))
      ? beforeLast
      : last;
  return char !== undefined && PICTOGRAPHIC.test(char);
}

/**
 * The class of a suspect character the rule removes, or `undefined` when it
 * stays: `last` and `beforeLast` are the last two characters kept so far,
 * `next` the character after it in the input.
 */
function removalClass(
  char: string,
  last: string | undefined,
  beforeLast: string | undefined,
  next: string | undefined,
): HiddenCharacterClass | undefined {
  const cp = char.codePointAt(0) as number;
  if (cp >= 0xe0000 && cp <= 0xe007f) return 'tag';
  if (BIDI.has(cp)) return 'bidi';
  if (ZERO_WIDTH.has(cp)) return 'zero-width';
  if (cp === 0x200c || cp === 0x200d) {
    const scriptJoin = joinsScript(last) && joinsScript(next);
    const emojiJoin =
      cp === 0x200d &&
      endsEmoji(last, beforeLast) &&
      next !== undefined &&
      PICTOGRAPHIC.test(next);
    return scriptJoin || emojiJoin ? undefined : 'zero-width';
  }
  if ((cp < 0x20 && cp !== 0x09 && cp !== 0x0a) || (cp >= 0x7f && cp <= 0x9f))
    return 'control';
  if (isVariationSelector(cp)) {
    const selectable =
      last !== undefined &&
      !isVariationSelector(last.codePointAt(0) as number) &&
      !/\s/u.test(last);
    const fits =
      cp >= 0xe0100 ? selectable && HAN.test(last ?? '') : selectable;
    return fits ? undefined : 'variation-selector';
  }
  if (FILLERS.has(cp)) return 'filler';
  if (FORMAT.test(char)) {
    const egyptian =
      cp >= 0x13430 &&
      cp <= 0x1345f &&
      (EGYPTIAN.test(last ?? '') || EGYPTIAN.test(next ?? ''));
    return VISIBLE_FORMAT.has(cp) || egyptian ? undefined : 'format';
  }
  return undefined;
}

/**
 * Removes invisible and control characters from a description by the rule in
 * this module's header, and reports what it removed. Only the suspect
 * characters are looked at one by one; the text between them is copied as a
 * whole, so the cost follows the number of suspect characters, not the
 * length of the text.
 *
 * @example
 * ```ts
 * sanitizeDescription({ text: 'Adds numbers.\u{E0049}\u{E0067}' });
 * // { text: 'Adds numbers.', removed: 2, classes: { tag: 2 }, tagText: 'Ig' }
 * ```
 */
export function sanitizeDescription(options: {
  text: string;
}): SanitizedDescription {
  if (options.text.search(SUSPECT) < 0)
    return { text: options.text, removed: 0, classes: {}, tagText: '' };
  const input = options.text.replace(/\r\n?|[\u2028\u2029]/g, '\n');
  const parts: string[] = [];
  const classes: Partial<Record<HiddenCharacterClass, number>> = {};
  let removed = 0;
  let tagText = '';
  let copied = 0;
  let last: string | undefined;
  let beforeLast: string | undefined;
  for (const match of input.matchAll(SUSPECT)) {
    const char = match[0];
    const index = match.index;
    if (index > copied) {
      const kept = input.slice(copied, index);
      parts.push(kept);
      // Its last two code points (four UTF-16 units hold at least two).
      const chars = Array.from(kept.slice(-4));
      beforeLast = chars.at(-2) ?? last;
      last = chars.at(-1);
    }
    copied = index + char.length;
    const next = String.fromCodePoint(input.codePointAt(copied) ?? 0x20);
    const kind = removalClass(
      char,
      last,
      beforeLast,
      copied < input.length ? next : undefined,
    );
    if (kind === undefined) {
      parts.push(char);
      beforeLast = last;
      last = char;
      continue;
    }
    const cp = char.codePointAt(0) as number;
    if (kind === 'tag' && cp >= 0xe0020 && cp <= 0xe007e)
      tagText += String.fromCodePoint(cp - 0xe0000);
    classes[kind] = (classes[kind] ?? 0) + 1;
    removed += 1;
  }
  parts.push(input.slice(copied));
  return { text: parts.join(''), removed, classes, tagText };
}

/**
 * One stderr line naming a tool whose description had hidden characters, or
 * `undefined` when nothing was removed. The tag-spelled text is quoted (cut to
 * 120 characters) so an operator sees what was smuggled.
 */
export function hiddenCharactersLogLine(options: {
  toolName: string;
  sanitized: SanitizedDescription;
}): string | undefined {
  const { toolName, sanitized } = options;
  if (sanitized.removed === 0) return undefined;
  const counts = Object.entries(sanitized.classes)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const spelled =
    sanitized.tagText === ''
      ? ''
      : `; the tag characters spelled ${JSON.stringify(cutText(sanitized.tagText, 120))}`;
  return `tool "${toolName}": removed ${sanitized.removed} hidden character${sanitized.removed === 1 ? '' : 's'} from its description (${counts})${spelled}`;
}

/** `text` cut to `max` characters (code points), the last one `…` when cut. */
export function cutText(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Makes every invisible, format and control character visible as `\u{…}`
 * (tabs and line feeds stay): for text shown to a person who must review it,
 * such as the `--pin` prompt, where hidden text must not stay hidden and
 * terminal escape sequences must not run.
 */
export function revealInvisible(text: string): string {
  return text.replace(
    SUSPECT,
    (char) =>
      `\\u{${(char.codePointAt(0) as number).toString(16).toUpperCase()}}`,
  );
}

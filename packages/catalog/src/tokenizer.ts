import porter2Stem from 'wink-porter2-stemmer';

/**
 * English stop words dropped from documents and queries: the list of wink-nlp-utils (copied
 * here) plus a few words that only frame a request ("please", "want", "using").
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is are ' +
    'was were be been being have has had having do does did doing would should could ought a an the and but if ' +
    'or because as until while of at by for with about against between into through during before after above ' +
    'below to from up down in out on off over under again further then once here there when where why how all ' +
    'any both each few more most other some such only own same so than too very can will just also please want ' +
    'using use via etc e g eg ie s t let us may might must shall need'
  ).split(/\s+/),
);

// Scripts written without spaces between words: each character becomes a token.
const UNSEGMENTED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LOWER_UPPER = /([\p{Ll}\p{N}])(\p{Lu})/gu;
const UPPER_RUN = /(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu;
const LETTER_DIGIT = /(\p{L})(\p{N})/gu;
const DIGIT_LETTER = /(\p{N})(\p{L})/gu;
const ASCII_WORD = /^[a-z]+$/;

const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 100_000;

/** Porter2 (English) stem of a lower-case ASCII word; other words are returned unchanged. */
export function stemWord(word: string): string {
  if (!ASCII_WORD.test(word) || word.length < 3) return word;
  const cached = stemCache.get(word);
  if (cached !== undefined) return cached;
  const stemmed = porter2Stem(word);
  if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
  stemCache.set(word, stemmed);
  return stemmed;
}

const ASCII_ONLY = /^\p{ASCII}*$/u;
const ASCII_LOWER_UPPER = /([a-z0-9])([A-Z])/g;
const ASCII_UPPER_RUN = /([A-Z])([A-Z][a-z]{2,})/g;
const ASCII_LETTER_DIGIT = /([A-Za-z])([0-9])/g;
const ASCII_DIGIT_LETTER = /([0-9])([A-Za-z])/g;
const ASCII_WORDS = /[a-z0-9]+/g;

/**
 * Splits text into lower-case words, cutting identifiers at `_`, `-`, `.`, camelCase humps and
 * letter/digit boundaries; each character of an unsegmented script (Chinese, Thai...) is a word.
 */
export function splitWords(text: string): string[] {
  if (ASCII_ONLY.test(text)) {
    const spaced = text
      .replace(ASCII_LOWER_UPPER, '$1 $2')
      .replace(ASCII_UPPER_RUN, '$1 $2')
      .replace(ASCII_LETTER_DIGIT, '$1 $2')
      .replace(ASCII_DIGIT_LETTER, '$1 $2')
      .toLowerCase();
    return spaced.match(ASCII_WORDS) ?? [];
  }
  const spaced = text
    .replace(LOWER_UPPER, '$1 $2')
    .replace(UPPER_RUN, '$1 $2')
    .replace(LETTER_DIGIT, '$1 $2')
    .replace(DIGIT_LETTER, '$1 $2')
    .toLowerCase();
  const words: string[] = [];
  for (const match of spaced.matchAll(WORD)) {
    const word = match[0];
    if (UNSEGMENTED.test(word)) {
      let run = '';
      for (const character of word) {
        if (UNSEGMENTED.test(character)) {
          if (run) words.push(run);
          run = '';
          words.push(character);
        } else {
          run += character;
        }
      }
      if (run) words.push(run);
    } else {
      words.push(word);
    }
  }
  return words;
}

/**
 * The search terms of a text: {@link splitWords}, minus {@link STOP_WORDS}, stemmed.
 *
 * @example
 * ```ts
 * analyzeText('adb_install_apk installs an APK'); // ['adb', 'instal', 'apk', 'instal', 'apk']
 * ```
 */
export function analyzeText(text: string): string[] {
  const terms: string[] = [];
  for (const word of splitWords(text)) {
    if (STOP_WORDS.has(word)) continue;
    terms.push(stemWord(word));
  }
  return terms;
}

/** Lower-cased, trimmed form of a tool name used for exact-name matching. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase();
}

/** One word of a query, as typed, with the terms it stands for. */
export type QueryWord = {
  /** The word as the user typed it (surrounding punctuation removed). */
  word: string;
  /** Search terms derived from it (empty for stop words); an identifier also keeps its exact lower-cased form. */
  terms: string[];
  /** Lower-cased word when it looks like an identifier (`adb_tap`, `installApk`), for exact-name matching. */
  identifier?: string;
};

const IDENTIFIER_LIKE = /[_.\-/]|\p{Ll}\p{Lu}/u;
const EDGE_PUNCTUATION = /^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu;

/** Splits a query into whitespace-separated words and their terms. */
export function analyzeQuery(query: string): QueryWord[] {
  const words: QueryWord[] = [];
  for (const raw of query.split(/\s+/)) {
    const word = raw.replace(EDGE_PUNCTUATION, '');
    if (!word) continue;
    const entry: QueryWord = { word, terms: analyzeText(word) };
    if (IDENTIFIER_LIKE.test(word)) {
      entry.identifier = word.toLowerCase();
      entry.terms.push(entry.identifier);
    }
    words.push(entry);
  }
  return words;
}

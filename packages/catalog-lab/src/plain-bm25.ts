/**
 * The plain BM25 reference of the tool-retrieval benchmark, kept for comparison only:
 * Okapi BM25 (k1 1.2, b 0.75), one bag of words per tool (name, description, server,
 * parameter names, descriptions and enum values), camelCase and non-alphanumeric splitting,
 * a 35-word stop list, no stemming.
 */

const REFERENCE_STOP_WORDS = new Set(
  'a an and are as at be by can for from how i in is it me my of on or please that the this to use using want what with you your'.split(
    ' ',
  ),
);

function referenceTokens(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const tokens = spaced.match(/[a-z0-9]+|[^\p{ASCII}\s]/gu) ?? [];
  return tokens.filter((token) => !REFERENCE_STOP_WORDS.has(token));
}

function schemaText(schema: unknown, depth: number, out: string[]): void {
  if (
    typeof schema !== 'object' ||
    schema === null ||
    Array.isArray(schema) ||
    depth > 4
  )
    return;
  const properties = (schema as Record<string, unknown>).properties;
  if (typeof properties !== 'object' || properties === null) return;
  for (const [key, value] of Object.entries(
    properties as Record<string, unknown>,
  )) {
    out.push(key);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      continue;
    const property = value as Record<string, unknown>;
    out.push(String(property.description ?? ''));
    if (Array.isArray(property.enum)) out.push(...property.enum.map(String));
    schemaText(property, depth + 1, out);
    if (
      typeof property.items === 'object' &&
      property.items !== null &&
      !Array.isArray(property.items)
    )
      schemaText(property.items, depth + 1, out);
  }
}

/** One document of the reference baseline. */
export type PlainDocument = {
  name: string;
  description: string;
  server: string;
  inputSchema: unknown;
};

/** The reference plain BM25 ranker (name + description + server + parameters). */
export class PlainBm25 {
  readonly #postings = new Map<string, Array<[number, number]>>();
  readonly #idf = new Map<string, number>();
  readonly #lengths: number[];
  readonly #averageLength: number;

  /** Indexes `documents` (position = document id). */
  constructor(options: { documents: readonly PlainDocument[] }) {
    const bags = options.documents.map((document) => {
      const parts = [
        document.name
          .replaceAll('__', ' ')
          .replaceAll('_', ' ')
          .replaceAll('-', ' '),
        document.description,
        document.server,
      ];
      schemaText(document.inputSchema, 0, parts);
      return referenceTokens(parts.join(' '));
    });
    this.#lengths = bags.map((bag) => bag.length);
    this.#averageLength =
      this.#lengths.reduce((sum, length) => sum + length, 0) /
      Math.max(1, bags.length);
    bags.forEach((bag, position) => {
      const counts = new Map<string, number>();
      for (const token of bag) counts.set(token, (counts.get(token) ?? 0) + 1);
      for (const [token, count] of counts) {
        const list = this.#postings.get(token);
        if (list) list.push([position, count]);
        else this.#postings.set(token, [[position, count]]);
      }
    });
    const total = bags.length;
    for (const [token, list] of this.#postings)
      this.#idf.set(
        token,
        Math.log(1 + (total - list.length + 0.5) / (list.length + 0.5)),
      );
  }

  /** Positions of the best `limit` documents for `query` (ties: lower position first). */
  search(options: { query: string; limit: number }): number[] {
    const scores = new Float64Array(this.#lengths.length);
    const touched: number[] = [];
    for (const token of new Set(referenceTokens(options.query))) {
      const idf = this.#idf.get(token);
      const list = this.#postings.get(token);
      if (idf === undefined || !list) continue;
      for (const [position, count] of list) {
        const norm =
          1.2 *
          (1 -
            0.75 +
            (0.75 * (this.#lengths[position] ?? 0)) / this.#averageLength);
        if (scores[position] === 0) touched.push(position);
        scores[position] =
          (scores[position] ?? 0) + (idf * count * 2.2) / (count + norm);
      }
    }
    // Top `limit` by insertion into a short sorted list: the order of a full sort by score,
    // then position, without sorting every matching document.
    const top: number[] = [];
    if (options.limit <= 0) return top;
    const before = (left: number, right: number): boolean =>
      (scores[left] ?? 0) > (scores[right] ?? 0) ||
      (scores[left] === scores[right] && left < right);
    for (const position of touched) {
      if (top.length === options.limit) {
        if (!before(position, top[top.length - 1] as number)) continue;
        top.pop();
      }
      let at = top.length;
      while (at > 0 && before(position, top[at - 1] as number)) at -= 1;
      top.splice(at, 0, position);
    }
    return top;
  }
}

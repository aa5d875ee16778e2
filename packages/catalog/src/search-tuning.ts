import { FIELD_NAMES, type FieldName } from './prepare.js';

/** Scoring knobs of a catalog's search; the defaults are {@link DEFAULT_TUNING}. */
export type SearchTuning = {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** Length normalization of the bag, 0 (none) to 1 (full). */
  b: number;
  /**
   * Term-frequency multiplier of each field inside the single bag of words (0 leaves the
   * field out of the bag). The bag is the model: one document per tool, Okapi BM25 over it.
   */
  bag: Readonly<Record<FieldName, number>>;
  /** Bonus for the share of a tool's name words that the query contains (times the best plain score). */
  nameCoverageWeight: number;
  /** The name-coverage bonus of a tool is at most this multiple of its own score (0: no cap). */
  nameCoverageCap: number;
  /** A term found in at least this share of the tools counts as common (see the padding rule of search). */
  commonTermShare: number;
  /**
   * Weight of the usage field: the search terms of past requests after which a tool was
   * called (see `ToolCatalog.recordUse`). A usage term's length-normalized frequency, times
   * this weight, joins the term's frequency in the tool's bag before BM25 saturation, so a
   * word counts at most as much as a word the tool's own text repeats (0 ignores usage).
   */
  usageWeight: number;
  /** Hits scoring below this share of the best hit are cut (0 keeps everything up to `limit`). */
  relativeCutoff: number;
};

/** Partial tuning: any knob, and any subset of the bag's fields, overrides {@link DEFAULT_TUNING}. */
export type SearchTuningOverrides = Partial<Omit<SearchTuning, 'bag'>> & {
  bag?: Partial<Record<FieldName, number>>;
};

/** Tuning used by default: the plain bag of words plus the one refinement the selection kept (see the README): a capped name-coverage bonus. */
export const DEFAULT_TUNING: SearchTuning = {
  k1: 1.2,
  b: 0.75,
  bag: {
    name: 1,
    identifier: 0,
    target: 1,
    description: 1,
    parameters: 1,
    parameterText: 1,
  },
  nameCoverageWeight: 0.5,
  nameCoverageCap: 1,
  usageWeight: 1.5,
  relativeCutoff: 0.2,
  commonTermShare: 0.2,
};

/** {@link DEFAULT_TUNING} with `overrides` applied (the bag merged field by field). */
export function resolveTuning(
  overrides: SearchTuningOverrides | undefined,
): SearchTuning {
  return {
    ...DEFAULT_TUNING,
    ...overrides,
    bag: { ...DEFAULT_TUNING.bag, ...overrides?.bag },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const nonNegative = (value: unknown): boolean =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

const FIELDS = FIELD_NAMES as readonly string[];
/** Knobs that are shares, from 0 to 1. */
const UNIT_KNOBS: readonly string[] = ['b'];

/** What is wrong with a tuning override object (known knobs, non-negative numbers, `b` at most 1), if anything. */
export function checkTuningOverrides(value: unknown): string | undefined {
  if (!isRecord(value))
    return 'tuning must be a JSON object of knobs, e.g. {"k1": 1.2}.';
  const known = Object.keys(DEFAULT_TUNING);
  for (const [key, knob] of Object.entries(value)) {
    if (!known.includes(key))
      return `unknown knob "${key}"; known knobs are ${known.join(', ')}.`;
    if (key === 'bag') {
      if (!isRecord(knob))
        return `"bag" must be an object of field weights (${FIELDS.join(', ')}).`;
      for (const [field, weight] of Object.entries(knob)) {
        if (!FIELDS.includes(field))
          return `"bag" has unknown field "${field}"; fields are ${FIELDS.join(', ')}.`;
        if (!nonNegative(weight))
          return `"bag.${field}" must be a non-negative number, got ${JSON.stringify(weight)}.`;
      }
    } else if (
      !nonNegative(knob) ||
      (UNIT_KNOBS.includes(key) && (knob as number) > 1)
    ) {
      return `"${key}" must be a ${UNIT_KNOBS.includes(key) ? 'number from 0 to 1' : 'non-negative number'}, got ${JSON.stringify(knob)}.`;
    }
  }
  return undefined;
}

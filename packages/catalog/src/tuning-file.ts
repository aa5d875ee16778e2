import { DEFAULT_TUNING } from './bm25f.js';
import { FIELD_NAMES } from './prepare.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const nonNegative = (value: unknown): boolean =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

const FIELDS = FIELD_NAMES as readonly string[];
/** Knobs that are shares, from 0 to 1. */
const UNIT_KNOBS: readonly string[] = ['b'];

/**
 * What is wrong with a tuning override object (as read from a JSON file or given to
 * `new ToolCatalog({ tuning })`), or `undefined` when it is usable: only known knobs,
 * non-negative finite numbers, `b` from 0 to 1, `bag` an
 * object of field weights.
 */
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

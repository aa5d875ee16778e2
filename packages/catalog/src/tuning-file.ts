import { DEFAULT_TUNING } from './bm25f.js';
import { FIELD_NAMES } from './prepare.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const nonNegative = (value: unknown): boolean =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

const FIELDS = FIELD_NAMES as readonly string[];

/**
 * What is wrong with a tuning override object (as read from a JSON file or given to
 * `new ToolCatalog({ tuning })`), or `undefined` when it is usable: only known knobs,
 * non-negative finite numbers, `b` values from 0 to 1, `bagNormalization` `"bag"` or
 * `"field"`.
 */
export function checkTuningOverrides(value: unknown): string | undefined {
  if (!isRecord(value))
    return 'tuning must be a JSON object of knobs, e.g. {"k1": 1.2}.';
  const known = Object.keys(DEFAULT_TUNING);
  for (const [key, knob] of Object.entries(value)) {
    if (!known.includes(key))
      return `unknown knob "${key}"; known knobs are ${known.join(', ')}.`;
    if (key === 'bagNormalization') {
      if (knob !== 'bag' && knob !== 'field')
        return `"bagNormalization" must be "bag" or "field", got ${JSON.stringify(knob)}.`;
    } else if (key === 'bag') {
      if (!isRecord(knob))
        return `"bag" must be an object of field weights (${FIELDS.join(', ')}).`;
      for (const [field, weight] of Object.entries(knob)) {
        if (!FIELDS.includes(field))
          return `"bag" has unknown field "${field}"; fields are ${FIELDS.join(', ')}.`;
        if (!nonNegative(weight))
          return `"bag.${field}" must be a non-negative number, got ${JSON.stringify(weight)}.`;
      }
    } else if (key === 'fields') {
      if (!isRecord(knob))
        return `"fields" must be an object of {"weight","b"} per field (${FIELDS.join(', ')}).`;
      for (const [field, tuning] of Object.entries(knob)) {
        if (!FIELDS.includes(field))
          return `"fields" has unknown field "${field}"; fields are ${FIELDS.join(', ')}.`;
        if (!isRecord(tuning))
          return `"fields.${field}" must be an object {"weight","b"}.`;
        for (const [part, number] of Object.entries(tuning)) {
          if (part !== 'weight' && part !== 'b')
            return `"fields.${field}" has unknown key "${part}"; use "weight" and "b".`;
          if (!nonNegative(number) || (part === 'b' && (number as number) > 1))
            return `"fields.${field}.${part}" must be a number ${part === 'b' ? 'from 0 to 1' : 'of at least 0'}, got ${JSON.stringify(number)}.`;
        }
      }
    } else if (
      !nonNegative(knob) ||
      ((key === 'b' || key === 'usageB' || key === 'usageTextIdf') &&
        (knob as number) > 1)
    ) {
      return `"${key}" must be a ${key === 'b' || key === 'usageB' || key === 'usageTextIdf' ? 'number from 0 to 1' : 'non-negative number'}, got ${JSON.stringify(knob)}.`;
    }
  }
  return undefined;
}

import type { z } from 'zod';
import { quote } from './errors.js';

/**
 * How the broker words what zod found wrong with an input, one line a problem:
 * `missing required property "name"`, `limit must be <the field's zod error>, got number 0`,
 * `unknown properties "a", "b"; allowed: query, profile`, or a custom rule's message.
 */

/** A short, capped description of a value's type, for messages. */
export function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${quote(value, 40)}`;
  if (typeof value === 'number' || typeof value === 'boolean')
    return `${typeof value} ${String(value).slice(0, 40)}`;
  return `a value of type ${typeof value}`;
}

function own(value: unknown, key: PropertyKey): unknown {
  return typeof value === 'object' &&
    value !== null &&
    Object.prototype.hasOwnProperty.call(value, key)
    ? (value as Record<PropertyKey, unknown>)[key]
    : undefined;
}

function fieldName(path: readonly PropertyKey[], root: string): string {
  if (path.length === 0) return root;
  return path
    .map((key, index) =>
      typeof key === 'number'
        ? `[${key}]`
        : `${index === 0 ? '' : '.'}${String(key)}`,
    )
    .join('');
}

function unknownKeys(keys: readonly string[], allowed: readonly string[]) {
  const shown = keys
    .slice(0, 5)
    .map((key) => quote(key, 40))
    .join(', ');
  const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
  return `unknown ${keys.length === 1 ? 'property' : 'properties'} ${shown}${more}; allowed: ${allowed.join(', ')}`;
}

/** One line per issue; `input` is what was parsed, `allowed` the fields offered for unknown ones, `root` the input's name. */
export function issueLines(options: {
  issues: readonly z.core.$ZodIssue[];
  input: unknown;
  allowed?: readonly string[];
  root?: string;
}): string[] {
  const { input, allowed = [], root = 'arguments' } = options;
  return options.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys')
      return unknownKeys(issue.keys, allowed);
    const field = fieldName(issue.path, root);
    if (issue.code === 'custom') {
      return issue.path.length === 0
        ? issue.message
        : `${field} ${issue.message}`;
    }
    const value = issue.path.reduce<unknown>(
      (node, key) => own(node, key),
      input,
    );
    if (value === undefined && issue.path.length > 0)
      return `missing required property ${JSON.stringify(field)}`;
    return `${field} must be ${issue.message}, got ${kind(value)}`;
  });
}

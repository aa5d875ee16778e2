import type { z } from 'zod';
import type { HandoffIssue } from './errors.js';

/** How a value that is not a JSON object is called in messages. */
export function describeInput(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return `a ${typeof input}`;
}

/**
 * Error for a field that must be an object: says whether it is missing or of
 * the wrong type. Other issues (unknown keys) keep their own message.
 */
export function objectError(what: string) {
  return (issue: { code?: string; input?: unknown }) => {
    if (issue.code !== 'invalid_type') return undefined;
    return issue.input === undefined
      ? `${what} is required.`
      : `${what} must be an object, not ${describeInput(issue.input)}.`;
  };
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Renders a path as `a.b[0].c`; keys that are not identifiers are quoted
 * (`a["x y"]`); the empty path is `(root)`.
 */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment))
      out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out === '' ? '(root)' : out;
}

function issue(
  segments: readonly PropertyKey[],
  code: string,
  message: string,
): HandoffIssue {
  const pathSegments = segments.map((segment) =>
    typeof segment === 'number' ? segment : String(segment),
  );
  return { path: formatPath(pathSegments), pathSegments, code, message };
}

/**
 * Flattens zod issues into {@link HandoffIssue}s. An unknown-keys issue
 * becomes one issue per key, whose path ends at that key, so every message
 * names exactly where the problem is. Issues are sorted by path for a stable
 * message.
 */
export function toHandoffIssues({
  issues,
  subject,
}: {
  issues: readonly z.core.$ZodIssue[];
  /** What the value is, used in unknown-key messages, e.g. `handoff envelope v1`. */
  subject: string;
}): HandoffIssue[] {
  const out: HandoffIssue[] = [];
  for (const zodIssue of issues) {
    if (zodIssue.code === 'unrecognized_keys') {
      for (const key of zodIssue.keys) {
        out.push(
          issue(
            [...zodIssue.path, key],
            'unknown_key',
            `unknown key ${JSON.stringify(key)} is not part of the ${subject}; remove it (strict parsing refuses unknown keys).`,
          ),
        );
      }
      continue;
    }
    const code =
      zodIssue.code === 'invalid_value' &&
      zodIssue.message.startsWith('Unknown role')
        ? 'unknown_role'
        : zodIssue.code;
    out.push(issue(zodIssue.path, code, zodIssue.message));
  }
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

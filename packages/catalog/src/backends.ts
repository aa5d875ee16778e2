import { readFileSync } from 'node:fs';
import {
  DEFAULT_BACKENDS as SHARED_BACKENDS,
  TARGET_NAME_RULE,
  targetNameProblem,
} from '@heretek/internal';
import { CatalogError } from './errors.js';
import type { Backend } from './types.js';

/**
 * The 12 default backends: (backend, gateway target, profile), the project's one table
 * (shared with the other `@heretek` packages).
 */
export const DEFAULT_BACKENDS: readonly Backend[] = SHARED_BACKENDS;

/** The `INVALID_BACKENDS_FILE` error of a bad backends file or record. */
function invalidFile(message: string, cause?: unknown): CatalogError {
  return new CatalogError({ code: 'INVALID_BACKENDS_FILE', message, cause });
}

/**
 * Throws `INVALID_TARGET` (after `where: ` when given) unless `target` follows the
 * agentgateway rule (`TARGET_NAME_RULE`; it splits `<target>_<tool>` on the first `_`).
 */
export function assertTargetName(
  target: unknown,
  where?: string,
): asserts target is string {
  const problem = targetNameProblem(target);
  if (problem !== undefined) {
    throw new CatalogError({
      code: 'INVALID_TARGET',
      message: `${where === undefined ? '' : `${where}: `}Invalid target name ${JSON.stringify(target)}: ${problem}; use ${TARGET_NAME_RULE}.`,
    });
  }
}

/** Checks one backend record and returns a clean copy (`INVALID_BACKENDS_FILE` / `INVALID_TARGET` name the bad field). */
function parseBackend(value: unknown, where: string): Backend {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidFile(
      `${where}: expected an object {"backend","target","profile"}, got ${JSON.stringify(value)}.`,
    );
  }
  const record = value as Record<string, unknown>;
  for (const key of ['backend', 'target', 'profile'] as const) {
    const field = record[key];
    if (typeof field !== 'string' || field.trim() === '') {
      throw invalidFile(
        `${where}: "${key}" must be a non-empty string, got ${JSON.stringify(field)}.`,
      );
    }
  }
  const unknownKeys = Object.keys(record).filter(
    (key) => !['backend', 'target', 'profile'].includes(key),
  );
  if (unknownKeys.length > 0) {
    throw invalidFile(
      `${where}: unknown field(s) ${unknownKeys.map((key) => JSON.stringify(key)).join(', ')}; allowed are "backend", "target", "profile".`,
    );
  }
  assertTargetName(record.target, where);
  return {
    backend: record.backend as string,
    target: record.target as string,
    profile: record.profile as string,
  };
}

/**
 * Reads a backend list from a JSON file holding `[{ "backend", "target", "profile" }, ...]`.
 * Targets and backends must be unique; a target must not contain `_`.
 *
 * @example
 * ```ts
 * const backends = loadBackends({ file: './backends.json' });
 * ```
 * @throws CatalogError `INVALID_BACKENDS_FILE` or `INVALID_TARGET`, with the file and entry index in the message.
 */
export function loadBackends(options: { file: string }): Backend[] {
  const { file } = options;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalidFile(
      `Cannot read backends file ${file}: ${(error as Error).message}`,
      error,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalidFile(
      `Backends file ${file} is not valid JSON: ${(error as Error).message}`,
      error,
    );
  }
  if (!Array.isArray(parsed)) {
    throw invalidFile(
      `Backends file ${file} must hold a JSON array of {"backend","target","profile"} objects.`,
    );
  }
  const backends = parsed.map((value, index) =>
    parseBackend(value, `${file} [${index}]`),
  );
  for (const key of ['target', 'backend'] as const) {
    const seen = new Map<string, number>();
    backends.forEach((backend, index) => {
      const previous = seen.get(backend[key]);
      if (previous !== undefined)
        throw invalidFile(
          `${file} [${index}]: ${key} "${backend[key]}" is already used by entry [${previous}]; ${key}s must be unique.`,
        );
      seen.set(backend[key], index);
    });
  }
  return backends;
}

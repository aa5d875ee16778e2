import { isMutatingTool } from '@heretek/catalog';
import { sha256Tag } from '@heretek/internal';
import canonicalize from 'canonicalize';
import { cutText } from './sanitize.js';

/**
 * The part of a tool that is pinned: what an agent reads and what decides how a
 * call is checked, as the backend listed it (the description before cleaning).
 * `name` is the qualified name the broker serves (`<target>_<tool>`), so a pin
 * does not change with the gateway mode.
 */
export type ToolDefinition = {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
  annotations?: Record<string, unknown> | undefined;
};

/** A definition with every part present, as it is hashed and stored in the pins file. */
export type NormalizedDefinition = {
  name: string;
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
};

/** What differs between a pinned definition and the current one. */
export type DefinitionChange = {
  /** The parts that differ, in the order description, schema, annotations. */
  parts: Array<'description' | 'schema' | 'annotations'>;
  /** True when the pinned definition was read-only and the current one is mutating. */
  becameMutating: boolean;
};

/**
 * Fills absent parts (`description` `''`, `inputSchema` `{}`, `annotations`
 * `{}`) so that a part that is missing and one that is empty hash alike. A
 * definition of exactly these four members, all present, is returned as it
 * is (not copied), so whoever keeps both shares one object.
 */
export function normalizeDefinition(
  definition: ToolDefinition,
): NormalizedDefinition {
  if (
    typeof definition.description === 'string' &&
    definition.inputSchema !== undefined &&
    definition.annotations !== undefined &&
    Object.keys(definition).length === 4
  )
    return definition as NormalizedDefinition;
  return {
    name: definition.name,
    description: definition.description ?? '',
    inputSchema: definition.inputSchema ?? {},
    annotations: definition.annotations ?? {},
  };
}

function canonical(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined)
    throw new TypeError('A tool definition must be JSON.');
  return text;
}

/**
 * `sha256:<hex>` over the RFC 8785 (JCS) canonical JSON of
 * `{ name, description, inputSchema, annotations }` (absent parts filled as in
 * {@link normalizeDefinition}). Key order, whitespace and number spelling in
 * the listing do not change it; any change of content does.
 *
 * @example
 * ```ts
 * definitionHash({ name: 'adb_tap', description: 'Tap the screen' });
 * // 'sha256:…'
 * ```
 */
export function definitionHash(definition: ToolDefinition): string {
  return sha256Tag(canonical(normalizeDefinition(definition)));
}

/**
 * Which parts differ between a pinned and a current definition, and whether the
 * tool went from read-only to mutating (always a change: the annotations
 * differ). Parts are compared by their canonical JSON.
 */
export function diffDefinitions(
  pinned: ToolDefinition,
  current: ToolDefinition,
): DefinitionChange {
  const before = normalizeDefinition(pinned);
  const after = normalizeDefinition(current);
  const parts: DefinitionChange['parts'] = [];
  if (before.description !== after.description) parts.push('description');
  if (canonical(before.inputSchema) !== canonical(after.inputSchema))
    parts.push('schema');
  if (canonical(before.annotations) !== canonical(after.annotations))
    parts.push('annotations');
  return {
    parts,
    becameMutating:
      !isMutatingTool(before.annotations) && isMutatingTool(after.annotations),
  };
}

/** True when a {@link DefinitionChange} records any difference. */
export function isChanged(change: DefinitionChange): boolean {
  return change.parts.length > 0 || change.becameMutating;
}

/**
 * A short phrase naming what changed, e.g.
 * `description and input schema; it was read-only and is now mutating`.
 */
export function changeSummary(change: DefinitionChange): string {
  const names = change.parts.map((part) =>
    part === 'schema' ? 'input schema' : part,
  );
  const list =
    names.length <= 1
      ? (names[0] ?? 'definition')
      : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
  return change.becameMutating
    ? `${list}; it was read-only and is now mutating`
    : list;
}

function schemaProperties(schema: unknown): Map<string, string> {
  const result = new Map<string, string>();
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== 'object' || properties === null) return result;
  for (const [key, value] of Object.entries(properties))
    result.set(key, canonical(value ?? null));
  return result;
}

function requiredOf(schema: unknown): Set<string> {
  const required = (schema as { required?: unknown } | null)?.required;
  return new Set(
    Array.isArray(required)
      ? required.filter((item): item is string => typeof item === 'string')
      : [],
  );
}

const quote = (text: string) => JSON.stringify(cutText(text, 300));

/**
 * Lines that show a person (the `--pin` prompt) or an agent (inspect) what
 * changed: the old and new description, the schema properties added, removed,
 * changed or newly required, and the annotation values before and after.
 * Descriptions are quoted as given: clean them first when the lines go to an
 * agent.
 */
export function describeChange(
  pinned: ToolDefinition,
  current: ToolDefinition,
): string[] {
  const before = normalizeDefinition(pinned);
  const after = normalizeDefinition(current);
  const change = diffDefinitions(before, after);
  const lines: string[] = [];
  if (change.becameMutating) lines.push('was read-only, is now mutating');
  if (change.parts.includes('description'))
    lines.push(
      `description was ${quote(before.description)}`,
      `description is now ${quote(after.description)}`,
    );
  if (change.parts.includes('schema')) {
    const was = schemaProperties(before.inputSchema);
    const now = schemaProperties(after.inputSchema);
    const added = [...now.keys()].filter((key) => !was.has(key));
    const removed = [...was.keys()].filter((key) => !now.has(key));
    const altered = [...now.keys()].filter(
      (key) => was.has(key) && was.get(key) !== now.get(key),
    );
    const wasRequired = requiredOf(before.inputSchema);
    const newlyRequired = [...requiredOf(after.inputSchema)].filter(
      (key) => !wasRequired.has(key),
    );
    const details = [
      added.length > 0 ? `added ${added.join(', ')}` : '',
      removed.length > 0 ? `removed ${removed.join(', ')}` : '',
      altered.length > 0 ? `changed ${altered.join(', ')}` : '',
      newlyRequired.length > 0
        ? `now required ${newlyRequired.join(', ')}`
        : '',
    ].filter(Boolean);
    lines.push(
      `input schema changed${details.length > 0 ? `: ${details.join('; ')}` : ''}`,
    );
  }
  if (change.parts.includes('annotations')) {
    const keys = new Set([
      ...Object.keys(before.annotations),
      ...Object.keys(after.annotations),
    ]);
    const details = [...keys].sort().flatMap((key) => {
      const was = canonical(before.annotations[key] ?? null);
      const now = canonical(after.annotations[key] ?? null);
      return was === now ? [] : [`${key} ${was} -> ${now}`];
    });
    lines.push(`annotations changed: ${details.join(', ')}`);
  }
  return lines;
}

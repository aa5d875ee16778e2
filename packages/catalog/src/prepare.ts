import { analyzeText, normalizeName } from './tokenizer.js';
import type { ToolEntry } from './types.js';

/**
 * Indexed fields of a tool: name words, the exact names as single tokens (bare and
 * qualified, lower-cased), target words, description, parameter names, and parameter
 * descriptions with enum values.
 */
export const FIELD_NAMES = [
  'name',
  'identifier',
  'target',
  'description',
  'parameters',
  'parameterText',
] as const;
/** Name of one indexed field. */
export type FieldName = (typeof FIELD_NAMES)[number];

/** A tool with its search terms prepared once (reused across index rebuilds). */
export type PreparedTool = {
  /** The catalog entry. */
  entry: ToolEntry;
  /** Search terms per field. */
  fields: Record<FieldName, string[]>;
  /** Normalized exact names (qualified and bare). */
  exactNames: string[];
};

const MAX_SCHEMA_DEPTH = 4;

function collectSchemaText(
  schema: unknown,
  depth: number,
  names: string[],
  texts: string[],
): void {
  if (
    depth > MAX_SCHEMA_DEPTH ||
    typeof schema !== 'object' ||
    schema === null ||
    Array.isArray(schema)
  )
    return;
  const record = schema as Record<string, unknown>;
  const properties = record.properties;
  if (
    typeof properties === 'object' &&
    properties !== null &&
    !Array.isArray(properties)
  ) {
    for (const [key, value] of Object.entries(
      properties as Record<string, unknown>,
    )) {
      names.push(key);
      if (typeof value !== 'object' || value === null) continue;
      const property = value as Record<string, unknown>;
      if (typeof property.description === 'string')
        texts.push(property.description);
      if (Array.isArray(property.enum)) {
        for (const option of property.enum) {
          if (typeof option === 'string' || typeof option === 'number')
            texts.push(String(option));
        }
      }
      collectSchemaText(property, depth + 1, names, texts);
      collectSchemaText(property.items, depth + 1, names, texts);
    }
  }
}

const byEntry = new WeakMap<ToolEntry, PreparedTool>();

function schemaText(entry: ToolEntry): string | undefined {
  try {
    return JSON.stringify(entry.inputSchema);
  } catch {
    return undefined;
  }
}

/** Whether two entries have the same indexed content (target, tool, description, schema). */
function sameContent(left: ToolEntry, right: ToolEntry): boolean {
  if (
    left.target !== right.target ||
    left.tool !== right.tool ||
    left.description !== right.description
  )
    return false;
  const schema = schemaText(left);
  return schema !== undefined && schema === schemaText(right);
}

/** Analyzed target names, for checking imported parts. */
const targetTerms = new Map<string, string[]>();

function sameTerms(left: readonly string[], right: readonly string[]): boolean {
  return (
    left.length === right.length &&
    left.every((term, index) => term === right[index])
  );
}

/**
 * Adopts search terms analyzed earlier (an imported index part) for `entry`, after checking
 * the fields that are cheap to recompute (identifier, target, and the name when asked)
 * against the entry.
 * Returns the prepared tool, or what is inconsistent.
 */
export function adoptPreparedTool(options: {
  entry: ToolEntry;
  fields: Record<FieldName, string[]>;
  /** Whether to analyze the tool's name again and compare (the target's terms always are, once per target). */
  checkName: boolean;
}): PreparedTool | string {
  const { entry, fields } = options;
  const identifier = [
    ...new Set([normalizeName(entry.tool), normalizeName(entry.name)]),
  ];
  if (!sameTerms(fields.identifier, identifier))
    return `"fields.identifier" does not match tool "${entry.name}"`;
  if (options.checkName && !sameTerms(fields.name, analyzeText(entry.tool)))
    return `"fields.name" does not match tool "${entry.name}"`;
  let target = targetTerms.get(entry.target);
  if (target === undefined) {
    target = analyzeText(entry.target);
    targetTerms.set(entry.target, target);
    if (targetTerms.size > 10_000) targetTerms.clear();
  }
  if (!sameTerms(fields.target, target))
    return `"fields.target" does not match target "${entry.target}"`;
  const prepared: PreparedTool = {
    entry,
    fields,
    exactNames: [
      ...new Set([normalizeName(entry.name), normalizeName(entry.tool)]),
    ],
  };
  byEntry.set(entry, prepared);
  return prepared;
}

/**
 * Prepares a tool's search terms. The result is cached per entry object, and `previous` (the
 * tool of the same name in the catalog so far) lends its terms when its content is equal, so
 * a re-listing only analyzes tools that changed.
 */
export function prepareTool(
  entry: ToolEntry,
  previous?: PreparedTool,
): PreparedTool {
  const cached = byEntry.get(entry);
  if (cached) return cached;
  let prepared: PreparedTool;
  if (previous && sameContent(previous.entry, entry)) {
    prepared = {
      entry,
      fields: previous.fields,
      exactNames: previous.exactNames,
    };
  } else {
    const parameterNames: string[] = [];
    const parameterTexts: string[] = [];
    collectSchemaText(entry.inputSchema, 0, parameterNames, parameterTexts);
    prepared = {
      entry,
      fields: {
        name: analyzeText(entry.tool),
        identifier: [
          ...new Set([normalizeName(entry.tool), normalizeName(entry.name)]),
        ],
        target: analyzeText(entry.target),
        description: analyzeText(entry.description),
        parameters: analyzeText(parameterNames.join(' ')),
        parameterText: analyzeText(parameterTexts.join(' ')),
      },
      exactNames: [
        ...new Set([normalizeName(entry.name), normalizeName(entry.tool)]),
      ],
    };
  }
  byEntry.set(entry, prepared);
  return prepared;
}

import { analyzeText, normalizeName } from './tokenizer.js';
import type { ToolEntry } from './types.js';

/** Indexed fields of a tool, in the order of {@link FIELD_NAMES}. */
export const FIELD_NAMES = ['name', 'target', 'description', 'parameters', 'parameterText'] as const;
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

function collectSchemaText(schema: unknown, depth: number, names: string[], texts: string[]): void {
  if (depth > MAX_SCHEMA_DEPTH || typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const record = schema as Record<string, unknown>;
  const properties = record.properties;
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
      names.push(key);
      if (typeof value !== 'object' || value === null) continue;
      const property = value as Record<string, unknown>;
      if (typeof property.description === 'string') texts.push(property.description);
      if (Array.isArray(property.enum)) {
        for (const option of property.enum) {
          if (typeof option === 'string' || typeof option === 'number') texts.push(String(option));
        }
      }
      collectSchemaText(property, depth + 1, names, texts);
      collectSchemaText(property.items, depth + 1, names, texts);
    }
  }
}

const cache = new WeakMap<ToolEntry, PreparedTool>();

/**
 * Prepares a tool's search terms; the result is cached per entry object, so a rebuild that
 * keeps an entry does not tokenize it again.
 */
export function prepareTool(entry: ToolEntry): PreparedTool {
  const cached = cache.get(entry);
  if (cached) return cached;
  const parameterNames: string[] = [];
  const parameterTexts: string[] = [];
  collectSchemaText(entry.inputSchema, 0, parameterNames, parameterTexts);
  const prepared: PreparedTool = {
    entry,
    fields: {
      name: analyzeText(entry.tool),
      target: analyzeText(entry.target),
      description: analyzeText(entry.description),
      parameters: analyzeText(parameterNames.join(' ')),
      parameterText: analyzeText(parameterTexts.join(' ')),
    },
    exactNames: [...new Set([normalizeName(entry.name), normalizeName(entry.tool)])],
  };
  cache.set(entry, prepared);
  return prepared;
}

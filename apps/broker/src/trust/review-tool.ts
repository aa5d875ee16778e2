import {
  flagTool,
  type InjectionFlag,
  type ShadowingContext,
} from './injection-rules.js';
import {
  hiddenCharactersLogLine,
  sanitizeDescription,
  type SanitizedDescription,
} from './sanitize.js';

/** What {@link reviewTool} makes of one listed tool. */
export type ToolReview = {
  /** The cleaned description: the only one an agent may see. */
  description: string;
  /**
   * The input schema with every `description` and `title` string cleaned, for
   * inspect. Argument checks keep using the schema as listed.
   */
  inputSchema: unknown;
  /** What cleaning the description removed. */
  sanitized: SanitizedDescription;
  /** Hidden characters removed from the schema's descriptions and titles. */
  schemaRemoved: number;
  /** Tripped injection rules (empty when none). */
  flags: InjectionFlag[];
  /** Lines for stderr: hidden characters removed, rules tripped. */
  logLines: string[];
};

/**
 * A copy of a JSON Schema with every `description` and `title` string
 * cleaned by `sanitizeDescription`; `counter.removed` grows by the number of
 * characters removed. Nothing that validation reads changes.
 */
export function cleanSchemaTexts(
  node: unknown,
  counter: { removed: number },
  depth = 0,
): unknown {
  if (depth > 64) return node;
  if (Array.isArray(node)) {
    return node.map((item) => cleanSchemaTexts(item, counter, depth + 1));
  }
  if (typeof node !== 'object' || node === null) return node;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      (key === 'description' || key === 'title') &&
      typeof value === 'string'
    ) {
      const cleaned = sanitizeDescription({ text: value });
      counter.removed += cleaned.removed;
      result[key] = cleaned.text;
    } else {
      result[key] = cleanSchemaTexts(value, counter, depth + 1);
    }
  }
  return result;
}

/**
 * Cleans a listed tool's description and schema texts and checks them against
 * the injection rules: the one call the broker makes per tool at discovery,
 * before the tool enters the catalog.
 *
 * @example
 * ```ts
 * const review = reviewTool({
 *   tool: { name: 'math_add', target: 'math', bareName: 'add' },
 *   description: tool.description,
 *   inputSchema: tool.inputSchema,
 *   context,
 * });
 * for (const line of review.logLines) log(line);
 * ```
 */
export function reviewTool(options: {
  tool: { name: string; target: string; bareName: string };
  description: string | undefined;
  inputSchema?: unknown;
  context?: ShadowingContext;
}): ToolReview {
  const sanitized = sanitizeDescription({ text: options.description ?? '' });
  const counter = { removed: 0 };
  const inputSchema = cleanSchemaTexts(options.inputSchema, counter);
  const flags = flagTool({
    tool: options.tool,
    description: sanitized.text,
    tagText: sanitized.tagText,
    inputSchema: options.inputSchema,
    ...(options.context === undefined ? {} : { context: options.context }),
  });
  const logLines: string[] = [];
  const hidden = hiddenCharactersLogLine({
    toolName: options.tool.name,
    sanitized,
  });
  if (hidden !== undefined) logLines.push(hidden);
  if (counter.removed > 0) {
    logLines.push(
      `tool "${options.tool.name}": removed ${counter.removed} hidden character${counter.removed === 1 ? '' : 's'} from its input schema's descriptions`,
    );
  }
  if (flags.length > 0) {
    logLines.push(
      `tool "${options.tool.name}" flagged: ${flags
        .map((flag) => `${flag.rule} (${JSON.stringify(flag.excerpt)})`)
        .join('; ')}`,
    );
  }
  return {
    description: sanitized.text,
    inputSchema,
    sanitized,
    schemaRemoved: counter.removed,
    flags,
    logLines,
  };
}

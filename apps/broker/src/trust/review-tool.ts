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
 * A JSON Schema with every `description` and `title` string cleaned by
 * `sanitizeDescription`; `counter.removed` grows by the number of characters
 * removed. Nothing that validation reads changes. Only the objects and
 * arrays on the way to a changed text are copied: a schema with nothing to
 * clean is returned as it is (the same object), so the catalog, the trust
 * layer and the pins keep one copy of it.
 */
export function cleanSchemaTexts(
  node: unknown,
  counter: { removed: number },
  depth = 0,
): unknown {
  if (depth > 64) return node;
  if (Array.isArray(node)) {
    let copy: unknown[] | undefined;
    node.forEach((item, index) => {
      const cleaned = cleanSchemaTexts(item, counter, depth + 1);
      if (cleaned !== item) (copy ??= [...node])[index] = cleaned;
    });
    return copy ?? node;
  }
  if (typeof node !== 'object' || node === null) return node;
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(node)) {
    let cleaned: unknown;
    if (
      (key === 'description' || key === 'title') &&
      typeof value === 'string'
    ) {
      const sanitized = sanitizeDescription({ text: value });
      counter.removed += sanitized.removed;
      cleaned = sanitized.text;
    } else {
      cleaned = cleanSchemaTexts(value, counter, depth + 1);
    }
    if (cleaned !== value) (copy ??= { ...node })[key] = cleaned;
  }
  return copy ?? node;
}

/** What {@link cleanListedTool} makes of one listed tool (no rule checks yet). */
export type CleanedTool = Omit<ToolReview, 'flags'>;

/**
 * Cleans a listed tool's description and schema texts, with a log line for
 * each kind of hidden character removed: the step the trust layer runs for
 * each tool of a listing (the rules are checked later, once every tool is
 * known, with {@link flagTool} and {@link flagLogLine}).
 */
export function cleanListedTool(options: {
  name: string;
  description: string | undefined;
  inputSchema?: unknown;
}): CleanedTool {
  const sanitized = sanitizeDescription({ text: options.description ?? '' });
  const counter = { removed: 0 };
  const inputSchema = cleanSchemaTexts(options.inputSchema, counter);
  const logLines: string[] = [];
  const hidden = hiddenCharactersLogLine({ toolName: options.name, sanitized });
  if (hidden !== undefined) logLines.push(hidden);
  if (counter.removed > 0) {
    logLines.push(
      `tool "${options.name}": removed ${counter.removed} hidden character${counter.removed === 1 ? '' : 's'} from its input schema's descriptions`,
    );
  }
  return {
    description: sanitized.text,
    inputSchema,
    sanitized,
    schemaRemoved: counter.removed,
    logLines,
  };
}

/** The log line for a tool that trips injection rules, or `undefined` when none. */
export function flagLogLine(
  name: string,
  flags: readonly InjectionFlag[],
): string | undefined {
  if (flags.length === 0) return undefined;
  return `tool "${name}" flagged: ${flags
    .map((flag) => `${flag.rule} (${JSON.stringify(flag.excerpt)})`)
    .join('; ')}`;
}

/**
 * One listed tool reviewed whole: {@link cleanListedTool}, then the injection
 * rules against `context` (every tool known). The trust layer runs the same
 * two steps, the second again whenever a listing changes the context.
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
  const cleaned = cleanListedTool({
    name: options.tool.name,
    description: options.description,
    inputSchema: options.inputSchema,
  });
  const flags = flagTool({
    tool: options.tool,
    description: cleaned.sanitized.text,
    tagText: cleaned.sanitized.tagText,
    inputSchema: options.inputSchema,
    ...(options.context === undefined ? {} : { context: options.context }),
  });
  const flagged = flagLogLine(options.tool.name, flags);
  return {
    ...cleaned,
    flags,
    logLines:
      flagged === undefined ? cleaned.logLines : [...cleaned.logLines, flagged],
  };
}

import type { InjectionFlag } from './injection-rules.js';
import { hiddenCharactersLogLine, sanitizeDescription } from './sanitize.js';

/**
 * A JSON Schema with every `description` and `title` string cleaned by
 * `sanitizeDescription`; `counter.removed` grows by the number of characters
 * removed. Nothing that validation reads changes. Only the objects and
 * arrays on the way to a changed text are copied: a schema with nothing to
 * clean is returned as it is (the same object), so the catalog, the trust
 * layer and the pins keep one copy of it.
 */
function cleanSchemaTexts(
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

/**
 * Cleans a listed tool's description and schema texts, with a log line for
 * each kind of hidden character removed: the step the trust layer runs for
 * each tool of a listing (the rules are checked later, once every tool is
 * known, with `flagTool` and {@link flagLogLine}). The cleaned schema is for
 * inspect: argument checks keep using the schema as listed; the cleaned
 * description is the only one an agent may see.
 */
export function cleanListedTool(options: {
  name: string;
  description: string | undefined;
  inputSchema?: unknown;
}) {
  const sanitized = sanitizeDescription({ text: options.description ?? '' });
  const counter = { removed: 0 };
  const inputSchema = cleanSchemaTexts(options.inputSchema, counter);
  const logLines: string[] = [];
  const hidden = hiddenCharactersLogLine({ toolName: options.name, sanitized });
  if (hidden !== undefined) logLines.push(hidden);
  if (counter.removed > 0)
    logLines.push(
      `tool "${options.name}": removed ${counter.removed} hidden character${counter.removed === 1 ? '' : 's'} from its input schema's descriptions`,
    );
  return { inputSchema, sanitized, logLines };
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

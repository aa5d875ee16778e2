import { multiplexedName } from '@heretek/internal';
import { assertTargetName } from './backends.js';
import { CatalogError } from './errors.js';
import { SEED_TOOL_SPECS } from './seed-tools.js';
import {
  type Backend,
  TASK_SUPPORT,
  type TaskSupport,
  type ToolAnnotations,
  type ToolEntry,
  type ToolSource,
} from './types.js';

const ANNOTATION_FLAGS = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
] as const;

/**
 * Annotations without a title, one frozen object per set of flags (keyed by each flag's
 * state, absent, false or true, in base 3): a registry's tools mostly carry one of a few.
 */
const SHARED_ANNOTATIONS = new Map<number, Readonly<ToolAnnotations>>();

/** Whether the catalog counts a tool whose listed annotations are these as mutating: unless `readOnlyHint: true`. */
export function isMutatingTool(annotations: unknown): boolean {
  return cleanAnnotations(annotations)?.readOnlyHint !== true;
}

function cleanAnnotations(annotations: unknown): ToolAnnotations | undefined {
  if (
    typeof annotations !== 'object' ||
    annotations === null ||
    Array.isArray(annotations)
  )
    return undefined;
  const record = annotations as Record<string, unknown>;
  let key = 0;
  for (const flag of ANNOTATION_FLAGS) {
    const value = record[flag];
    key = key * 3 + (typeof value === 'boolean' ? (value ? 2 : 1) : 0);
  }
  const titled = typeof record.title === 'string';
  if (!titled && key === 0) return undefined;
  if (!titled) {
    const shared = SHARED_ANNOTATIONS.get(key);
    if (shared !== undefined) return shared;
  }
  const clean: ToolAnnotations = {};
  if (titled) clean.title = record.title as string;
  for (const flag of ANNOTATION_FLAGS) {
    if (typeof record[flag] === 'boolean') clean[flag] = record[flag];
  }
  if (titled) return clean;
  const shared = Object.freeze(clean);
  SHARED_ANNOTATIONS.set(key, shared);
  return shared;
}

/**
 * Turns one tool from a backend's `tools/list` into a catalog entry: qualified name
 * `<target>_<tool>`, `mutating` unless `readOnlyHint === true`, a schema that is always
 * an object (`{ type: 'object' }` when the backend sent something else), and the listing's
 * `execution.taskSupport` when it is one of `forbidden`, `optional`, `required`.
 *
 * @example
 * ```ts
 * const entry = toolEntryFromMcpTool({
 *   backend: { backend: 'iksnerd/adb-mcp', target: 'adb', profile: 'android' },
 *   tool: { name: 'install_apk', description: 'Install an APK', annotations: { readOnlyHint: false } },
 * });
 * entry.name; // 'adb_install_apk'
 * ```
 * @throws CatalogError `INVALID_TOOL` when the tool has no usable name, `INVALID_TARGET` for a bad target.
 */
export function toolEntryFromMcpTool(options: {
  backend: Backend;
  tool: {
    name: string;
    description?: string;
    inputSchema?: unknown;
    annotations?: ToolAnnotations;
    execution?: { taskSupport?: string };
  };
  source?: ToolSource;
}): ToolEntry {
  const { backend, tool } = options;
  assertTargetName(backend.target);
  if (
    typeof tool !== 'object' ||
    tool === null ||
    typeof tool.name !== 'string' ||
    tool.name.trim() === ''
  ) {
    throw new CatalogError({
      code: 'INVALID_TOOL',
      message: `A tool of backend "${backend.backend}" (target "${backend.target}") has no name; every tool needs a non-empty string "name".`,
    });
  }
  const schema =
    typeof tool.inputSchema === 'object' &&
    tool.inputSchema !== null &&
    !Array.isArray(tool.inputSchema)
      ? (tool.inputSchema as Record<string, unknown>)
      : { type: 'object' };
  const annotations = cleanAnnotations(tool.annotations);
  const entry: ToolEntry = {
    name: multiplexedName(backend.target, tool.name),
    target: backend.target,
    tool: tool.name,
    backend: backend.backend,
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema: schema,
    mutating: annotations?.readOnlyHint !== true,
    profile: backend.profile,
    source: options.source ?? 'discovered',
  };
  if (annotations) entry.annotations = annotations;
  const taskSupport = tool.execution?.taskSupport;
  if (
    taskSupport !== undefined &&
    (TASK_SUPPORT as readonly string[]).includes(taskSupport)
  ) {
    entry.taskSupport = taskSupport as TaskSupport;
  }
  return entry;
}

/** The 34 built-in tools over the 12 {@link DEFAULT_BACKENDS}, served until discovery replaces a backend. */
export const SEED_TOOLS: readonly ToolEntry[] = Object.freeze(
  SEED_TOOL_SPECS.map((spec) =>
    Object.freeze(
      toolEntryFromMcpTool({
        backend: {
          backend: spec.backend,
          target: spec.target,
          profile: spec.profile,
        },
        tool: {
          name: spec.tool,
          description: spec.description,
          inputSchema: spec.inputSchema,
          annotations: { readOnlyHint: spec.readOnly },
        },
        source: 'seed',
      }),
    ),
  ),
);

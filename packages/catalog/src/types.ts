/** MCP tool annotations as published by a backend in `tools/list` (all optional hints). */
export type ToolAnnotations = {
  /** Human-readable title of the tool. */
  title?: string;
  /** `true` when the tool does not modify its environment. */
  readOnlyHint?: boolean;
  /** `true` when the tool may perform destructive updates. */
  destructiveHint?: boolean;
  /** `true` when calling the tool repeatedly with the same arguments has no additional effect. */
  idempotentHint?: boolean;
  /** `true` when the tool interacts with an open world of external entities. */
  openWorldHint?: boolean;
};

/** Where a catalog entry came from: the offline seed or a backend's live `tools/list`. */
export type ToolSource = 'seed' | 'discovered';

/** One tool in the catalog. */
export type ToolEntry = {
  /** Qualified, collision-free name `<target>_<tool>`. */
  name: string;
  /** Gateway target the tool is served under (never contains `_`). */
  target: string;
  /** Bare tool name as the backend publishes it. */
  tool: string;
  /** Backend (MCP server) identifier, e.g. `iksnerd/adb-mcp`. */
  backend: string;
  /** Tool description (may be empty). */
  description: string;
  /** JSON Schema of the tool's arguments (an object schema; `{ type: 'object' }` when unknown). */
  inputSchema: Record<string, unknown>;
  /** Annotations published by the backend, if any. */
  annotations?: ToolAnnotations;
  /** `true` unless the backend marks the tool `readOnlyHint: true` (unknown means mutating). */
  mutating: boolean;
  /** Profile the tool belongs to (`core` tools are visible in every profile). */
  profile: string;
  /** Whether the entry comes from the offline seed or from discovery. */
  source: ToolSource;
  /**
   * The listing's `execution.taskSupport` (MCP tasks): `required` tools are
   * called as a task. Absent when the listing says nothing (or something else).
   */
  taskSupport?: TaskSupport;
};

/** Values of a listed tool's `execution.taskSupport`. */
export const TASK_SUPPORT = ['forbidden', 'optional', 'required'] as const;
export type TaskSupport = (typeof TASK_SUPPORT)[number];

/** One configured backend: which gateway target serves it and under which profile. */
export type Backend = {
  /** Backend (MCP server) identifier. */
  backend: string;
  /** Gateway target name: letters, digits, `-` and `.`, never `_`. */
  target: string;
  /** Profile of the backend's tools. */
  profile: string;
};

/** One search hit, compact enough to hand to an agent. */
export type SearchHit = {
  /** Qualified tool name. */
  name: string;
  /** Gateway target of the tool. */
  target: string;
  /** One-line description, cut to 160 code points at a word boundary when one is near, never inside a grapheme. */
  description: string;
  /** Whether calling the tool may change something. */
  mutating: boolean;
  /** Relevance score (higher is better; only comparable within one result). */
  score: number;
};

/** The answer of {@link ToolCatalog.search}. */
export type SearchResult = {
  /** Ranked hits, best first; empty when nothing matched well. */
  hits: SearchHit[];
  /** Query words that matched no tool in the searched scope, in query order, so the agent can rephrase. */
  unmatchedTerms: string[];
};

/** Raw specification of one seed tool (the data behind {@link SEED_TOOLS}): a description written for search, and whether the backend marks it read-only. */
export type SeedToolSpec = Backend &
  Pick<ToolEntry, 'tool' | 'description' | 'inputSchema'> & {
    readOnly: boolean;
  };

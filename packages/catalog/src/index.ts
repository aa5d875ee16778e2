export { VERSION } from './version.js';
export type {
  ToolAnnotations,
  ToolEntry,
  ToolSource,
  Backend,
  SearchHit,
  SearchResult,
  SeedToolSpec,
} from './types.js';
export { CatalogError, type CatalogErrorCode } from './errors.js';
export {
  DEFAULT_BACKENDS,
  loadBackends,
  parseBackend,
  assertTargetName,
} from './backends.js';
export { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
export {
  ToolCatalog,
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  MAX_QUERY_CHARS,
} from './catalog.js';
export { CORE_PROFILE } from './snapshot.js';
export {
  DEFAULT_TUNING,
  type SearchTuning,
  type SearchTuningOverrides,
  type FieldTuning,
} from './bm25f.js';
export {
  renderHit,
  compactDescription,
  MAX_HIT_DESCRIPTION_CHARS,
} from './render.js';
export {
  analyzeText,
  analyzeQuery,
  splitWords,
  stemWord,
  STOP_WORDS,
  type QueryWord,
} from './tokenizer.js';
export {
  loadBenchmark,
  evaluateRankings,
  rankWithCatalog,
  rankWithPlainBm25,
  targetFromServerName,
  type BenchmarkData,
  type BenchmarkQuery,
  type BenchmarkTool,
  type EvaluationReport,
  type RetrievalMetrics,
} from './evaluate.js';
export { PlainBm25, type PlainDocument } from './plain-bm25.js';

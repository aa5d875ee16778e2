export { VERSION } from './version.js';
export type {
  ToolAnnotations,
  ToolEntry,
  ToolSource,
  TaskSupport,
  Backend,
  SearchHit,
  SearchResult,
} from './types.js';
export { CatalogError, CatalogErrorCode } from './errors.js';
export { DEFAULT_BACKENDS, loadBackends } from './backends.js';
export { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
export {
  ToolCatalog,
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  type RestoreCatalogOptions,
  type RestoreCatalogResult,
} from './catalog.js';
export {
  describeSavedCatalog,
  SAVED_CATALOG_VERSION,
  type SavedCatalogInfo,
  type SavedCatalogStream,
  type SavedCatalogTarget,
} from './saved-catalog.js';
export {
  DEFAULT_TUNING,
  type SearchTuning,
  type SearchTuningOverrides,
} from './bm25f.js';
export { renderHit } from './render.js';
export { MAX_USES, MAX_USES_PER_TOOL, type UsageRecord } from './usage.js';
export { DEFAULT_FUSION, type Fusion } from './fusion.js';
export type { SearchVectors } from './hybrid.js';
export {
  checkEmbeddingsUrl,
  openAiEmbeddings,
  toolEmbeddingText,
  type OpenAiEmbeddingsOptions,
  type VectorProvider,
} from './embeddings.js';

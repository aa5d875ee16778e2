// The package version, for logs and saved catalogs.
export { VERSION } from './version.js';
// The data shapes of entries, backends and search answers.
export type {
  ToolAnnotations,
  ToolEntry,
  ToolSource,
  TaskSupport,
  Backend,
  SearchHit,
  SearchResult,
} from './types.js';
// Every error the package throws, and its codes.
export { CatalogError, CatalogErrorCode } from './errors.js';
// Backends and entries: the defaults, the backends file, and a listed tool as an entry.
export { DEFAULT_BACKENDS, loadBackends } from './backends.js';
export { SEED_TOOLS, isMutatingTool, toolEntryFromMcpTool } from './entries.js';
// The catalog: search, backend changes, the saved form, learning from use.
export {
  ToolCatalog,
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  type RestoreCatalogOptions,
  type RestoreCatalogResult,
} from './catalog.js';
// The saved catalog: its header, its bytes, one target as its header lists it.
export type {
  SavedCatalog,
  SavedCatalogHeader,
  SavedCatalogStream,
  SavedCatalogTarget,
} from './saved-catalog.js';
// The scoring knobs of `new ToolCatalog({ tuning })` and their defaults.
export {
  DEFAULT_TUNING,
  type SearchTuning,
  type SearchTuningOverrides,
} from './search-tuning.js';
// One hit as an agent reads it.
export { renderHit } from './render.js';
// The caps and records of learned usage.
export { MAX_USES, MAX_USES_PER_TOOL, type UsageRecord } from './usage.js';
// Hybrid ranking: the `vectors` option of search, its knob, and vectors from an endpoint.
export { DEFAULT_FUSION, type Fusion } from './fusion.js';
export type { SearchVectors } from './hybrid.js';
export {
  checkEmbeddingsUrl,
  openAiEmbeddings,
  toolEmbeddingText,
  type OpenAiEmbeddingsOptions,
  type VectorProvider,
} from './embeddings.js';

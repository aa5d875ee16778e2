export { VERSION } from './version.js';
export type { ToolAnnotations, ToolEntry, ToolSource, Backend, SearchHit, SearchResult, SeedToolSpec } from './types.js';
export { CatalogError, type CatalogErrorCode } from './errors.js';
export { DEFAULT_BACKENDS, loadBackends, parseBackend, assertTargetName } from './backends.js';
export { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
export { ToolCatalog, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, RELATIVE_SCORE_CUTOFF, CORE_PROFILE } from './catalog.js';
export { renderHit, compactDescription, MAX_HIT_DESCRIPTION_CHARS } from './render.js';
export { analyzeText, analyzeQuery, splitWords, stemWord, STOP_WORDS, type QueryWord } from './tokenizer.js';

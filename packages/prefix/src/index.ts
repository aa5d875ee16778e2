export {
  ROLE_NAMES,
  ROLES,
  UnknownRoleError,
  canCallMutating,
  getRole,
  isReadOnlyRole,
  isRoleName,
  parseRoleName,
} from './roles.js';
export type { RoleDefinition, RoleName, RolePermissions } from './roles.js';
export { PROFILE_NAMES, isProfileName, parseProfileName } from './profiles.js';
export type { ProfileName } from './profiles.js';
export { BACKENDS, PROFILE_PURPOSES, backendsForProfile } from './backends.js';
export type { BackendDefinition } from './backends.js';
export {
  InvalidArgumentError,
  PrefixError,
  RoleFileError,
  TooManyCacheBreakpointsError,
  UnknownProfileError,
} from './errors.js';
export type { PrefixErrorCode, RoleFileErrorCode } from './errors.js';
export { normalizeSourceText } from './normalize.js';
export {
  LAYER_NAMES,
  PROTOCOL_FILE,
  SHARED_CONTEXT_FILE,
  assemblePrefixCachedPrompt,
  renderPermissions,
  renderProfile,
  roleFileFor,
  sliceUtf8,
} from './assemble.js';
export type {
  AssembledPrefix,
  AssemblePrefixOptions,
  LayerName,
  PrefixLayer,
} from './assemble.js';
export { TOKEN_ENCODING, estimateTokens } from './tokens.js';
export {
  CACHE_PROVIDERS,
  MINIMUM_CACHEABLE_TOKENS,
  lookupMinimumCacheableTokens,
} from './cache-minimums.js';
export type {
  CacheProvider,
  MinimumCacheableLength,
  MinimumCacheableLookup,
} from './cache-minimums.js';
export {
  ANTHROPIC_MAX_CACHE_BREAKPOINTS,
  CACHE_SEGMENTS,
  checkCacheableLengths,
  toAnthropicSystem,
  toOpenAIPromptCache,
} from './adapters.js';
export type {
  AnthropicSystem,
  AnthropicSystemTextBlock,
  CacheLengthWarning,
  CacheSegment,
  OpenAIPromptCache,
} from './adapters.js';
export { diffPrompts, measurePrompt, measureWorkspace } from './compare.js';
export type {
  LayerMeasurement,
  PromptDiff,
  PromptMeasurement,
  WorkspaceMeasurement,
} from './compare.js';
export { VERSION } from './version.js';

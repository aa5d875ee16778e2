export { VERSION } from './version.js';
export {
  ROLE_NAMES,
  ROLES,
  UnknownRoleError,
  canCallMutating,
  getRole,
  isReadOnlyRole,
  isRoleName,
  parseRoleName,
  roleDescription,
} from './roles.js';
export type { RoleDefinition, RoleName } from './roles.js';
export {
  HARNESS_NAMES,
  HARNESS_TOOLS,
  READ_ONLY_SHELL_POLICIES,
  READ_ONLY_SHELL_VARIABLE,
  decideHarnessToolCall,
  parseReadOnlyShellPolicy,
} from './harness-tools.js';
export type {
  HarnessName,
  HarnessToolCall,
  HarnessToolDecision,
  HarnessToolEffect,
  ReadOnlyShellPolicy,
} from './harness-tools.js';
export { checkReadOnlyShellCommand } from './read-only-shell.js';
export type { ShellCheck } from './read-only-shell.js';
export { PROFILE_NAMES } from './profiles.js';
export type { ProfileName } from './profiles.js';
export {
  InvalidArgumentError,
  PrefixError,
  RoleFileError,
  TooManyCacheBreakpointsError,
  UnknownProfileError,
} from './errors.js';
export { PrefixErrorCode } from './errors.js';
export { assemblePrefixCachedPrompt, splitAtFrozenPrefix } from './assemble.js';
export type {
  AssembledPrefix,
  AssemblePrefixOptions,
  PrefixLayer,
} from './assemble.js';
export { lookupMinimumCacheableTokens } from './cache-minimums.js';
export {
  checkCacheableLengths,
  frozenPromptCacheKey,
  toAnthropicSystem,
  toOpenAIPromptCache,
} from './adapters.js';
export type {
  AnthropicSystem,
  CacheLengthWarning,
  CacheSegment,
  OpenAIPromptCache,
} from './adapters.js';
export { diffPrompts, measurePrompt, measureWorkspace } from './compare.js';
export type {
  PromptDiff,
  PromptMeasurement,
  WorkspaceMeasurement,
} from './compare.js';

export {
  createErrorFamily,
  errorClass,
  mismatchErrorClass,
  type Mismatch,
} from './error-family.js';
export {
  GATEWAY_MODES,
  MAX_TARGET_NAME_LENGTH,
  type GatewayMode,
  multiplexedName,
  TARGET_NAME_PATTERN,
  TARGET_NAME_RULE,
  splitMultiplexedName,
  targetNameProblem,
} from './target-name.js';
export {
  DEFAULT_BACKENDS,
  PROFILE_NAMES,
  PROFILE_PURPOSES,
  isProfileName,
  type BackendDefinition,
  type ProfileName,
} from './backends.js';
export { sha256Hex, sha256Tag } from './digest.js';
export { thrownCode } from './thrown-code.js';
export { UsageError, isUsageError } from './usage-error.js';
export {
  HOOK_ROLES_DIR_VARIABLE,
  TOOL_USE_ID_META_KEY,
  callerRoleRecordPath,
  type CallerRoleRecord,
} from './caller-role-record.js';

// The broker's trust layer (pinned definitions, cleaned descriptions, flagged
// injections). The broker's discovery, search, inspect and call paths use it
// through these entry points.
export {
  changeSummary,
  definitionHash,
  describeChange,
  diffDefinitions,
  isChanged,
  normalizeDefinition,
  type DefinitionChange,
  type DefinitionPart,
  type NormalizedDefinition,
  type ToolDefinition,
} from './definition-hash.js';
export {
  INJECTION_RULES,
  createShadowingContext,
  flagTool,
  flaggedMark,
  schemaTexts,
  type InjectionFlag,
  type InjectionRule,
  type InjectionRuleId,
  type ShadowingContext,
} from './injection-rules.js';
export {
  CHANGED_MARK,
  PIN_POLICIES,
  pinVerdict,
  type PinPolicy,
  type PinVerdict,
} from './pin-policy.js';
export {
  PINS_FILE_VERSION,
  PinStore,
  serializePinsFile,
  type AcceptedPin,
  type ObserveResult,
  type PinEntry,
  type PinStatus,
  type PinsFile,
  type ReadOnlyReason,
} from './pin-store.js';
export {
  describePins,
  formatPendingPins,
  formatPinsDescription,
  type PinsDescription,
} from './pin-report.js';
export {
  cleanSchemaTexts,
  reviewTool,
  type ToolReview,
} from './review-tool.js';
export { TrustLayer, type ListedTool } from './trust-layer.js';
export {
  hiddenCharactersLogLine,
  revealInvisible,
  sanitizeDescription,
  type HiddenCharacterClass,
  type SanitizedDescription,
} from './sanitize.js';
export { heretekStateDir } from './state-dir.js';
export { writeFileAtomic } from './state-file.js';
export { TrustError, type TrustErrorCode } from './trust-error.js';

export {
  HANDOFF_ENVELOPE_VERSION,
  HANDOFF_LIMITS,
  HANDOFF_MEDIA_TYPE,
  canReceiveHandoff,
  handoffEnvelopeSchema,
  isArtifactUri,
} from './envelope-schema.js';
export type {
  HandoffArtifact,
  HandoffConstraints,
  HandoffEnvelope,
  HandoffEnvelopeInput,
  HandoffIntent,
  HandoffTask,
} from './envelope-schema.js';
export {
  createHandoff,
  handoffDigest,
  newTraceId,
  parseHandoff,
  serializeHandoff,
  sha256Digest,
  verifyHandoffDigest,
} from './envelope.js';
export type { CreateHandoffOptions, RoleName } from './envelope.js';
export {
  A2A_LEGACY_PROTOCOL_VERSION,
  A2A_PROTOCOL_VERSION,
  AGENT_CARD_WELL_KNOWN_PATH,
  agentCardFor,
  agentCardsForAllRoles,
  skillsForRole,
} from './agent-card.js';
export type {
  A2AAgentCapabilities,
  A2AAgentInterface,
  A2AAgentProvider,
  A2AAgentSkill,
  A2AProtocolBinding,
  A2ASecuritySchemeV1,
  AgentCardOptions,
  AgentCardOptionsV03,
  AgentCardOptionsV1,
  AgentCardV03,
  AgentCardV1,
} from './agent-card.js';
export {
  HANDOFF_DIGEST_METADATA_KEY,
  handoffFromA2AMessage,
  handoffToA2AMessage,
} from './a2a-message.js';
export type { A2AHandoffMessage } from './a2a-message.js';
export {
  HANDOFF_ERROR_CODES,
  HandoffDigestMismatchError,
  HandoffError,
  HandoffValidationError,
  ReadOnlyRecipientError,
} from './errors.js';
export type { HandoffErrorCode, HandoffIssue } from './errors.js';
export { formatPath } from './issues.js';
export { VERSION } from './version.js';

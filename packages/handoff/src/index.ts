export { VERSION } from './version.js';
export {
  HANDOFF_LIMITS,
  HANDOFF_MEDIA_TYPE,
  canReceiveHandoff,
  handoffEnvelopeSchema,
} from './envelope-schema.js';
export type {
  HandoffArtifact,
  HandoffEnvelope,
  HandoffEnvelopeInput,
  HandoffIntent,
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
export type { CreateHandoffOptions } from './envelope.js';
export {
  AGENT_CARD_WELL_KNOWN_PATH,
  agentCardFor,
  agentCardsForAllRoles,
} from './agent-card.js';
export type {
  AgentCardOptions,
  AgentCardV03,
  AgentCardV1,
} from './agent-card.js';
export { handoffFromA2AMessage, handoffToA2AMessage } from './a2a-message.js';
export type { A2AHandoffMessage } from './a2a-message.js';
export {
  HandoffDigestMismatchError,
  HandoffError,
  HandoffValidationError,
  ReadOnlyRecipientError,
} from './errors.js';
export { HandoffErrorCode, type HandoffIssue } from './errors.js';

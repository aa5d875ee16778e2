/**
 * Typed errors of `@heretek/handoff`. Every error thrown by this package is a
 * {@link HandoffError}: it carries a stable string {@link HandoffErrorCode},
 * says whether retrying can help, and has a message that says what to fix.
 */
import {
  createErrorFamily,
  errorClass,
  mismatchErrorClass,
} from '@heretek/internal';

/**
 * Stable error codes. Match on these, never on messages.
 *
 * - `INVALID_JSON`: `parseHandoff` got a string that is not JSON.
 * - `INVALID_ENVELOPE`: the value breaks the envelope schema (missing or
 *   unknown keys, unknown roles, bad digests ...). `issues` names every path.
 * - `UNSUPPORTED_VERSION`: the envelope declares a `version` this package
 *   does not speak.
 * - `READ_ONLY_RECIPIENT`: mutating work was handed to a read-only role.
 * - `DIGEST_MISMATCH`: an envelope does not have the digest it was expected to.
 * - `UNKNOWN_ROLE`: `agentCardFor` was asked for a role that does not exist.
 * - `INVALID_AGENT_CARD_OPTIONS`: `agentCardFor` options break their schema.
 * - `INVALID_A2A_MESSAGE`: `handoffFromA2AMessage` got a message without
 *   exactly one handoff data part.
 */
export const HandoffErrorCode = {
  InvalidJson: 'INVALID_JSON',
  InvalidEnvelope: 'INVALID_ENVELOPE',
  UnsupportedVersion: 'UNSUPPORTED_VERSION',
  ReadOnlyRecipient: 'READ_ONLY_RECIPIENT',
  DigestMismatch: 'DIGEST_MISMATCH',
  UnknownRole: 'UNKNOWN_ROLE',
  InvalidAgentCardOptions: 'INVALID_AGENT_CARD_OPTIONS',
  InvalidA2aMessage: 'INVALID_A2A_MESSAGE',
} as const;

/**
 * One problem found while validating a value: where it is and what is wrong.
 */
export type HandoffIssue = {
  /** Path to the offending value, e.g. `artifacts[0].digest`; `(root)` for the value itself. */
  readonly path: string;
  /** The path as a list of keys and indexes. */
  readonly pathSegments: readonly (string | number)[];
  /**
   * Kind of problem: `unknown_key`, `unknown_role`, or the zod issue code
   * (`invalid_type`, `invalid_format`, `too_big` ...).
   */
  readonly code: string;
  /** What is wrong and what to do about it. */
  readonly message: string;
};

type ValidationCode = Extract<
  HandoffErrorCode,
  | 'INVALID_JSON'
  | 'INVALID_ENVELOPE'
  | 'UNSUPPORTED_VERSION'
  | 'UNKNOWN_ROLE'
  | 'INVALID_AGENT_CARD_OPTIONS'
  | 'INVALID_A2A_MESSAGE'
>;

const VALIDATION_CODES: readonly string[] = [
  'INVALID_JSON',
  'INVALID_ENVELOPE',
  'UNSUPPORTED_VERSION',
  'UNKNOWN_ROLE',
  'INVALID_AGENT_CARD_OPTIONS',
  'INVALID_A2A_MESSAGE',
] satisfies readonly ValidationCode[];

/**
 * Base class of every error thrown by `@heretek/handoff`. Use
 * {@link HandoffError.isInstance} rather than `instanceof`: it also holds for
 * errors from another copy of this package (marker
 * `Symbol.for('heretek.handoff.error')`). `isRetryable` is always false:
 * every failure of this package is about the input, not the moment.
 */
export class HandoffError extends createErrorFamily<typeof HandoffErrorCode>(
  'handoff',
) {}

/** One of the {@link HandoffErrorCode} values. */
export type HandoffErrorCode = HandoffError['code'];

/**
 * The input broke a schema: the envelope (`INVALID_ENVELOPE`), the JSON text
 * (`INVALID_JSON`), the envelope version (`UNSUPPORTED_VERSION`), the agent
 * card options (`INVALID_AGENT_CARD_OPTIONS`), the role (`UNKNOWN_ROLE`) or
 * an A2A message carrying an envelope (`INVALID_A2A_MESSAGE`).
 * `issues` lists every problem with its path.
 */
export class HandoffValidationError extends HandoffError {
  static override readonly codes = VALIDATION_CODES;
  declare readonly code: ValidationCode;
  /** Every problem found, each naming its path. Never empty. */
  readonly issues: readonly HandoffIssue[];

  constructor({
    code,
    subject,
    issues,
    cause,
  }: {
    code: ValidationCode;
    /** What was being validated, e.g. `handoff envelope`. */
    subject: string;
    issues: readonly HandoffIssue[];
    cause?: unknown;
  }) {
    const count =
      issues.length === 1 ? '1 problem' : `${issues.length} problems`;
    const lines = issues.map((issue) => `  - ${issue.path}: ${issue.message}`);
    super({
      code,
      message: `Invalid ${subject} (${count}):\n${lines.join('\n')}`,
      cause,
    });
    this.issues = Object.freeze([...issues]);
  }
}

/** Mutating work was handed to a role that may never change anything. */
export class ReadOnlyRecipientError extends errorClass(HandoffError, {
  code: HandoffErrorCode.ReadOnlyRecipient,
  message: ({
    from,
    to,
  }: {
    /** The role that handed the work over. */
    from: string;
    /** The read-only role that was asked to do mutating work. */
    to: string;
  }) =>
    `Refused handoff from ${JSON.stringify(from)} to ${JSON.stringify(to)}: ` +
    `${JSON.stringify(to)} is a read-only role and cannot take intent "mutating". ` +
    'Hand the work to a role that may change things, or send it with intent "read-only".',
  keep: ['from', 'to'],
}) {}

/**
 * An envelope's digest (`actual`, as received) is not the one the caller
 * expected (`expected`).
 */
export class HandoffDigestMismatchError extends mismatchErrorClass(
  HandoffError,
  {
    code: HandoffErrorCode.DigestMismatch,
    message: ({ expected, actual }) =>
      `Handoff envelope digest mismatch: expected ${expected}, got ${actual}. ` +
      'The envelope changed after the digest was taken; do not act on it.',
  },
) {}

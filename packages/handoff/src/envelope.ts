import { randomBytes } from 'node:crypto';
import { sha256Tag } from '@heretek/internal';
import canonicalize from 'canonicalize';
import {
  HANDOFF_ENVELOPE_VERSION,
  HANDOFF_LIMITS,
  canReceiveHandoff,
  handoffEnvelopeShape,
  type HandoffEnvelope,
  type HandoffEnvelopeInput,
} from './envelope-schema.js';
import {
  HandoffDigestMismatchError,
  HandoffValidationError,
  ReadOnlyRecipientError,
  HandoffErrorCode,
} from './errors.js';
import { toHandoffIssues } from './issues.js';

const SUBJECT = `handoff envelope v${HANDOFF_ENVELOPE_VERSION}`;

/**
 * What {@link createHandoff} takes: the envelope without `version`, with
 * `traceId` and `createdAt` optional (generated when absent).
 */
export type CreateHandoffOptions = Omit<
  HandoffEnvelopeInput,
  'version' | 'traceId' | 'createdAt'
> & {
  /** W3C trace id to continue; a fresh random one when absent. */
  traceId?: string;
  /** Creation time (RFC 3339 UTC) or a Date; now when absent. */
  createdAt?: string | Date;
};

function enforcePolicy(envelope: HandoffEnvelope): HandoffEnvelope {
  if (!canReceiveHandoff({ to: envelope.to, intent: envelope.intent })) {
    throw new ReadOnlyRecipientError({ from: envelope.from, to: envelope.to });
  }
  return envelope;
}

function fromJsonText(text: string): unknown {
  if (text.length > HANDOFF_LIMITS.jsonTextLength) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.InvalidEnvelope,
      subject: SUBJECT,
      issues: [
        {
          path: '(root)',
          pathSegments: [],
          code: 'too_big',
          message: `envelope text is ${text.length} characters; the limit is ${HANDOFF_LIMITS.jsonTextLength}. Reference large content as artifacts instead of inlining it.`,
        },
      ],
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.InvalidJson,
      subject: SUBJECT,
      issues: [
        {
          path: '(root)',
          pathSegments: [],
          code: 'invalid_json',
          message: `not valid JSON (${(error as Error).message}); send the envelope as one JSON object.`,
        },
      ],
      cause: error,
    });
  }
}

/**
 * Validates a handoff envelope strictly and applies the role policy.
 *
 * Accepts the envelope as a value or as JSON text. Unknown keys (at any
 * depth), unknown roles, malformed digests and trace ids are refused; the
 * error lists every problem with its path. Missing `details`,
 * `acceptanceCriteria`, `artifacts` and `constraints` get their defaults
 * (empty), so an envelope with and without them has the same digest.
 *
 * @throws {@link HandoffValidationError} `INVALID_JSON`, `INVALID_ENVELOPE` or
 *   `UNSUPPORTED_VERSION`.
 * @throws {@link ReadOnlyRecipientError} when intent `mutating` goes to a read-only role.
 *
 * @example
 * ```ts
 * const envelope = parseHandoff(requestBody);
 * if (envelope.to !== myRole) throw new Error('not for me');
 * ```
 */
export function parseHandoff(input: unknown): HandoffEnvelope {
  const value = typeof input === 'string' ? fromJsonText(input) : input;
  if (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'version' in value &&
    Number.isInteger(value.version) &&
    value.version !== HANDOFF_ENVELOPE_VERSION
  ) {
    const version = (value as { version: unknown }).version;
    throw new HandoffValidationError({
      code: HandoffErrorCode.UnsupportedVersion,
      subject: SUBJECT,
      issues: [
        {
          path: 'version',
          pathSegments: ['version'],
          code: 'unsupported_version',
          message: `envelope version ${JSON.stringify(version)} is not supported; this package reads version ${HANDOFF_ENVELOPE_VERSION}. Upgrade @heretek/handoff or ask the sender for version ${HANDOFF_ENVELOPE_VERSION}.`,
        },
      ],
    });
  }
  const result = handoffEnvelopeShape().safeParse(value);
  if (!result.success) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.InvalidEnvelope,
      subject: SUBJECT,
      issues: toHandoffIssues({
        issues: result.error.issues,
        subject: SUBJECT,
      }),
      cause: result.error,
    });
  }
  return enforcePolicy(result.data);
}

/** A fresh W3C trace id: 32 lowercase hex digits from 16 random bytes. */
export function newTraceId(): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (!/^0+$/.test(id)) return id;
  }
}

/**
 * Builds a valid envelope: fills in `version`, a fresh `traceId` and
 * `createdAt` (now) unless given, then validates it like
 * {@link parseHandoff}.
 *
 * @throws {@link HandoffValidationError} when a field is invalid.
 * @throws {@link ReadOnlyRecipientError} when intent `mutating` goes to a read-only role.
 *
 * @example
 * ```ts
 * const envelope = createHandoff({
 *   from: 'director',
 *   to: 'staff-backend',
 *   intent: 'mutating',
 *   task: { title: 'Add rate limiting to /login' },
 *   contextSummary: 'Brute force seen in logs; see the QA report.',
 * });
 * const body = serializeHandoff(envelope); // canonical JSON
 * const digest = handoffDigest(envelope); // "sha256:..."
 * ```
 */
export function createHandoff(options: CreateHandoffOptions): HandoffEnvelope {
  if (
    typeof options !== 'object' ||
    options === null ||
    Array.isArray(options)
  ) {
    return parseHandoff(options); // throws INVALID_ENVELOPE naming the root
  }
  const { traceId, createdAt, ...rest } = options;
  return parseHandoff({
    ...rest,
    version: HANDOFF_ENVELOPE_VERSION,
    traceId: traceId ?? newTraceId(),
    createdAt:
      createdAt instanceof Date
        ? dateToTimestamp(createdAt)
        : (createdAt ?? new Date().toISOString()),
  });
}

/** `Date#toISOString()`, or a value the schema refuses at `createdAt` for an invalid Date. */
function dateToTimestamp(date: Date): string {
  return Number.isNaN(date.getTime()) ? 'Invalid Date' : date.toISOString();
}

/**
 * The canonical JSON text of an envelope: RFC 8785 (JSON Canonicalization
 * Scheme) over the validated envelope, so the same envelope gives the same
 * bytes whatever the key order or whitespace it came with. Validates first.
 *
 * @throws like {@link parseHandoff}.
 */
export function serializeHandoff(
  envelope: HandoffEnvelope | HandoffEnvelopeInput,
): string {
  const parsed = parseHandoff(envelope);
  const text = canonicalize(parsed);
  if (text === undefined) {
    // Unreachable: a parsed envelope is always an object.
    throw new TypeError(
      'canonicalize returned undefined for a handoff envelope.',
    );
  }
  return text;
}

/**
 * `sha256:<hex>` of the given bytes or UTF-8 text: the digest format of
 * envelopes and of artifact references.
 *
 * @example
 * ```ts
 * const artifact = { name: 'report', uri: 'out/report.md', digest: sha256Digest(bytes) };
 * ```
 */
export const sha256Digest: (data: Uint8Array | string) => string = sha256Tag;

/**
 * The envelope's digest: `sha256:<hex>` of the UTF-8 bytes of
 * {@link serializeHandoff}. It does not change with key order, whitespace or
 * omitted defaults, and changes with any value.
 *
 * @throws like {@link parseHandoff}.
 */
export function handoffDigest(
  envelope: HandoffEnvelope | HandoffEnvelopeInput,
): string {
  return sha256Tag(serializeHandoff(envelope));
}

/**
 * Parses an envelope (value or JSON text) and checks it has the expected
 * digest, e.g. the one a sender logged or signed.
 *
 * @throws {@link HandoffDigestMismatchError} when the digests differ.
 * @throws like {@link parseHandoff}.
 */
export function verifyHandoffDigest({
  envelope,
  digest,
}: {
  envelope: unknown;
  digest: string;
}): HandoffEnvelope {
  const parsed = parseHandoff(envelope);
  const actual = handoffDigest(parsed);
  if (actual !== digest) {
    throw new HandoffDigestMismatchError({ expected: digest, actual });
  }
  return parsed;
}

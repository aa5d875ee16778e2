import { HANDOFF_MEDIA_TYPE, type HandoffEnvelope } from './envelope-schema.js';
import { handoffDigest, parseHandoff } from './envelope.js';
import {
  HandoffDigestMismatchError,
  HandoffValidationError,
  HandoffErrorCode,
} from './errors.js';
import { formatPath } from './issues.js';

/** Metadata key under which {@link handoffToA2AMessage} records the envelope digest. */
export const HANDOFF_DIGEST_METADATA_KEY = 'heretek.handoff.digest';

/**
 * An A2A v1.0 `Message` (proto JSON form of `lf.a2a.v1.Message`) carrying one
 * handoff envelope as a data part.
 */
export type A2AHandoffMessage = {
  /** Message id: the envelope digest unless given, so a resent envelope keeps its id. */
  messageId: string;
  /** The envelope's trace id, so every handoff of one trace shares an A2A context. */
  contextId: string;
  /** Always `ROLE_USER`: the sender is the client of the receiving agent. */
  role: 'ROLE_USER';
  /** One data part holding the envelope. */
  parts: [{ data: HandoffEnvelope; mediaType: typeof HANDOFF_MEDIA_TYPE }];
  /** `{ "heretek.handoff.digest": "sha256:..." }`. */
  metadata: Record<string, string>;
};

/**
 * Wraps an envelope in an A2A v1.0 `Message`, ready for `SendMessage` to the
 * recipient's agent (whose card lists {@link HANDOFF_MEDIA_TYPE} as an input
 * mode). Validates the envelope first.
 *
 * @throws like `parseHandoff`.
 *
 * @example
 * ```ts
 * // with @a2a-js/sdk: import { SendMessageRequest } from '@a2a-js/sdk';
 * const message = handoffToA2AMessage({ envelope });
 * await client.sendMessage(SendMessageRequest.fromJSON({ message }));
 * ```
 */
export function handoffToA2AMessage({
  envelope,
  messageId,
}: {
  envelope: HandoffEnvelope;
  /** Message id to use instead of the envelope digest. */
  messageId?: string;
}): A2AHandoffMessage {
  const parsed = parseHandoff(envelope);
  const digest = handoffDigest(parsed);
  return {
    messageId: messageId ?? digest,
    contextId: parsed.traceId,
    role: 'ROLE_USER',
    parts: [{ data: parsed, mediaType: HANDOFF_MEDIA_TYPE }],
    metadata: { [HANDOFF_DIGEST_METADATA_KEY]: digest },
  };
}

function messageError(
  path: (string | number)[],
  message: string,
): HandoffValidationError {
  return new HandoffValidationError({
    code: HandoffErrorCode.InvalidA2aMessage,
    subject: 'A2A handoff message',
    issues: [
      {
        path: formatPath(path),
        pathSegments: path,
        code: 'invalid_message',
        message,
      },
    ],
  });
}

/**
 * Takes the handoff envelope out of an A2A v1.0 `Message` (proto JSON form,
 * e.g. `Message.toJSON(...)` of `@a2a-js/sdk`): the one part whose
 * `mediaType` is {@link HANDOFF_MEDIA_TYPE}, parsed strictly. When the
 * message metadata records a digest, it must match.
 *
 * @throws {@link HandoffValidationError} `INVALID_A2A_MESSAGE` when there is
 *   not exactly one handoff data part; like `parseHandoff` for the envelope.
 * @throws {@link HandoffDigestMismatchError} when the recorded digest differs.
 */
export function handoffFromA2AMessage(message: unknown): HandoffEnvelope {
  if (
    typeof message !== 'object' ||
    message === null ||
    Array.isArray(message)
  ) {
    throw messageError([], 'expected an A2A Message object.');
  }
  const { parts, metadata } = message as {
    parts?: unknown;
    metadata?: unknown;
  };
  if (!Array.isArray(parts))
    throw messageError(['parts'], 'expected an array of parts.');
  const indexes = parts.flatMap((part: unknown, index) =>
    typeof part === 'object' &&
    part !== null &&
    (part as { mediaType?: unknown }).mediaType === HANDOFF_MEDIA_TYPE
      ? [index]
      : [],
  );
  if (indexes.length !== 1) {
    throw messageError(
      ['parts'],
      `expected exactly one part with mediaType ${JSON.stringify(HANDOFF_MEDIA_TYPE)}, found ${indexes.length}.`,
    );
  }
  const index = indexes[0] as number;
  const part = parts[index] as { data?: unknown };
  if (part.data === undefined) {
    throw messageError(
      ['parts', index, 'data'],
      'the handoff part must carry the envelope in "data".',
    );
  }
  const envelope = parseHandoff(part.data);
  const recorded =
    typeof metadata === 'object' && metadata !== null
      ? (metadata as Record<string, unknown>)[HANDOFF_DIGEST_METADATA_KEY]
      : undefined;
  if (recorded !== undefined) {
    const actual = handoffDigest(envelope);
    if (recorded !== actual)
      throw new HandoffDigestMismatchError({
        expected: String(recorded),
        actual,
      });
  }
  return envelope;
}

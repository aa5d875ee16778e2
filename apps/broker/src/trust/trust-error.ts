import { createErrorFamily } from '@heretek/internal';

/**
 * Stable codes of {@link TrustError}:
 * - `PINS_FILE_INVALID`: the pins file is not a pins file this version reads
 *   (bad JSON, unknown version, malformed entry). It is never overwritten.
 * - `PINS_READ_ONLY`: an accept was asked of a read-only pins file.
 * - `PINS_WRITE_FAILED`: the pins file could not be written.
 * - `PIN_UNKNOWN_TOOL`: `--pin <tool>` named a tool the broker has not seen.
 */
export const TrustErrorCode = {
  PinsFileInvalid: 'PINS_FILE_INVALID',
  PinsReadOnly: 'PINS_READ_ONLY',
  PinsWriteFailed: 'PINS_WRITE_FAILED',
  PinUnknownTool: 'PIN_UNKNOWN_TOOL',
} as const;

/** A failure of the pinned-definition store. The message says what to fix. */
export class TrustError extends createErrorFamily<typeof TrustErrorCode>(
  'broker.trust',
) {}

/** One of the {@link TrustErrorCode} values. */
export type TrustErrorCode = TrustError['code'];

import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of bytes or UTF-8 text. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<lowercase hex>` of bytes or UTF-8 text: the tagged digest format of locks and envelopes. */
export function sha256Tag(data: Uint8Array | string): string {
  return `sha256:${sha256Hex(data)}`;
}

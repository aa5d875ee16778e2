import { Buffer } from 'node:buffer';

/**
 * Tools' definition hashes in a compact form: their qualified names, and the
 * SHA-256 of each one's definition (the `sha256:<hex>` of the pins file, as
 * 32 bytes) at the same position of `digests`. What the index cache keeps
 * of a backend's reviewed listing, so that a restart compares its tools with
 * their pins without parsing a hundred thousand hash strings.
 */
export type ToolHashes = {
  readonly names: readonly string[];
  /** {@link DIGEST_BYTES} bytes per name, in the order of `names`. */
  readonly digests: Uint8Array;
  /**
   * The digest of a pins file (`pinsDigest`) in which every one of these
   * tools had a pin with this definition hash, when that was recorded with
   * them: while the pins file read is still that file, they match their pins.
   */
  readonly pinsDigest?: string;
};

/** Bytes of one definition hash in {@link ToolHashes.digests}. */
export const DIGEST_BYTES = 32;

const HASH_PREFIX = 'sha256:';
const HASH = /^sha256:[0-9a-f]{64}$/;

/**
 * The 32 bytes of a `sha256:<64 hex>` string written at `offset` of
 * `bytes`; false (nothing written) for any other string.
 */
export function writeHash(
  hash: string,
  bytes: Uint8Array,
  offset: number,
): boolean {
  if (!HASH.test(hash)) return false;
  Buffer.from(bytes.buffer, bytes.byteOffset + offset, DIGEST_BYTES).write(
    hash.slice(HASH_PREFIX.length),
    'hex',
  );
  return true;
}

/** `sha256:<hex>` of the 32 bytes at `offset` of `bytes`. */
export function hashText(bytes: Uint8Array, offset: number): string {
  return `${HASH_PREFIX}${Buffer.from(bytes.buffer, bytes.byteOffset + offset, DIGEST_BYTES).toString('hex')}`;
}

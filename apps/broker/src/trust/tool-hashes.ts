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

const PREFIX = 'sha256:';
const HASH = /^sha256:[0-9a-f]{64}$/;

/**
 * {@link ToolHashes} of `sha256:<hex>` definition hashes by qualified name;
 * `undefined` when one of them is not such a string.
 */
export function toolHashes(
  hashes: Iterable<readonly [string, string]>,
): ToolHashes | undefined {
  const entries = [...hashes];
  const digests = Buffer.alloc(entries.length * DIGEST_BYTES);
  const names: string[] = [];
  for (const [name, hash] of entries) {
    if (!HASH.test(hash)) return undefined;
    digests.write(
      hash.slice(PREFIX.length),
      names.length * DIGEST_BYTES,
      'hex',
    );
    names.push(name);
  }
  return { names, digests };
}

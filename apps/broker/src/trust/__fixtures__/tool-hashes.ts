// Test fixture: tools' definition hashes in the compact form the index cache
// keeps, made from their `sha256:<hex>` strings.
import { Buffer } from 'node:buffer';
import { DIGEST_BYTES, writeHash, type ToolHashes } from '../tool-hashes.js';

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
    if (!writeHash(hash, digests, names.length * DIGEST_BYTES))
      return undefined;
    names.push(name);
  }
  return { names, digests };
}

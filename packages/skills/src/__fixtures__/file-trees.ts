// Test fixture: fast-check arbitraries of small file trees (paths of one to
// three segments, ASCII and non-ASCII names, random bytes), for the tree-hash
// and tamper property tests.
import fc from 'fast-check';

/** One path segment: a short ASCII name other than `.`, `..` and `reserved`. */
export const pathSegment = (reserved: readonly string[] = []) =>
  fc
    .stringMatching(/^[A-Za-z0-9._-]{1,8}$/)
    .filter(
      (name) => name !== '.' && name !== '..' && !reserved.includes(name),
    );

const nonAsciiSegment = fc.constantFrom('é', 'ß', '｡', '😀', 'Ω-x', 'a b');

/**
 * Up to `maxFiles` files with distinct paths, each of at most `maxBytes`
 * random bytes; no segment is one of `reserved`.
 */
export function fileTrees({
  reserved = [],
  maxBytes,
  maxFiles,
}: {
  reserved?: readonly string[];
  maxBytes: number;
  maxFiles: number;
}) {
  return fc.uniqueArray(
    fc.record({
      path: fc.array(fc.oneof(pathSegment(reserved), nonAsciiSegment), {
        minLength: 1,
        maxLength: 3,
      }),
      content: fc.uint8Array({ maxLength: maxBytes }),
    }),
    { maxLength: maxFiles, selector: (file) => file.path.join('/') },
  );
}

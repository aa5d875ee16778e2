/**
 * Token estimates and prompt diffs need `js-tiktoken` (about 22 MB of rank
 * tables) and `diff`. Both are optional peer dependencies, so a user who
 * imports the package for the role table alone installs neither. They are
 * loaded on first use, synchronously, so the functions that need them keep
 * their synchronous signatures.
 */
import { createRequire } from 'node:module';
import { PrefixError, PrefixErrorCode } from './errors.js';

const load = createRequire(import.meta.url);

/** An optional peer dependency: the npm name and the version range to install. */
export type OptionalPeer = {
  readonly name: string;
  readonly range: string;
  /** What needs it, to start the error message: "Token estimates". */
  readonly purpose: string;
};

/** js-tiktoken: o200k_base token estimates. Keep `range` equal to package.json's peerDependencies. */
export const TOKENIZER_PEER: OptionalPeer = {
  name: 'js-tiktoken',
  range: '^1.0.21',
  purpose:
    'Token estimates (measurePrompt, measureWorkspace, checkCacheableLengths and the adapters’ cache warnings)',
};

/** diff (jsdiff): the unified diff of diffPrompts. Keep `range` equal to package.json's peerDependencies. */
export const DIFF_PEER: OptionalPeer = {
  name: 'diff',
  range: '^8.0.4',
  purpose: 'Prompt diffs (diffPrompts)',
};

/**
 * `require(specifier)` of a module of `peer`. Throws a {@link PrefixError}
 * with code `OPTIONAL_DEPENDENCY_MISSING` naming the package to install when
 * it is not installed.
 */
export function requireOptionalPeer<T>(
  specifier: string,
  peer: OptionalPeer,
): T {
  try {
    return load(specifier) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND')
      throw error;
    throw new PrefixError({
      code: PrefixErrorCode.OptionalDependencyMissing,
      message: `${peer.purpose} need ${peer.name}, an optional peer dependency of @heretek/prefix that is not installed: run \`npm install ${peer.name}@${peer.range}\` (or your package manager's equivalent).`,
      cause: error,
    });
  }
}

/**
 * One way to declare a package's error family: a base class whose instances
 * carry a stable string `code`, an `isRetryable` flag and a `Symbol.for`
 * marker, so `isInstance` holds across duplicated copies of a package (two
 * versions in one `node_modules`, or a copy bundled into another package).
 *
 * @example
 * ```ts
 * export type SkillErrorCode = 'SKILL_HASH_MISMATCH' | 'SKILL_LOCK_MISSING';
 * export class SkillError extends createErrorFamily<SkillErrorCode>('skills') {}
 * export class SkillHashMismatchError extends SkillError {
 *   constructor(skillName: string) {
 *     super({ code: 'SKILL_HASH_MISMATCH', message: `Skill ${skillName} changed.` });
 *   }
 * }
 * SkillError.isInstance(error); // true for every error of the family
 * ```
 */
export function createErrorFamily<Code extends string>(family: string) {
  const marker = Symbol.for(`heretek.${family}.error`);

  /** Base class of the family; see {@link createErrorFamily}. */
  class FamilyError extends Error {
    /** Stable machine-readable reason. Match on it, never on the message. */
    readonly code: Code;
    /** Whether the same call may succeed later without changes. */
    readonly isRetryable: boolean;

    constructor(init: {
      code: Code;
      message: string;
      cause?: unknown;
      isRetryable?: boolean;
    }) {
      super(
        init.message,
        init.cause === undefined ? undefined : { cause: init.cause },
      );
      this.name = new.target.name;
      this.code = init.code;
      this.isRetryable = init.isRetryable ?? false;
      Object.defineProperty(this, marker, { value: true, enumerable: false });
    }

    /** True for any error of this family, also across duplicated copies of the package. */
    static isInstance(error: unknown): error is FamilyError {
      return (
        typeof error === 'object' &&
        error !== null &&
        (error as Record<symbol, unknown>)[marker] === true
      );
    }
  }
  return FamilyError;
}

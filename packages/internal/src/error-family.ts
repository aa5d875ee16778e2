/**
 * One way to declare a package's error family: a base class whose instances
 * carry a stable string `code`, an `isRetryable` flag and a `Symbol.for`
 * marker, so `isInstance` holds across duplicated copies of a package (two
 * versions in one `node_modules`, or a copy bundled into another package).
 *
 * `Codes` is the type of the package's table of codes (a `const` object, as
 * the SDK's `SdkErrorCode`); a code is one of its values, and the package
 * names that type after its base class (`FooError['code']`). A subclass that
 * stands for some of the codes lists them in `static codes`, and its
 * `isInstance` then holds only for errors with one of them.
 *
 * @example
 * ```ts
 * export const SkillErrorCode = {
 *   HashMismatch: 'SKILL_HASH_MISMATCH',
 *   LockMissing: 'SKILL_LOCK_MISSING',
 * } as const;
 * export class SkillError extends createErrorFamily<typeof SkillErrorCode>('skills') {}
 * export type SkillErrorCode = SkillError['code'];
 * export class SkillHashMismatchError extends SkillError {
 *   static override readonly codes = [SkillErrorCode.HashMismatch];
 *   constructor(skillName: string) {
 *     super({ code: SkillErrorCode.HashMismatch, message: `Skill ${skillName} changed.` });
 *   }
 * }
 * SkillError.isInstance(error); // true for every error of the family
 * SkillHashMismatchError.isInstance(error); // true for SKILL_HASH_MISMATCH only
 * ```
 */
export function createErrorFamily<
  Codes extends Readonly<Record<string, string>>,
>(family: string) {
  type Code = Codes[keyof Codes];
  const marker = Symbol.for(`heretek.${family}.error`);

  /** Base class of the family; see {@link createErrorFamily}. */
  class FamilyError extends Error {
    /**
     * The codes the errors of this class carry; `undefined` (the family's
     * base) for every code of the family.
     */
    static readonly codes: readonly string[] | undefined = undefined;

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

    /**
     * True for any error of this class (of the family, with one of the
     * class's `codes` where it names them), also across duplicated copies of
     * the package. Call it on the class (`SkillError.isInstance(e)`), not
     * detached.
     */
    static isInstance<
      T extends (abstract new (...args: never[]) => FamilyError) & {
        readonly codes: readonly string[] | undefined;
      },
    >(this: T, error: unknown): error is InstanceType<T> {
      if (
        typeof error !== 'object' ||
        error === null ||
        (error as Record<symbol, unknown>)[marker] !== true
      ) {
        return false;
      }
      return (
        this.codes === undefined ||
        this.codes.includes((error as FamilyError).code)
      );
    }
  }
  return FamilyError;
}

/** The class {@link errorClass} returns, to be extended under its public name. */
type FamilyMemberClass<
  Base extends abstract new (init: never) => Error,
  Code extends string,
  Init,
  Keep extends keyof Init,
> = {
  new (
    init: Init,
  ): InstanceType<Base> & Readonly<Pick<Init, Keep>> & { readonly code: Code };
  readonly codes: Code[];
} & Omit<Base, 'prototype' | 'codes'>;

/** A base whose constructor takes `{ code, message, cause }`, as a family's does. */
type MessageBase = new (init: {
  code: never;
  message: string;
  cause?: unknown;
}) => Error & { readonly code: string };

/**
 * One class of an error family (made by {@link createErrorFamily}, or a class
 * extending one), stated as a row. For a class of one code: the code, how its
 * constructor's argument is worded as the `message` (a `cause` in the
 * argument becomes the error's cause), and which keys of that argument each
 * error keeps as read-only properties (`keep`). For a class of several codes:
 * the `codes`, and `details`, which turns the argument into the base's (the
 * code, the message, a cause). The class's `code` is narrowed to its codes,
 * and its `isInstance` holds only for errors with one of them. Extend the
 * result to give the class its public name:
 *
 * @example
 * ```ts
 * export class SkillNotLockedError extends errorClass(SkillError, {
 *   code: SkillErrorCode.NotLocked,
 *   message: ({ skillName }: { skillName: string }) =>
 *     `Skill "${skillName}" has no entry in .skill-lock.json.`,
 *   keep: ['skillName'],
 * }) {}
 * ```
 */
export function errorClass<
  Base extends MessageBase,
  const Code extends InstanceType<Base>['code'],
  Init,
  const Keep extends keyof Init = never,
>(
  base: Base,
  spec: {
    code: Code;
    message: (init: Init) => string;
    keep?: readonly Keep[];
  },
): FamilyMemberClass<Base, Code, Init, Keep>;
export function errorClass<
  Base extends new (init: never) => Error & { readonly code: string },
  const Code extends InstanceType<Base>['code'],
  Init,
  const Keep extends keyof Init = never,
>(
  base: Base,
  spec: {
    codes: Code[];
    details: (init: Init) => ConstructorParameters<Base>[0] & { code: Code };
    keep?: readonly Keep[];
  },
): FamilyMemberClass<Base, Code, Init, Keep>;
export function errorClass(
  base: new (init: never) => Error,
  spec:
    | {
        code: string;
        message: (init: { cause?: unknown }) => string;
        keep?: readonly PropertyKey[];
      }
    | {
        codes: string[];
        details: (init: never) => unknown;
        keep?: readonly PropertyKey[];
      },
): unknown {
  const keep = spec.keep ?? [];
  const [codes, details] =
    'codes' in spec
      ? [spec.codes, spec.details as (init: unknown) => unknown]
      : [
          [spec.code],
          (init: { cause?: unknown }) => ({
            code: spec.code,
            message: spec.message(init),
            cause: init.cause,
          }),
        ];
  const Parent = base as new (init: unknown) => Error;
  class FamilyMember extends Parent {
    static readonly codes = codes;
    constructor(init: Record<PropertyKey, unknown>) {
      super(details(init));
      for (const key of keep) {
        (this as Record<PropertyKey, unknown>)[key] = init[key];
      }
    }
  }
  return FamilyMember;
}

/** What a mismatch error keeps: the value that was expected and the one found. */
export type Mismatch = {
  /** The value that was expected (declared, pinned or asked for). */
  expected: string;
  /** The value found. */
  actual: string;
};

/**
 * One class of an error family (see {@link errorClass}) for one code, whose
 * errors say that a value is not the one expected: its constructor takes
 * `{ expected, actual }`, keeps both as read-only properties, and `message`
 * words them.
 *
 * @example
 * ```ts
 * export class GrimoireHashMismatchError extends mismatchErrorClass(SkillError, {
 *   code: SkillErrorCode.GrimoireHashMismatch,
 *   message: ({ expected, actual }) => `hashes to ${actual}, declared ${expected}`,
 * }) {}
 * ```
 */
export function mismatchErrorClass<
  Base extends MessageBase,
  const Code extends InstanceType<Base>['code'],
>(base: Base, spec: { code: Code; message: (mismatch: Mismatch) => string }) {
  return errorClass(base, {
    code: spec.code,
    message: (mismatch: Mismatch) => spec.message(mismatch),
    keep: ['expected', 'actual'],
  });
}

import { parseArgs } from 'node:util';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DEFAULT_BACKENDS,
  createErrorFamily,
  errorClass,
  isUsageError,
  mismatchErrorClass,
  UsageError,
  thrownCode,
  multiplexedName,
  sha256Tag,
  splitMultiplexedName,
  targetNameProblem,
} from './index.js';

describe('createErrorFamily', () => {
  const Code = { A: 'a', B: 'b' } as const;
  class DemoError extends createErrorFamily<typeof Code>('demo-test') {}
  class DemoSubError extends DemoError {
    static override readonly codes = [Code.B];
    constructor() {
      super({ code: 'b', message: 'sub', isRetryable: true });
    }
  }
  class OtherError extends createErrorFamily<{ X: 'x' }>('other-test') {}

  it('marks the family across copies and keeps code, retryable and cause', () => {
    const cause = new Error('root');
    const error = new DemoError({ code: 'a', message: 'm', cause });
    expect(DemoError.isInstance(error)).toBe(true);
    expect(DemoError.isInstance(new DemoSubError())).toBe(true);
    expect(OtherError.isInstance(error)).toBe(false);
    expect(DemoError.isInstance(new Error('m'))).toBe(false);
    expect(error.code).toBe('a');
    expect(error.isRetryable).toBe(false);
    expect(error.cause).toBe(cause);
    expect(new DemoSubError().isRetryable).toBe(true);
    expect(new DemoSubError().name).toBe('DemoSubError');
    // A second, independent declaration of the same family (a duplicated package copy).
    class CopyError extends createErrorFamily<typeof Code>('demo-test') {}
    expect(CopyError.isInstance(error)).toBe(true);
  });

  it("holds for a subclass only with one of the subclass's codes, also across copies", () => {
    const sub = new DemoSubError();
    expect(DemoSubError.isInstance(sub)).toBe(true);
    expect(
      DemoSubError.isInstance(new DemoError({ code: 'b', message: 'm' })),
    ).toBe(true);
    expect(
      DemoSubError.isInstance(new DemoError({ code: 'a', message: 'm' })),
    ).toBe(false);
    expect(DemoSubError.isInstance(new Error('m'))).toBe(false);
    class CopyError extends createErrorFamily<typeof Code>('demo-test') {}
    class CopySubError extends CopyError {
      static override readonly codes = [Code.B];
    }
    expect(CopySubError.isInstance(sub)).toBe(true);
    const narrowed: unknown = sub;
    if (DemoSubError.isInstance(narrowed)) {
      const typed: DemoSubError = narrowed;
      expect(typed.code).toBe('b');
    }
  });
});

describe('errorClass', () => {
  const Code = { A: 'a', B: 'b', C: 'c' } as const;
  class DemoError extends createErrorFamily<typeof Code>('demo-row-test') {}
  class PairError extends errorClass(DemoError, {
    codes: [Code.B, Code.C],
    details: ({
      code,
      left,
      right,
      cause,
    }: {
      code: 'b' | 'c';
      left: string;
      right: number;
      cause?: unknown;
    }) => ({ code, message: `${left} ${right}`, cause, isRetryable: true }),
    keep: ['left', 'right'],
  }) {}

  it('builds the base from its row and keeps the named keys only', () => {
    const cause = new Error('root');
    const error = new PairError({ code: 'c', left: 'x', right: 2, cause });
    expect(error).toBeInstanceOf(PairError);
    expect(error).toBeInstanceOf(DemoError);
    expect(error.name).toBe('PairError');
    expect(error.message).toBe('x 2');
    expect(error.code).toBe('c');
    expect(error.isRetryable).toBe(true);
    expect(error.cause).toBe(cause);
    expect({ left: error.left, right: error.right }).toEqual({
      left: 'x',
      right: 2,
    });
    expect(Object.keys(error)).toEqual([
      'code',
      'isRetryable',
      'name',
      'left',
      'right',
    ]);
    expect(PairError.codes).toEqual(['b', 'c']);
    expectTypeOf(PairError.codes).toEqualTypeOf<('b' | 'c')[]>();
    expectTypeOf(error.code).toEqualTypeOf<'b' | 'c'>();
    expectTypeOf(error).toHaveProperty('left').toEqualTypeOf<string>();
  });

  it("holds isInstance for the family's errors with one of its codes", () => {
    const codes = ['a', 'b', 'c'] as const;
    expect(
      codes.map((code) =>
        PairError.isInstance(new DemoError({ code, message: 'm' })),
      ),
    ).toEqual([false, true, true]);
    expect(
      DemoError.isInstance(new PairError({ code: 'b', left: '', right: 0 })),
    ).toBe(true);
    const unknownError: unknown = new PairError({
      code: 'b',
      left: 'l',
      right: 1,
    });
    if (!PairError.isInstance(unknownError)) throw new Error('not narrowed');
    expectTypeOf(unknownError).toEqualTypeOf<PairError>();
    expect(unknownError.left).toBe('l');
  });
});

describe('classes of one code (errorClass with code and message, mismatchErrorClass)', () => {
  const Code = { Gone: 'gone', Drift: 'drift', Other: 'other' } as const;
  class DemoError extends createErrorFamily<typeof Code>('demo-one-code') {}
  class GoneError extends errorClass(DemoError, {
    code: Code.Gone,
    message: ({ path }: { path: string; cause?: unknown }) => `${path} is gone`,
    keep: ['path'],
  }) {}
  class DriftError extends mismatchErrorClass(DemoError, {
    code: Code.Drift,
    message: ({ expected, actual }) => `found ${actual}, expected ${expected}`,
  }) {}

  /** What every class of one code does: its name, its code, and `isInstance` for that code only. */
  function expectOneCode(
    Class: typeof GoneError | typeof DriftError,
    error: GoneError | DriftError,
    code: 'gone' | 'drift',
  ): void {
    expect(error).toBeInstanceOf(DemoError);
    expect(error.name).toBe(Class.name);
    expect(error.code).toBe(code);
    expect(error.isRetryable).toBe(false);
    expect(Class.codes).toEqual([code]);
    expect(Class.isInstance(error)).toBe(true);
    const other = new DemoError({ code: 'other', message: 'm' });
    expect(Class.isInstance(other)).toBe(false);
  }

  it('words the message from its argument, passes the cause on, and keeps the named keys', () => {
    const cause = new Error('root');
    const error = new GoneError({ path: '/x', cause });
    expectOneCode(GoneError, error, 'gone');
    expect(error.message).toBe('/x is gone');
    expect(error.cause).toBe(cause);
    expect(error.path).toBe('/x');
    expect('cause' in new GoneError({ path: '/y' })).toBe(false);
    expect(Object.keys(error)).toEqual(['code', 'isRetryable', 'name', 'path']);
    expectTypeOf(error.code).toEqualTypeOf<'gone'>();
    expectTypeOf(error).toHaveProperty('path').toEqualTypeOf<string>();
  });

  it('keeps expected and actual of a mismatch and words them', () => {
    const error = new DriftError({ expected: 'e1', actual: 'a1' });
    expectOneCode(DriftError, error, 'drift');
    expect(error.message).toBe('found a1, expected e1');
    expect({ expected: error.expected, actual: error.actual }).toEqual({
      expected: 'e1',
      actual: 'a1',
    });
    expectTypeOf(error.code).toEqualTypeOf<'drift'>();
    expectTypeOf(error).toHaveProperty('actual').toEqualTypeOf<string>();
  });
});

describe('thrownCode', () => {
  class DemoError extends createErrorFamily<{ A: 'a' }>('thrown-code-test') {}

  it("reads the family's code, names any other throw, and is undefined when nothing throws", () => {
    const fail = () => {
      throw new DemoError({ code: 'a', message: 'm' });
    };
    expect(thrownCode(DemoError, fail)).toBe('a');
    expect(
      thrownCode(DemoError, () => {
        throw new Error('boom');
      }),
    ).toBe('not a DemoError: Error: boom');
    expect(thrownCode(DemoError, () => 1)).toBeUndefined();
  });
});

describe('isUsageError', () => {
  it("holds for a UsageError and parseArgs's errors, not for others", () => {
    expect(isUsageError(new UsageError('missing command'))).toBe(true);
    let parseError: unknown;
    try {
      parseArgs({ args: ['--bogus'], options: {} });
    } catch (error) {
      parseError = error;
    }
    expect(isUsageError(parseError)).toBe(true);
    expect(isUsageError(new Error('boom'))).toBe(false);
    expect(isUsageError({ code: 'ENOENT' })).toBe(false);
    expect(isUsageError(undefined)).toBe(false);
  });
});

describe('target names', () => {
  it('follows the agentgateway rule', () => {
    expect(targetNameProblem('ghidra')).toBeUndefined();
    expect(targetNameProblem('crawl4ai.v2-x')).toBeUndefined();
    expect(targetNameProblem('Ghidra')).toMatch(/a-z/);
    expect(targetNameProblem('my_server')).toMatch(/'_' is reserved/);
    expect(targetNameProblem('a+b')).toMatch(/reserved/);
    expect(targetNameProblem('')).toMatch(/empty/);
    expect(targetNameProblem('a'.repeat(254))).toMatch(/254/);
    expect(targetNameProblem(3)).toMatch(/not a string/);
  });
  it('splits multiplexed names at the first underscore', () => {
    expect(splitMultiplexedName('adb_install_apk')).toEqual({
      target: 'adb',
      tool: 'install_apk',
    });
    expect(splitMultiplexedName('Adb_x')).toBeUndefined();
    expect(splitMultiplexedName('_x')).toBeUndefined();
    expect(splitMultiplexedName('adb_')).toBeUndefined();
  });
  it('joins a target and a tool the way it splits them', () => {
    expect(multiplexedName('adb', 'install_apk')).toBe('adb_install_apk');
    expect(splitMultiplexedName(multiplexedName('adb', 'install_apk'))).toEqual(
      { target: 'adb', tool: 'install_apk' },
    );
  });
});

describe('facts', () => {
  it('has 12 default backends with valid, unique targets', () => {
    expect(DEFAULT_BACKENDS).toHaveLength(12);
    expect(new Set(DEFAULT_BACKENDS.map((b) => b.target)).size).toBe(12);
    for (const b of DEFAULT_BACKENDS)
      expect(targetNameProblem(b.target)).toBeUndefined();
  });
  it('tags SHA-256 digests', () => {
    expect(sha256Tag('')).toBe(
      'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });
});

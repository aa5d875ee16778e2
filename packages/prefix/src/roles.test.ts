import { describe, expect, it } from 'vitest';
import {
  ROLE_NAMES,
  ROLES,
  PrefixError,
  RoleFileError,
  UnknownRoleError,
  canCallMutating,
  getRole,
  isReadOnlyRole,
  parseRoleName,
  roleDescription,
} from './index.js';

describe('roles', () => {
  it('defines exactly the six roles of the spec', () => {
    expect(ROLE_NAMES.join(' ')).toBe(
      'director staff-backend staff-frontend staff-mobile security-researcher qa-adversary',
    );
    expect(Object.keys(ROLES).sort()).toEqual([...ROLE_NAMES].sort());
  });

  it('makes director and qa-adversary read-only and every other role a writer', () => {
    const readOnly = ROLE_NAMES.filter((r) => isReadOnlyRole(r));
    expect(readOnly).toEqual(['director', 'qa-adversary']);
    for (const role of ROLE_NAMES) {
      expect(canCallMutating(role)).toBe(!readOnly.includes(role));
      expect(getRole(role).permissions.canReceiveMutatingWork).toBe(
        !readOnly.includes(role),
      );
    }
  });

  it('describes each role by its summary, and says so for a read-only role', () => {
    expect(roleDescription('staff-backend')).toBe(
      ROLES['staff-backend'].summary,
    );
    expect(roleDescription('director')).toBe(
      `${ROLES.director.summary} Read-only: cannot write files, run shell commands that are not read-only, or call mutating backend tools.`,
    );
    for (const role of ROLE_NAMES)
      expect(
        roleDescription(role).endsWith(
          'Read-only: cannot write files, run shell commands that are not read-only, or call mutating backend tools.',
        ),
      ).toBe(isReadOnlyRole(role));
  });

  it.each([
    '',
    'Director',
    'admin',
    'staff_backend',
    ' director',
    'toString',
    '__proto__',
  ])('refuses the unknown role %j with a typed error', (name) => {
    expect(() => canCallMutating(name)).toThrow(UnknownRoleError);
    expect(() => parseRoleName(name)).toThrow(
      /Unknown role .*expected one of director/,
    );
    try {
      getRole(name);
    } catch (error) {
      expect(UnknownRoleError.isInstance(error)).toBe(true);
      expect((error as UnknownRoleError).code).toBe('UNKNOWN_ROLE');
    }
  });

  it('recognises its errors by the family marker and the code, across copies', () => {
    const error = (() => {
      try {
        getRole('nobody');
      } catch (caught) {
        return caught;
      }
    })();
    expect(PrefixError.isInstance(error)).toBe(true);
    expect(UnknownRoleError.isInstance(error)).toBe(true);
    expect(RoleFileError.isInstance(error)).toBe(false);
    expect((error as Error).name).toBe('UnknownRoleError');
    expect((error as PrefixError).isRetryable).toBe(false);
    // An error thrown by another copy of the package: no shared class, same marker.
    const copy = {
      [Symbol.for('heretek.prefix.error')]: true,
      code: 'UNKNOWN_ROLE',
    };
    expect(PrefixError.isInstance(copy)).toBe(true);
    expect(UnknownRoleError.isInstance(copy)).toBe(true);
    expect(UnknownRoleError.isInstance({ code: 'UNKNOWN_ROLE' })).toBe(false);
  });

  it('freezes the role table so no caller can promote a role', () => {
    expect(Object.isFrozen(ROLES)).toBe(true);
    expect(Object.isFrozen(ROLES.director.permissions)).toBe(true);
    expect(() => {
      (
        ROLES.director.permissions as { canCallMutatingTools: boolean }
      ).canCallMutatingTools = true;
    }).toThrow(TypeError);
  });
});

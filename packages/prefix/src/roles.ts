/**
 * The six agent roles and their permissions. This table is the single source
 * of truth for the broker's authorization gate and for handoff checks: an
 * unknown role is an error everywhere, and nothing falls back to a writer role.
 */

import { errorClass } from '@heretek/internal';

import { PrefixError, PrefixErrorCode } from './errors.js';

/** Names of the six roles, in a stable order. */
export const ROLE_NAMES = [
  'director',
  'staff-backend',
  'staff-frontend',
  'staff-mobile',
  'security-researcher',
  'qa-adversary',
] as const;

/** A role name. */
export type RoleName = (typeof ROLE_NAMES)[number];

/** What a role may do. */
export type RolePermissions = {
  /** May call tools that are not marked read-only (unknown counts as mutating). */
  readonly canCallMutatingTools: boolean;
  /** May receive handoffs that ask for mutating work. */
  readonly canReceiveMutatingWork: boolean;
};

/** A role: its name, a one-line summary, and its permissions. */
export type RoleDefinition = {
  /** The role's name. */
  readonly name: RoleName;
  /** One sentence on what the role is for. */
  readonly summary: string;
  /** True when the role may never call a mutating tool. */
  readonly readOnly: boolean;
  /** What the role may do, for the broker's gate and handoff checks. */
  readonly permissions: RolePermissions;
};

function define(
  name: RoleName,
  summary: string,
  readOnly: boolean,
): RoleDefinition {
  return Object.freeze({
    name,
    summary,
    readOnly,
    permissions: Object.freeze({
      canCallMutatingTools: !readOnly,
      canReceiveMutatingWork: !readOnly,
    }),
  });
}

/** Every role, keyed by name. Frozen data. */
export const ROLES: Readonly<Record<RoleName, RoleDefinition>> = Object.freeze({
  director: define(
    'director',
    'Plans the work, splits it into tasks, hands them to staff roles and reviews the results; never changes anything itself.',
    true,
  ),
  'staff-backend': define(
    'staff-backend',
    'Builds and changes server-side code, data stores, APIs and build tooling.',
    false,
  ),
  'staff-frontend': define(
    'staff-frontend',
    'Builds and changes user interfaces, web clients and their tests.',
    false,
  ),
  'staff-mobile': define(
    'staff-mobile',
    'Builds and changes Android and iOS apps, drives devices and emulators.',
    false,
  ),
  'security-researcher': define(
    'security-researcher',
    'Reverses binaries, audits code and proves vulnerabilities with working evidence.',
    false,
  ),
  'qa-adversary': define(
    'qa-adversary',
    'Tries to break what others built and proves each defect with a reproducible failing check; never changes the system under test.',
    true,
  ),
});

/** Thrown when a role name is not one of {@link ROLE_NAMES}. A {@link PrefixError} with code `UNKNOWN_ROLE`. */
export class UnknownRoleError extends errorClass(PrefixError, {
  code: PrefixErrorCode.UnknownRole,
  message: (role: string) =>
    `Unknown role ${JSON.stringify(role)}: expected one of ${ROLE_NAMES.join(', ')}.`,
}) {
  /** The rejected name. */
  readonly role: string;

  constructor(role: string) {
    super(role);
    this.role = role;
  }
}

/** True when `value` names one of the six roles. */
export function isRoleName(value: unknown): value is RoleName {
  return (
    typeof value === 'string' &&
    (ROLE_NAMES as readonly string[]).includes(value)
  );
}

/** The role definition for `role`; throws {@link UnknownRoleError} for anything else. */
export function getRole(role: string): RoleDefinition {
  if (!isRoleName(role)) throw new UnknownRoleError(role);
  return ROLES[role];
}

/** The validated role name; throws {@link UnknownRoleError} otherwise. */
export function parseRoleName(role: string): RoleName {
  return getRole(role).name;
}

/** True when `role` may call mutating tools. Throws for an unknown role. */
export function canCallMutating(role: string): boolean {
  return getRole(role).permissions.canCallMutatingTools;
}

/** True when `role` is read-only. Throws for an unknown role. */
export function isReadOnlyRole(role: string): boolean {
  return getRole(role).readOnly;
}

/**
 * The one line an editor shows for a role's agent (OpenCode's agent list and
 * delegation tool, Claude Code's agent list): its summary, and for a
 * read-only role what it cannot do (write files, run shell commands that are
 * not read-only, call mutating backend tools).
 */
export function roleDescription(role: RoleName): string {
  const definition = ROLES[role];
  return `${definition.summary}${definition.readOnly ? ' Read-only: cannot write files, run shell commands that are not read-only, or call mutating backend tools.' : ''}`;
}

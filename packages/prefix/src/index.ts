export {
  ROLE_NAMES,
  ROLES,
  UnknownRoleError,
  canCallMutating,
  getRole,
  isReadOnlyRole,
  isRoleName,
  parseRoleName,
} from './roles.js';
export type { RoleDefinition, RoleName, RolePermissions } from './roles.js';
export { PROFILE_NAMES, isProfileName } from './profiles.js';
export type { ProfileName } from './profiles.js';
export { VERSION } from './version.js';

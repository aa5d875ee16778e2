export { VERSION } from './version.js';
export {
  GrimoireHashMismatchError,
  GrimoireOutOfDateError,
  SkillError,
  SkillFrontMatterError,
  SkillHashMismatchError,
  SkillLockInvalidError,
  SkillLockMissingError,
  SkillLockVersionError,
  SkillNameError,
  SkillNotFoundError,
  SkillNotLockedError,
  SkillSymlinkError,
  SkillUnsupportedEntryError,
} from './errors.js';
export type { LockFileKind, SkillErrorCode } from './errors.js';
export {
  assertSkillName,
  parseSkillMarkdown,
  SKILL_NAME_PATTERN,
} from './front-matter.js';
export type { ParsedSkillMarkdown, SkillFrontMatter } from './front-matter.js';
export {
  createGrimoireLock,
  createSkillLock,
  declarationHash,
  GRIMOIRE_LOCK_FILE,
  GRIMOIRE_LOCK_VERSION,
  readGrimoireLock,
  readSkillLock,
  SKILL_LOCK_FILE,
  SKILL_LOCK_VERSION,
  SKILLS_DIRECTORY,
  writeGrimoireLock,
  writeSkillLock,
} from './lock-file.js';
export type {
  GrimoireDeclaration,
  GrimoireLock,
  SkillLock,
  SkillLockEntry,
} from './lock-file.js';
export {
  listSkillFolders,
  lockSkills,
  mountSkill,
  mountVerifiedSkills,
  verifyGrimoireLock,
  verifySkillLock,
} from './skills.js';
export type { MountedSkill, RefusedSkill, VerifiedSkill } from './skills.js';
export {
  HASH_PREFIX,
  hashTree,
  readTree,
  sha256Tagged,
  TREE_HASH_ALGORITHM,
} from './tree-hash.js';
export type {
  TreeContents,
  TreeFile,
  TreeFileDigest,
  TreeHash,
} from './tree-hash.js';

export { VERSION } from './version.js';
export { SkillError } from './errors.js';
export { SkillErrorCode } from './errors.js';
export type { SkillFrontMatter } from './front-matter.js';
export {
  lockSkills,
  mountSkill,
  mountVerifiedSkills,
  verifyGrimoireLock,
  verifySkillLock,
} from './skills.js';
export type { MountedSkill, RefusedSkill, VerifiedSkill } from './skills.js';
export { hashTree, readTree } from './tree-hash.js';
export type {
  TreeContents,
  TreeFile,
  TreeFileDigest,
  TreeHash,
} from './tree-hash.js';

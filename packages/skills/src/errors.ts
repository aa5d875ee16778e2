import {
  createErrorFamily,
  errorClass,
  mismatchErrorClass,
} from '@heretek/internal';

/**
 * Every stable error code this package throws. Match on `error.code`, never on
 * the message text.
 *
 * - `SKILL_HASH_MISMATCH`: a skill's files no longer hash to the locked tree hash.
 * - `SKILL_LOCK_MISSING`: `.skill-lock.json` or `grimoire.lock` is absent.
 * - `SKILL_LOCK_INVALID`: a lock file is not valid JSON or does not match its schema.
 * - `SKILL_LOCK_VERSION`: a lock file carries a version this package does not read.
 * - `SKILL_NOT_LOCKED`: a skill folder exists (or was asked for) with no lock entry.
 * - `SKILL_NOT_FOUND`: a lock entry points at a folder that does not exist.
 * - `SKILL_SYMLINK`: a symbolic link was found inside (or as) a skill folder.
 * - `SKILL_UNSUPPORTED_ENTRY`: a special file (FIFO, socket, device) or a file
 *   name the tree hash cannot represent (not UTF-8, control characters, `\`).
 * - `SKILL_NAME_INVALID`: a skill name with path parts, `..`, or outside the
 *   Agent Skills name rules.
 * - `SKILL_FRONT_MATTER_INVALID`: `SKILL.md` is missing or its front matter
 *   breaks the Agent Skills format.
 * - `GRIMOIRE_HASH_MISMATCH`: `grimoire.lock`'s `declaration_hash` is not the
 *   SHA-256 of its declaration's RFC 8785 canonical form.
 * - `GRIMOIRE_OUT_OF_DATE`: `grimoire.lock` and `.skill-lock.json` disagree.
 */
export const SkillErrorCode = {
  HashMismatch: 'SKILL_HASH_MISMATCH',
  LockMissing: 'SKILL_LOCK_MISSING',
  LockInvalid: 'SKILL_LOCK_INVALID',
  LockVersion: 'SKILL_LOCK_VERSION',
  NotLocked: 'SKILL_NOT_LOCKED',
  NotFound: 'SKILL_NOT_FOUND',
  Symlink: 'SKILL_SYMLINK',
  UnsupportedEntry: 'SKILL_UNSUPPORTED_ENTRY',
  NameInvalid: 'SKILL_NAME_INVALID',
  FrontMatterInvalid: 'SKILL_FRONT_MATTER_INVALID',
  GrimoireHashMismatch: 'GRIMOIRE_HASH_MISMATCH',
  GrimoireOutOfDate: 'GRIMOIRE_OUT_OF_DATE',
} as const;

/**
 * Base class of every error this package throws. All of them are fail-closed
 * refusals: retrying without changing the files or the locks gives the same
 * answer, so `isRetryable` is always `false`. `SkillError.isInstance(error)`
 * holds across duplicated copies of the package (marker
 * `Symbol.for('heretek.skills.error')`); branch on `error.code`.
 */
export class SkillError extends createErrorFamily<typeof SkillErrorCode>(
  'skills',
) {}

/** One of the {@link SkillErrorCode} values. */
export type SkillErrorCode = SkillError['code'];

/** A skill's files do not hash to the tree hash pinned in `.skill-lock.json`. */
export class SkillHashMismatchError extends errorClass(SkillError, {
  code: SkillErrorCode.HashMismatch,
  message: ({
    skillName,
    expected,
    actual,
    expectedFileCount,
    actualFileCount,
  }: {
    /** Name of the skill. */
    skillName: string;
    /** Tree hash from the lock. */
    expected: string;
    /** Tree hash of the files on disk. */
    actual: string;
    /** File count from the lock. */
    expectedFileCount: number;
    /** File count on disk. */
    actualFileCount: number;
  }) => {
    const countNote =
      expectedFileCount === actualFileCount
        ? `${actualFileCount} files`
        : `${actualFileCount} files on disk, ${expectedFileCount} locked`;
    return (
      `Skill "${skillName}" does not match its lock: tree hash ${actual} (${countNote}), locked ${expected}. ` +
      `If the change is intended, run "heretek-skills lock ${skillName}"; otherwise restore the skill's files.`
    );
  },
  keep: [
    'skillName',
    'expected',
    'actual',
    'expectedFileCount',
    'actualFileCount',
  ],
}) {}

/** Which lock file an error is about. */
export type LockFileKind = 'skill-lock' | 'grimoire';

/** Where a lock file is and which one it is. */
type LockFile = {
  /** Absolute path of the lock file (for a missing one, where it was looked for). */
  lockPath: string;
  /** Which lock file. */
  lockKind: LockFileKind;
};

/** A lock file is absent. */
export class SkillLockMissingError extends errorClass(SkillError, {
  code: SkillErrorCode.LockMissing,
  message: ({ lockPath }: LockFile) =>
    `No lock file at ${lockPath}. Run "heretek-skills lock" in the workspace root to write it.`,
  keep: ['lockPath', 'lockKind'],
}) {}

/** A lock file is not valid JSON or does not match its schema. */
export class SkillLockInvalidError extends errorClass(SkillError, {
  code: SkillErrorCode.LockInvalid,
  message: ({
    lockPath,
    detail,
  }: LockFile & { detail: string; cause?: unknown }) =>
    `Lock file ${lockPath} is malformed: ${detail}. Regenerate it with "heretek-skills lock".`,
  keep: ['lockPath', 'lockKind'],
}) {}

/** A lock file carries a version this package does not read. */
export class SkillLockVersionError extends errorClass(SkillError, {
  code: SkillErrorCode.LockVersion,
  message: ({
    lockPath,
    foundVersion,
    supportedVersion,
  }: LockFile & {
    /** The version found in the file (whatever JSON value it was). */
    foundVersion: unknown;
    /** The only version this package reads. */
    supportedVersion: number;
  }) =>
    `Lock file ${lockPath} has version ${JSON.stringify(foundVersion) ?? 'undefined'}; ` +
    `this package reads only version ${supportedVersion}. ` +
    `Delete the file and run "heretek-skills lock" to write a version ${supportedVersion} lock.`,
  keep: ['lockPath', 'lockKind', 'foundVersion', 'supportedVersion'],
}) {}

/** A skill folder exists, or a skill was asked for, that `.skill-lock.json` does not pin. */
export class SkillNotLockedError extends errorClass(SkillError, {
  code: SkillErrorCode.NotLocked,
  message: ({
    skillName,
  }: {
    /** Name of the skill. */
    skillName: string;
  }) =>
    `Skill "${skillName}" has no entry in .skill-lock.json, so it cannot be verified. ` +
    `Review its files, then run "heretek-skills lock ${skillName}".`,
  keep: ['skillName'],
}) {}

/** A lock entry points at a skill folder that does not exist. */
export class SkillNotFoundError extends errorClass(SkillError, {
  code: SkillErrorCode.NotFound,
  message: ({
    skillName,
    skillPath,
  }: {
    /** Name of the skill. */
    skillName: string;
    /** Absolute path that was looked for. */
    skillPath: string;
  }) =>
    `Skill "${skillName}" is locked but its folder ${skillPath} is missing (removed or renamed). ` +
    `Restore it, or run "heretek-skills lock" to drop it from the lock.`,
  keep: ['skillName', 'skillPath'],
}) {}

/** A symbolic link was found where a skill file or folder must be. */
export class SkillSymlinkError extends errorClass(SkillError, {
  code: SkillErrorCode.Symlink,
  message: ({
    linkPath,
  }: {
    /** Absolute path of the link. */
    linkPath: string;
  }) =>
    `${linkPath} is a symbolic link. Skills may contain only regular files and folders: replace the link with a copy of its target.`,
  keep: ['linkPath'],
}) {}

/** A special file, or a file name the tree hash cannot represent. */
export class SkillUnsupportedEntryError extends errorClass(SkillError, {
  code: SkillErrorCode.UnsupportedEntry,
  message: ({
    entryPath,
    reason,
  }: {
    /** Absolute path (lossy-decoded for names that are not UTF-8). */
    entryPath: string;
    /** Why the entry is refused. */
    reason: string;
  }) =>
    `${entryPath}: ${reason}. Skills may contain only regular files and folders with UTF-8 names free of control characters and backslashes.`,
  keep: ['entryPath', 'reason'],
}) {}

/** A skill name with path parts, `..`, or outside the Agent Skills name rules. */
export class SkillNameError extends errorClass(SkillError, {
  code: SkillErrorCode.NameInvalid,
  message: ({
    skillName,
    reason,
  }: {
    /** The name as given. */
    skillName: string;
    reason: string;
  }) =>
    `Invalid skill name ${JSON.stringify(skillName)}: ${reason}. A skill name is 1-64 characters of a-z, 0-9 and single inner hyphens, and names one folder under skills/.`,
  keep: ['skillName'],
}) {}

/** `SKILL.md` is missing or its front matter breaks the Agent Skills format. */
export class SkillFrontMatterError extends errorClass(SkillError, {
  code: SkillErrorCode.FrontMatterInvalid,
  message: ({
    skillName,
    problems,
  }: {
    /** Name of the skill (its folder name). */
    skillName: string;
    /** Every problem found, one line each. */
    problems: readonly string[];
  }) =>
    `Skill "${skillName}" has an invalid SKILL.md: ${problems.join('; ')}. Fix SKILL.md (Agent Skills format), then run "heretek-skills lock ${skillName}".`,
  keep: ['skillName', 'problems'],
}) {}

/**
 * `grimoire.lock`'s `declaration_hash` (`expected`) does not match the SHA-256
 * of its declaration's canonical form (`actual`).
 */
export class GrimoireHashMismatchError extends mismatchErrorClass(SkillError, {
  code: SkillErrorCode.GrimoireHashMismatch,
  message: ({ expected, actual }) =>
    `grimoire.lock was tampered with: its declaration hashes to ${actual} but declaration_hash says ${expected}. ` +
    `Restore the file, or regenerate it with "heretek-skills lock" after reviewing the skills.`,
}) {}

/** `grimoire.lock` and `.skill-lock.json` disagree about a skill. */
export class GrimoireOutOfDateError extends errorClass(SkillError, {
  code: SkillErrorCode.GrimoireOutOfDate,
  message: ({
    skillNames,
  }: {
    /** The skills the two locks disagree about. */
    skillNames: readonly string[];
  }) =>
    `grimoire.lock and .skill-lock.json disagree about ${skillNames.map((name) => `"${name}"`).join(', ')}. ` +
    `Run "heretek-skills lock" to rewrite both from the skills on disk.`,
  keep: ['skillNames'],
}) {}

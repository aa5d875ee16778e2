import { createErrorFamily } from '@heretek/internal';

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
export class SkillError extends createErrorFamily<typeof SkillErrorCode>('skills') {}

/** One of the {@link SkillErrorCode} values. */
export type SkillErrorCode = SkillError['code'];

/** A skill's files do not hash to the tree hash pinned in `.skill-lock.json`. */
export class SkillHashMismatchError extends SkillError {
  /** Name of the skill. */
  readonly skillName: string;
  /** Tree hash from the lock. */
  readonly expected: string;
  /** Tree hash of the files on disk. */
  readonly actual: string;
  /** File count from the lock. */
  readonly expectedFileCount: number;
  /** File count on disk. */
  readonly actualFileCount: number;

  constructor({
    skillName,
    expected,
    actual,
    expectedFileCount,
    actualFileCount,
  }: {
    skillName: string;
    expected: string;
    actual: string;
    expectedFileCount: number;
    actualFileCount: number;
  }) {
    const countNote =
      expectedFileCount === actualFileCount
        ? `${actualFileCount} files`
        : `${actualFileCount} files on disk, ${expectedFileCount} locked`;
    super({
      code: SkillErrorCode.HashMismatch,
      message:
        `Skill "${skillName}" does not match its lock: tree hash ${actual} (${countNote}), locked ${expected}. ` +
        `If the change is intended, run "heretek-skills lock ${skillName}"; otherwise restore the skill's files.`,
    });
    this.skillName = skillName;
    this.expected = expected;
    this.actual = actual;
    this.expectedFileCount = expectedFileCount;
    this.actualFileCount = actualFileCount;
  }
}

/** Which lock file an error is about. */
export type LockFileKind = 'skill-lock' | 'grimoire';

/** A lock file is absent. */
export class SkillLockMissingError extends SkillError {
  /** Absolute path that was looked for. */
  readonly lockPath: string;
  /** Which lock file. */
  readonly lockKind: LockFileKind;

  constructor({
    lockPath,
    lockKind,
  }: {
    lockPath: string;
    lockKind: LockFileKind;
  }) {
    super({
      code: SkillErrorCode.LockMissing,
      message: `No lock file at ${lockPath}. Run "heretek-skills lock" in the workspace root to write it.`,
    });
    this.lockPath = lockPath;
    this.lockKind = lockKind;
  }
}

/** A lock file is not valid JSON or does not match its schema. */
export class SkillLockInvalidError extends SkillError {
  /** Absolute path of the lock file. */
  readonly lockPath: string;
  /** Which lock file. */
  readonly lockKind: LockFileKind;

  constructor({
    lockPath,
    lockKind,
    detail,
    cause,
  }: {
    lockPath: string;
    lockKind: LockFileKind;
    detail: string;
    cause?: unknown;
  }) {
    super({
      code: SkillErrorCode.LockInvalid,
      message: `Lock file ${lockPath} is malformed: ${detail}. Regenerate it with "heretek-skills lock".`,
      cause,
    });
    this.lockPath = lockPath;
    this.lockKind = lockKind;
  }
}

/** A lock file carries a version this package does not read. */
export class SkillLockVersionError extends SkillError {
  /** Absolute path of the lock file. */
  readonly lockPath: string;
  /** Which lock file. */
  readonly lockKind: LockFileKind;
  /** The version found in the file (whatever JSON value it was). */
  readonly foundVersion: unknown;
  /** The only version this package reads. */
  readonly supportedVersion: number;

  constructor({
    lockPath,
    lockKind,
    foundVersion,
    supportedVersion,
  }: {
    lockPath: string;
    lockKind: LockFileKind;
    foundVersion: unknown;
    supportedVersion: number;
  }) {
    super({
      code: SkillErrorCode.LockVersion,
      message:
        `Lock file ${lockPath} has version ${JSON.stringify(foundVersion) ?? 'undefined'}; ` +
        `this package reads only version ${supportedVersion}. ` +
        `Delete the file and run "heretek-skills lock" to write a version ${supportedVersion} lock.`,
    });
    this.lockPath = lockPath;
    this.lockKind = lockKind;
    this.foundVersion = foundVersion;
    this.supportedVersion = supportedVersion;
  }
}

/** A skill folder exists, or a skill was asked for, that `.skill-lock.json` does not pin. */
export class SkillNotLockedError extends SkillError {
  /** Name of the skill. */
  readonly skillName: string;

  constructor({ skillName }: { skillName: string }) {
    super({
      code: SkillErrorCode.NotLocked,
      message:
        `Skill "${skillName}" has no entry in .skill-lock.json, so it cannot be verified. ` +
        `Review its files, then run "heretek-skills lock ${skillName}".`,
    });
    this.skillName = skillName;
  }
}

/** A lock entry points at a skill folder that does not exist. */
export class SkillNotFoundError extends SkillError {
  /** Name of the skill. */
  readonly skillName: string;
  /** Absolute path that was looked for. */
  readonly skillPath: string;

  constructor({
    skillName,
    skillPath,
  }: {
    skillName: string;
    skillPath: string;
  }) {
    super({
      code: SkillErrorCode.NotFound,
      message:
        `Skill "${skillName}" is locked but its folder ${skillPath} is missing (removed or renamed). ` +
        `Restore it, or run "heretek-skills lock" to drop it from the lock.`,
    });
    this.skillName = skillName;
    this.skillPath = skillPath;
  }
}

/** A symbolic link was found where a skill file or folder must be. */
export class SkillSymlinkError extends SkillError {
  /** Absolute path of the link. */
  readonly linkPath: string;

  constructor({ linkPath }: { linkPath: string }) {
    super({
      code: SkillErrorCode.Symlink,
      message: `${linkPath} is a symbolic link. Skills may contain only regular files and folders: replace the link with a copy of its target.`,
    });
    this.linkPath = linkPath;
  }
}

/** A special file, or a file name the tree hash cannot represent. */
export class SkillUnsupportedEntryError extends SkillError {
  /** Absolute path (lossy-decoded for names that are not UTF-8). */
  readonly entryPath: string;
  /** Why the entry is refused. */
  readonly reason: string;

  constructor({ entryPath, reason }: { entryPath: string; reason: string }) {
    super({
      code: SkillErrorCode.UnsupportedEntry,
      message: `${entryPath}: ${reason}. Skills may contain only regular files and folders with UTF-8 names free of control characters and backslashes.`,
    });
    this.entryPath = entryPath;
    this.reason = reason;
  }
}

/** A skill name with path parts, `..`, or outside the Agent Skills name rules. */
export class SkillNameError extends SkillError {
  /** The name as given. */
  readonly skillName: string;

  constructor({ skillName, reason }: { skillName: string; reason: string }) {
    super({
      code: SkillErrorCode.NameInvalid,
      message: `Invalid skill name ${JSON.stringify(skillName)}: ${reason}. A skill name is 1-64 characters of a-z, 0-9 and single inner hyphens, and names one folder under skills/.`,
    });
    this.skillName = skillName;
  }
}

/** `SKILL.md` is missing or its front matter breaks the Agent Skills format. */
export class SkillFrontMatterError extends SkillError {
  /** Name of the skill (its folder name). */
  readonly skillName: string;
  /** Every problem found, one line each. */
  readonly problems: readonly string[];

  constructor({
    skillName,
    problems,
  }: {
    skillName: string;
    problems: readonly string[];
  }) {
    super({
      code: SkillErrorCode.FrontMatterInvalid,
      message: `Skill "${skillName}" has an invalid SKILL.md: ${problems.join('; ')}. Fix SKILL.md (Agent Skills format), then run "heretek-skills lock ${skillName}".`,
    });
    this.skillName = skillName;
    this.problems = problems;
  }
}

/** `grimoire.lock`'s `declaration_hash` does not match its declaration. */
export class GrimoireHashMismatchError extends SkillError {
  /** `declaration_hash` as written in the file. */
  readonly expected: string;
  /** SHA-256 of the declaration's canonical form. */
  readonly actual: string;

  constructor({ expected, actual }: { expected: string; actual: string }) {
    super({
      code: SkillErrorCode.GrimoireHashMismatch,
      message:
        `grimoire.lock was tampered with: its declaration hashes to ${actual} but declaration_hash says ${expected}. ` +
        `Restore the file, or regenerate it with "heretek-skills lock" after reviewing the skills.`,
    });
    this.expected = expected;
    this.actual = actual;
  }
}

/** `grimoire.lock` and `.skill-lock.json` disagree about a skill. */
export class GrimoireOutOfDateError extends SkillError {
  /** The skills the two locks disagree about. */
  readonly skillNames: readonly string[];

  constructor({ skillNames }: { skillNames: readonly string[] }) {
    super({
      code: SkillErrorCode.GrimoireOutOfDate,
      message:
        `grimoire.lock and .skill-lock.json disagree about ${skillNames.map((name) => `"${name}"`).join(', ')}. ` +
        `Run "heretek-skills lock" to rewrite both from the skills on disk.`,
    });
    this.skillNames = skillNames;
  }
}

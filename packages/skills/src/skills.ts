import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  GrimoireHashMismatchError,
  GrimoireOutOfDateError,
  SkillError,
  SkillFrontMatterError,
  SkillHashMismatchError,
  SkillNotFoundError,
  SkillNotLockedError,
  SkillSymlinkError,
  SkillErrorCode,
} from './errors.js';
import { assertSkillName, parseSkillMarkdown } from './front-matter.js';
import type { SkillFrontMatter } from './front-matter.js';
import {
  createGrimoireLock,
  createSkillLock,
  declarationHash,
  readGrimoireLock,
  readSkillLock,
  SKILLS_DIRECTORY,
  writeGrimoireLock,
  writeSkillLock,
} from './lock-file.js';
import type { GrimoireLock, SkillLock, SkillLockEntry } from './lock-file.js';
import { hashDirectory } from './tree-hash.js';
import type { KeepBytes, TreeFile } from './tree-hash.js';

/** A skill whose files matched its lock and whose `SKILL.md` is valid. */
export type VerifiedSkill = {
  /** Skill name (also its folder name). */
  name: string;
  /** Folder relative to the workspace root, `/`-separated (as locked). */
  path: string;
  /** The verified tree hash. */
  treeHash: string;
  /** Number of files. */
  fileCount: number;
  /** The validated `SKILL.md` front matter. */
  frontMatter: SkillFrontMatter;
};

/** A verified skill with its content: exactly the bytes that were hashed. */
export type MountedSkill = VerifiedSkill & {
  /** Absolute folder path. */
  directory: string;
  /** The whole `SKILL.md` text, decoded from the hashed bytes. */
  skillMd: string;
  /** `SKILL.md` after the front matter. */
  body: string;
  /** Every file in tree-hash order, each with the bytes that were hashed. */
  files: readonly TreeFile[];
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Resolves a locked path under the workspace, refusing symlinks on the way. */
function resolveSkillDirectory({
  workspaceRoot,
  skillName,
  path,
}: {
  workspaceRoot: string;
  skillName: string;
  path: string;
}): string {
  let current = workspaceRoot;
  for (const segment of path.split('/')) {
    current = join(current, segment);
    let stat;
    try {
      stat = lstatSync(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new SkillNotFoundError({
          skillName,
          skillPath: join(workspaceRoot, path),
        });
      }
      throw error;
    }
    if (stat.isSymbolicLink()) {
      throw new SkillSymlinkError({ linkPath: current });
    }
  }
  return current;
}

function checkSkill({
  workspaceRoot,
  skillName,
  entry,
  keep,
}: {
  workspaceRoot: string;
  skillName: string;
  entry: SkillLockEntry;
  keep: KeepBytes;
}): {
  verified: VerifiedSkill;
  directory: string;
  files: (TreeFile | Omit<TreeFile, 'bytes'>)[];
  skillMd: string;
  body: string;
} {
  const directory = resolveSkillDirectory({
    workspaceRoot,
    skillName,
    path: entry.path,
  });
  const tree = hashDirectory({ directory, keep });
  if (tree.treeHash !== entry.treeHash || tree.fileCount !== entry.fileCount) {
    throw new SkillHashMismatchError({
      skillName,
      expected: entry.treeHash,
      actual: tree.treeHash,
      expectedFileCount: entry.fileCount,
      actualFileCount: tree.fileCount,
    });
  }
  const { skillMd, frontMatter, body } = readFrontMatter({
    skillName,
    files: tree.files,
  });
  return {
    verified: {
      name: skillName,
      path: entry.path,
      treeHash: tree.treeHash,
      fileCount: tree.fileCount,
      frontMatter,
    },
    directory,
    files: tree.files,
    skillMd,
    body,
  };
}

function readFrontMatter({
  skillName,
  files,
}: {
  skillName: string;
  files: { path: string; bytes?: Uint8Array }[];
}): { skillMd: string; frontMatter: SkillFrontMatter; body: string } {
  const manifest = files.find((file) => file.path === 'SKILL.md');
  if (manifest?.bytes === undefined) {
    throw new SkillFrontMatterError({
      skillName,
      problems: ['SKILL.md is missing at the top of the skill folder'],
    });
  }
  let skillMd: string;
  try {
    skillMd = utf8.decode(manifest.bytes);
  } catch {
    throw new SkillFrontMatterError({
      skillName,
      problems: ['SKILL.md is not valid UTF-8'],
    });
  }
  const { frontMatter, body } = parseSkillMarkdown({
    skillName,
    text: skillMd,
  });
  return { skillMd, frontMatter, body };
}

/**
 * Names of the folders (and links) directly under `<workspaceRoot>/skills`,
 * sorted. Plain files there (a README) are ignored. Empty when the folder is
 * absent.
 */
export function listSkillFolders({
  workspaceRoot,
}: {
  workspaceRoot: string;
}): string[] {
  const directory = join(workspaceRoot, SKILLS_DIRECTORY);
  if (!existsSync(directory)) {
    return [];
  }
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
    .map((entry) => entry.name)
    .sort();
}

function unlockedFolders({
  workspaceRoot,
  lock,
}: {
  workspaceRoot: string;
  lock: SkillLock;
}): string[] {
  const lockedPaths = new Set(
    Object.values(lock.skills).map((entry) => entry.path),
  );
  return listSkillFolders({ workspaceRoot }).filter(
    (name) => !lockedPaths.has(`${SKILLS_DIRECTORY}/${name}`),
  );
}

/**
 * Verifies every skill of `<workspaceRoot>/.skill-lock.json`: each locked
 * folder must hash to its tree hash and file count and carry a valid
 * `SKILL.md`, and every folder under `skills/` must be locked. Throws the
 * first failure, fail-closed: `SkillHashMismatchError`, `SkillNotLockedError`,
 * `SkillNotFoundError`, `SkillSymlinkError`, `SkillFrontMatterError`, or a
 * lock error.
 *
 * @example
 * ```ts
 * const { skills } = verifySkillLock({ workspaceRoot: process.cwd() });
 * ```
 */
export function verifySkillLock({ workspaceRoot }: { workspaceRoot: string }): {
  skills: VerifiedSkill[];
} {
  const lock = readSkillLock({ workspaceRoot });
  const skills: VerifiedSkill[] = [];
  for (const [skillName, entry] of Object.entries(lock.skills)) {
    skills.push(
      checkSkill({ workspaceRoot, skillName, entry, keep: 'skill-md' })
        .verified,
    );
  }
  const unlocked = unlockedFolders({ workspaceRoot, lock });
  if (unlocked[0] !== undefined) {
    assertSkillName(unlocked[0]);
    throw new SkillNotLockedError({ skillName: unlocked[0] });
  }
  return { skills };
}

function checkGrimoire({
  grimoire,
  skillLock,
}: {
  grimoire: GrimoireLock;
  skillLock: SkillLock;
}): void {
  const actual = declarationHash({ declaration: grimoire.declaration });
  if (actual !== grimoire.declaration_hash) {
    throw new GrimoireHashMismatchError({
      expected: grimoire.declaration_hash,
      actual,
    });
  }
  const declared = grimoire.declaration.skills;
  const names = new Set([
    ...Object.keys(declared),
    ...Object.keys(skillLock.skills),
  ]);
  const differing = [...names].filter((name) => {
    const left = declared[name];
    const right = skillLock.skills[name];
    return (
      left === undefined ||
      right === undefined ||
      left.path !== right.path ||
      left.treeHash !== right.treeHash ||
      left.fileCount !== right.fileCount
    );
  });
  if (differing.length > 0) {
    throw new GrimoireOutOfDateError({ skillNames: differing.sort() });
  }
}

/**
 * Verifies `<workspaceRoot>/grimoire.lock`: its `declaration_hash` must be the
 * SHA-256 of the RFC 8785 canonical form of its `declaration`
 * (`GrimoireHashMismatchError` otherwise), and the declared skills must equal
 * the entries of `.skill-lock.json` (`GrimoireOutOfDateError`). Does not hash
 * the skill folders: {@link verifySkillLock} does.
 */
export function verifyGrimoireLock({
  workspaceRoot,
}: {
  workspaceRoot: string;
}): {
  declarationHash: string;
  skillNames: string[];
} {
  const grimoire = readGrimoireLock({ workspaceRoot });
  const skillLock = readSkillLock({ workspaceRoot });
  checkGrimoire({ grimoire, skillLock });
  return {
    declarationHash: grimoire.declaration_hash,
    skillNames: Object.keys(grimoire.declaration.skills).sort(),
  };
}

function mountWithLock({
  workspaceRoot,
  skillName,
  skillLock,
}: {
  workspaceRoot: string;
  skillName: string;
  skillLock: SkillLock;
}): MountedSkill {
  assertSkillName(skillName);
  const entry = Object.hasOwn(skillLock.skills, skillName)
    ? skillLock.skills[skillName]
    : undefined;
  if (entry === undefined) {
    throw new SkillNotLockedError({ skillName });
  }
  const { verified, directory, files, skillMd, body } = checkSkill({
    workspaceRoot,
    skillName,
    entry,
    keep: 'all',
  });
  return { ...verified, directory, skillMd, body, files: files as TreeFile[] };
}

/**
 * Mounts one skill fail-closed: checks the name (no path parts, no `..`),
 * finds its lock entry, optionally verifies `grimoire.lock` (default `true`),
 * reads every file exactly once, and compares the tree hash before returning
 * anything. The returned bytes are the bytes that were hashed; nothing is
 * read a second time.
 *
 * @example
 * ```ts
 * const skill = mountSkill({ workspaceRoot: process.cwd(), skillName: 'lazy-search', verifyGrimoire: true });
 * process.stderr.write(skill.skillMd);
 * ```
 */
export function mountSkill({
  workspaceRoot,
  skillName,
  verifyGrimoire = true,
}: {
  /** Folder that holds `.skill-lock.json`, `grimoire.lock` and `skills/`. */
  workspaceRoot: string;
  /** Skill to mount: a bare Agent Skills name. */
  skillName: string;
  /** Also verify `grimoire.lock` against `.skill-lock.json`. Default `true`. */
  verifyGrimoire?: boolean;
}): MountedSkill {
  assertSkillName(skillName);
  const skillLock = readSkillLock({ workspaceRoot });
  if (verifyGrimoire) {
    checkGrimoire({ grimoire: readGrimoireLock({ workspaceRoot }), skillLock });
  }
  return mountWithLock({ workspaceRoot, skillName, skillLock });
}

/** A skill that was not mounted, and why. */
export type RefusedSkill = {
  /** Skill (folder) name. */
  skillName: string;
  /** The reason: a {@link SkillError} in all expected cases. */
  error: Error;
};

/**
 * Mounts every skill that verifies and reports every other one, without
 * throwing: for servers that must serve what is safe and say why the rest
 * is refused. Covers every locked skill and every folder under `skills/`;
 * when a lock itself fails, all of them are refused with that error.
 */
export function mountVerifiedSkills({
  workspaceRoot,
  verifyGrimoire = true,
}: {
  /** Folder that holds `.skill-lock.json`, `grimoire.lock` and `skills/`. */
  workspaceRoot: string;
  /** Also verify `grimoire.lock`. Default `true`. */
  verifyGrimoire?: boolean;
}): { mounted: MountedSkill[]; refused: RefusedSkill[] } {
  const folders = listSkillFolders({ workspaceRoot });
  let skillLock: SkillLock;
  try {
    skillLock = readSkillLock({ workspaceRoot });
  } catch (error) {
    return {
      mounted: [],
      refused: folders.map((skillName) => ({
        skillName,
        error: asError(error),
      })),
    };
  }
  const locked = Object.keys(skillLock.skills).sort();
  const unlocked = unlockedFolders({ workspaceRoot, lock: skillLock });
  if (verifyGrimoire) {
    try {
      checkGrimoire({
        grimoire: readGrimoireLock({ workspaceRoot }),
        skillLock,
      });
    } catch (error) {
      return {
        mounted: [],
        refused: [...locked, ...unlocked]
          .sort()
          .map((skillName) => ({ skillName, error: asError(error) })),
      };
    }
  }
  const mounted: MountedSkill[] = [];
  const refused: RefusedSkill[] = [];
  for (const skillName of locked) {
    try {
      mounted.push(mountWithLock({ workspaceRoot, skillName, skillLock }));
    } catch (error) {
      refused.push({ skillName, error: asError(error) });
    }
  }
  for (const skillName of unlocked) {
    try {
      assertSkillName(skillName);
      refused.push({
        skillName,
        error: new SkillNotLockedError({ skillName }),
      });
    } catch (error) {
      refused.push({ skillName, error: asError(error) });
    }
  }
  return { mounted, refused };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Hashes skill folders and writes both locks: `.skill-lock.json` (version 3)
 * and `grimoire.lock` (version 1, declaration rebuilt from the skill lock,
 * extra declaration keys kept). Without `skillNames`, every folder under
 * `skills/` is locked and entries of vanished folders are dropped; with them,
 * only those skills are (re)locked and the other entries stay. Every skill is
 * checked (no links, valid `SKILL.md`) before anything is written.
 *
 * @example
 * ```ts
 * lockSkills({ workspaceRoot: process.cwd(), skillNames: ['red-proof'] });
 * ```
 */
export function lockSkills({
  workspaceRoot,
  skillNames,
}: {
  /** Folder that holds `skills/` and receives the two lock files. */
  workspaceRoot: string;
  /** Skills to (re)lock. Default: every folder under `skills/`. */
  skillNames?: readonly string[];
}): {
  locked: VerifiedSkill[];
  skillLock: SkillLock;
  grimoireLock: GrimoireLock;
} {
  const all = skillNames === undefined || skillNames.length === 0;
  let previous: SkillLock | undefined;
  try {
    previous = readSkillLock({ workspaceRoot });
  } catch (error) {
    // Relocking everything rebuilds the lock from disk, so an old or broken
    // lock is replaced. A partial relock needs the other entries: fail.
    if (
      !all &&
      !(
        SkillError.isInstance(error) &&
        error.code === SkillErrorCode.LockMissing
      )
    ) {
      throw error;
    }
  }
  const names = all
    ? listSkillFolders({ workspaceRoot })
    : [...new Set(skillNames)];
  const entries: Record<string, SkillLockEntry> = all
    ? {}
    : { ...previous?.skills };
  const locked: VerifiedSkill[] = [];
  for (const skillName of names) {
    assertSkillName(skillName);
    const path = `${SKILLS_DIRECTORY}/${skillName}`;
    const directory = resolveSkillDirectory({ workspaceRoot, skillName, path });
    const tree = hashDirectory({ directory, keep: 'skill-md' });
    const { frontMatter } = readFrontMatter({ skillName, files: tree.files });
    entries[skillName] = {
      path,
      treeHash: tree.treeHash,
      fileCount: tree.fileCount,
    };
    locked.push({
      name: skillName,
      path,
      treeHash: tree.treeHash,
      fileCount: tree.fileCount,
      frontMatter,
    });
  }
  const skillLock = createSkillLock({ skills: entries });
  let extra: Record<string, unknown> = {};
  try {
    const {
      algorithm: _algorithm,
      skills: _skills,
      ...rest
    } = readGrimoireLock({ workspaceRoot }).declaration;
    extra = rest;
  } catch {
    // No usable grimoire.lock: write a fresh declaration.
  }
  const grimoireLock = createGrimoireLock({ skillLock, extra });
  writeSkillLock({ workspaceRoot, lock: skillLock });
  writeGrimoireLock({ workspaceRoot, lock: grimoireLock });
  return { locked, skillLock, grimoireLock };
}

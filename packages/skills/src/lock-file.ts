import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Tag } from '@heretek/internal';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import {
  SkillLockInvalidError,
  SkillLockMissingError,
  SkillLockVersionError,
} from './errors.js';
import type { LockFileKind } from './errors.js';
import { SKILL_NAME_PATTERN } from './front-matter.js';
import { TREE_HASH_ALGORITHM } from './tree-hash.js';

/** File name of the skill lock, at the workspace root. */
export const SKILL_LOCK_FILE = '.skill-lock.json';
/** File name of the grimoire lock, at the workspace root. */
export const GRIMOIRE_LOCK_FILE = 'grimoire.lock';
/** Folder of skill folders, relative to the workspace root. */
export const SKILLS_DIRECTORY = 'skills';
/** The only `.skill-lock.json` version this package reads and writes. */
export const SKILL_LOCK_VERSION = 3;
/** The only `grimoire.lock` version this package reads and writes. */
export const GRIMOIRE_LOCK_VERSION = 1;

const hashSchema = z
  .string()
  .regex(
    /^sha256:[0-9a-f]{64}$/,
    'must be "sha256:" and 64 lowercase hex digits',
  );

const skillPathSchema = z
  .string()
  .refine(
    (path) =>
      path
        .split('/')
        .every(
          (segment) => segment !== '' && segment !== '.' && segment !== '..',
        ),
    'must be a relative "/"-separated path without empty, "." or ".." segments',
  )
  .refine((path) => !path.includes('\\'), 'must not contain a backslash');

const lockEntrySchema = z.strictObject({
  path: skillPathSchema,
  treeHash: hashSchema,
  fileCount: z.number().int().nonnegative(),
});

function entriesMatchNames(
  skills: Record<string, { path: string }>,
  context: z.RefinementCtx,
): void {
  for (const [name, entry] of Object.entries(skills)) {
    if (!SKILL_NAME_PATTERN.test(name) || name.length > 64) {
      context.addIssue({
        code: 'custom',
        path: ['skills', name],
        message: 'is not a valid skill name',
      });
    } else if (entry.path.split('/').at(-1) !== name) {
      context.addIssue({
        code: 'custom',
        path: ['skills', name, 'path'],
        message: 'must end in the skill name',
      });
    }
  }
}

const skillLockSchema = z
  .strictObject({
    version: z.literal(SKILL_LOCK_VERSION),
    algorithm: z.literal(TREE_HASH_ALGORITHM),
    skills: z.record(z.string(), lockEntrySchema),
  })
  .superRefine((lock, context) => entriesMatchNames(lock.skills, context));

/** One skill pinned by `.skill-lock.json`. */
export type SkillLockEntry = z.infer<typeof lockEntrySchema>;

/** The content of `.skill-lock.json` (version 3). */
export type SkillLock = z.infer<typeof skillLockSchema>;

const declarationSchema = z
  .looseObject({
    algorithm: z.literal(TREE_HASH_ALGORITHM),
    skills: z.record(z.string(), lockEntrySchema),
  })
  .superRefine((declaration, context) =>
    entriesMatchNames(declaration.skills, context),
  );

const grimoireLockSchema = z.strictObject({
  version: z.literal(GRIMOIRE_LOCK_VERSION),
  declaration: declarationSchema,
  declaration_hash: hashSchema,
});

/**
 * What `grimoire.lock` declares: the skill set with each tree hash, plus any
 * extra keys a user adds (they are covered by the declaration hash and kept
 * when the CLI rewrites the file).
 */
export type GrimoireDeclaration = z.infer<typeof declarationSchema>;

/** The content of `grimoire.lock` (version 1). */
export type GrimoireLock = z.infer<typeof grimoireLockSchema>;

function readJson({
  lockPath,
  lockKind,
}: {
  lockPath: string;
  lockKind: LockFileKind;
}): unknown {
  if (!existsSync(lockPath)) {
    throw new SkillLockMissingError({ lockPath, lockKind });
  }
  const text = readFileSync(lockPath, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SkillLockInvalidError({
      lockPath,
      lockKind,
      detail: 'not valid JSON',
      cause: error,
    });
  }
}

function parseLock<T>({
  lockPath,
  lockKind,
  supportedVersion,
  schema,
}: {
  lockPath: string;
  lockKind: LockFileKind;
  supportedVersion: number;
  schema: z.ZodType<T>;
}): T {
  const data = readJson({ lockPath, lockKind });
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new SkillLockInvalidError({
      lockPath,
      lockKind,
      detail: 'the top level must be a JSON object',
    });
  }
  const version = (data as Record<string, unknown>)['version'];
  if (version !== supportedVersion) {
    throw new SkillLockVersionError({
      lockPath,
      lockKind,
      foundVersion: version,
      supportedVersion,
    });
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const detail = result.error.issues
      .map(
        (issue) =>
          `${issue.path.map(String).join('.') || '(root)'} ${issue.message}`,
      )
      .join('; ');
    throw new SkillLockInvalidError({ lockPath, lockKind, detail });
  }
  return result.data;
}

/**
 * Reads and validates `<workspaceRoot>/.skill-lock.json`. Throws
 * `SkillLockMissingError`, `SkillLockVersionError` (any version but 3) or
 * `SkillLockInvalidError`.
 */
export function readSkillLock({
  workspaceRoot,
}: {
  workspaceRoot: string;
}): SkillLock {
  return parseLock({
    lockPath: join(workspaceRoot, SKILL_LOCK_FILE),
    lockKind: 'skill-lock',
    supportedVersion: SKILL_LOCK_VERSION,
    schema: skillLockSchema,
  });
}

/**
 * Reads and validates `<workspaceRoot>/grimoire.lock` (its shape only; see
 * `verifyGrimoireLock` for the hash check). Throws `SkillLockMissingError`,
 * `SkillLockVersionError` (any version but 1) or `SkillLockInvalidError`.
 */
export function readGrimoireLock({
  workspaceRoot,
}: {
  workspaceRoot: string;
}): GrimoireLock {
  return parseLock({
    lockPath: join(workspaceRoot, GRIMOIRE_LOCK_FILE),
    lockKind: 'grimoire',
    supportedVersion: GRIMOIRE_LOCK_VERSION,
    schema: grimoireLockSchema,
  });
}

/**
 * SHA-256 of the RFC 8785 (JCS) canonical form of a declaration, as
 * `sha256:<hex>`.
 */
export function declarationHash({
  declaration,
}: {
  declaration: unknown;
}): string {
  const canonical = canonicalize(declaration);
  if (canonical === undefined) {
    throw new TypeError(
      'The declaration cannot be canonicalized (it holds undefined, a function or a symbol).',
    );
  }
  return sha256Tag(canonical);
}

function sortedSkills(
  skills: Record<string, SkillLockEntry>,
): Record<string, SkillLockEntry> {
  const sorted: Record<string, SkillLockEntry> = {};
  for (const name of Object.keys(skills).sort()) {
    const entry = skills[name] as SkillLockEntry;
    sorted[name] = {
      path: entry.path,
      treeHash: entry.treeHash,
      fileCount: entry.fileCount,
    };
  }
  return sorted;
}

function writeAtomically({ path, text }: { path: string; text: string }): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/** Builds a version 3 skill lock from entries (sorted by name). */
export function createSkillLock({
  skills,
}: {
  skills: Record<string, SkillLockEntry>;
}): SkillLock {
  return {
    version: SKILL_LOCK_VERSION,
    algorithm: TREE_HASH_ALGORITHM,
    skills: sortedSkills(skills),
  };
}

/**
 * Builds a version 1 grimoire lock whose declaration lists the same skills as
 * `skillLock`, keeping any extra declaration keys from `extra`.
 */
export function createGrimoireLock({
  skillLock,
  extra = {},
}: {
  skillLock: SkillLock;
  extra?: Record<string, unknown>;
}): GrimoireLock {
  const declaration: GrimoireDeclaration = {
    ...extra,
    algorithm: TREE_HASH_ALGORITHM,
    skills: sortedSkills(skillLock.skills),
  };
  return {
    version: GRIMOIRE_LOCK_VERSION,
    declaration,
    declaration_hash: declarationHash({ declaration }),
  };
}

/** Writes `.skill-lock.json` (2-space JSON, trailing newline), replacing the file atomically. */
export function writeSkillLock({
  workspaceRoot,
  lock,
}: {
  workspaceRoot: string;
  lock: SkillLock;
}): void {
  writeAtomically({
    path: join(workspaceRoot, SKILL_LOCK_FILE),
    text: `${JSON.stringify(lock, null, 2)}\n`,
  });
}

/** Writes `grimoire.lock` (2-space JSON, trailing newline), replacing the file atomically. */
export function writeGrimoireLock({
  workspaceRoot,
  lock,
}: {
  workspaceRoot: string;
  lock: GrimoireLock;
}): void {
  writeAtomically({
    path: join(workspaceRoot, GRIMOIRE_LOCK_FILE),
    text: `${JSON.stringify(lock, null, 2)}\n`,
  });
}

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SkillError } from './errors.js';
import { lockSkills, mountSkill, verifySkillLock } from './skills.js';
import { hashTree } from './tree-hash.js';
import { fileTrees, pathSegment } from './__fixtures__/file-trees.js';

const SKILL = 'probe';
const SKILL_MD = `---\nname: ${SKILL}\ndescription: A skill for tamper tests.\n---\n\n# Probe\n`;
const RUNS = 50;
const SKILL_MD_NAME = 'SKILL.md';

const segment = pathSegment([SKILL_MD_NAME]);
const extraFiles = fileTrees({
  reserved: [SKILL_MD_NAME],
  maxBytes: 48,
  maxFiles: 5,
});

type Workspace = { root: string; skillDirectory: string; files: string[] };

/** Writes a locked workspace with one skill made of SKILL.md plus `extra`; undefined if paths clash. */
function lockedWorkspace(
  extra: { path: string[]; content: Uint8Array }[],
): Workspace | undefined {
  const root = mkdtempSync(join(tmpdir(), 'skills-tamper-'));
  const skillDirectory = join(root, 'skills', SKILL);
  mkdirSync(skillDirectory, { recursive: true });
  writeFileSync(join(skillDirectory, 'SKILL.md'), SKILL_MD);
  try {
    for (const { path, content } of extra) {
      mkdirSync(join(skillDirectory, ...path.slice(0, -1)), {
        recursive: true,
      });
      writeFileSync(join(skillDirectory, ...path), content);
    }
  } catch {
    rmSync(root, { recursive: true, force: true });
    return undefined;
  }
  lockSkills({ workspaceRoot: root });
  const files = hashTree({ directory: skillDirectory }).files.map(
    (file) => file.path,
  );
  return { root, skillDirectory, files };
}

/** Both verification paths must refuse with `code`. */
function expectRefused({ root, code }: { root: string; code: string }): void {
  for (const verify of [
    () => verifySkillLock({ workspaceRoot: root }),
    () =>
      mountSkill({
        workspaceRoot: root,
        skillName: SKILL,
        verifyGrimoire: true,
      }),
  ]) {
    let caught: unknown;
    try {
      verify();
    } catch (error) {
      caught = error;
    }
    expect(
      SkillError.isInstance(caught),
      `expected a SkillError, got ${String(caught)}`,
    ).toBe(true);
    expect((caught as SkillError).code).toBe(code);
  }
}

function withWorkspace(
  extra: { path: string[]; content: Uint8Array }[],
  body: (workspace: Workspace) => void,
): void {
  const workspace = lockedWorkspace(extra);
  fc.pre(workspace !== undefined);
  try {
    body(workspace!);
  } finally {
    rmSync(workspace!.root, { recursive: true, force: true });
  }
}

describe('tamper properties (fast-check)', () => {
  it('an untouched tree always verifies, and mountSkill returns exactly the locked bytes', () => {
    fc.assert(
      fc.property(extraFiles, (extra) =>
        withWorkspace(extra, ({ root, skillDirectory, files }) => {
          const { skills } = verifySkillLock({ workspaceRoot: root });
          expect(skills.map((skill) => skill.name)).toEqual([SKILL]);
          const mounted = mountSkill({ workspaceRoot: root, skillName: SKILL });
          expect(mounted.files.map((file) => file.path)).toEqual(files);
          for (const file of mounted.files) {
            expect(Buffer.from(file.bytes)).toEqual(
              readFileSync(join(skillDirectory, file.path)),
            );
          }
          expect(mounted.skillMd).toBe(SKILL_MD);
        }),
      ),
      { numRuns: RUNS },
    );
  });

  it('flipping any bits of any single byte of any file fails with SKILL_HASH_MISMATCH', () => {
    fc.assert(
      fc.property(
        extraFiles,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (extra, which, offset, mask) =>
          withWorkspace(extra, ({ root, skillDirectory, files }) => {
            const nonEmpty = files.filter(
              (path) => readFileSync(join(skillDirectory, path)).length > 0,
            );
            const target = join(
              skillDirectory,
              nonEmpty[which % nonEmpty.length]!,
            );
            const bytes = readFileSync(target);
            const index = offset % bytes.length;
            bytes[index] = bytes[index]! ^ mask;
            writeFileSync(target, bytes);
            expectRefused({ root, code: 'SKILL_HASH_MISMATCH' });
          }),
      ),
      { numRuns: RUNS },
    );
  });

  it('adding a file anywhere fails with SKILL_HASH_MISMATCH', () => {
    fc.assert(
      fc.property(
        extraFiles,
        fc.nat(),
        segment,
        fc.uint8Array({ maxLength: 16 }),
        (extra, which, name, content) =>
          withWorkspace(extra, ({ root, skillDirectory, files }) => {
            const folder = dirname(
              join(skillDirectory, files[which % files.length]!),
            );
            const added = join(folder, `added-${name}`);
            fc.pre(!existsSync(added));
            writeFileSync(added, content);
            expectRefused({ root, code: 'SKILL_HASH_MISMATCH' });
          }),
      ),
      { numRuns: RUNS },
    );
  });

  it('removing any file fails with SKILL_HASH_MISMATCH', () => {
    fc.assert(
      fc.property(extraFiles, fc.nat(), (extra, which) =>
        withWorkspace(extra, ({ root, skillDirectory, files }) => {
          unlinkSync(join(skillDirectory, files[which % files.length]!));
          expectRefused({ root, code: 'SKILL_HASH_MISMATCH' });
        }),
      ),
      { numRuns: RUNS },
    );
  });

  it('renaming any file fails with SKILL_HASH_MISMATCH', () => {
    fc.assert(
      fc.property(extraFiles, fc.nat(), segment, (extra, which, name) =>
        withWorkspace(extra, ({ root, skillDirectory, files }) => {
          const source = join(skillDirectory, files[which % files.length]!);
          const destination = join(dirname(source), `renamed-${name}`);
          fc.pre(!existsSync(destination));
          renameSync(source, destination);
          expectRefused({ root, code: 'SKILL_HASH_MISMATCH' });
        }),
      ),
      { numRuns: RUNS },
    );
  });

  it('replacing any file with a symlink to identical bytes fails with SKILL_SYMLINK', () => {
    fc.assert(
      fc.property(extraFiles, fc.nat(), (extra, which) =>
        withWorkspace(extra, ({ root, skillDirectory, files }) => {
          const target = join(skillDirectory, files[which % files.length]!);
          const copy = join(root, 'outside-copy');
          writeFileSync(copy, readFileSync(target));
          unlinkSync(target);
          symlinkSync(copy, target);
          expectRefused({ root, code: 'SKILL_SYMLINK' });
        }),
      ),
      { numRuns: RUNS },
    );
  });
});

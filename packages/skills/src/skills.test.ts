import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { thrownCode } from '@heretek/internal';
import { scratchFolders } from './__fixtures__/scratch.js';
import { SkillHashMismatchError } from './errors.js';
import { parseSkillMarkdown } from './front-matter.js';
// What users call comes from the package's entry.
import {
  SkillError,
  hashTree,
  lockSkills,
  mountSkill,
  mountVerifiedSkills,
  verifyGrimoireLock,
  verifySkillLock,
} from './index.js';
import {
  declarationHash,
  readGrimoireLock,
  readSkillLock,
  writeSkillLock,
} from './lock-file.js';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
const scratch = scratchFolders('skills-api-');


function skillMd({
  name,
  description = 'A test skill.',
}: {
  name: string;
  description?: string;
}): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n# ${name}\n`;
}

function workspace(names: string[] = ['alpha', 'beta']): string {
  const root = scratch();
  for (const name of names) {
    mkdirSync(join(root, 'skills', name), { recursive: true });
    writeFileSync(join(root, 'skills', name, 'SKILL.md'), skillMd({ name }));
    writeFileSync(
      join(root, 'skills', name, 'notes.txt'),
      `notes of ${name}\n`,
    );
  }
  return root;
}

/** The code of the {@link SkillError} that `run` throws (see `thrownCode`). */
const codeOf = (run: () => unknown): string | undefined =>
  thrownCode(SkillError, run);

/** Both checking the lock and mounting `skillName` are refused with `code`. */
function expectRefused(root: string, skillName: string, code: string): void {
  expect(codeOf(() => verifySkillLock({ workspaceRoot: root }))).toBe(code);
  expect(codeOf(() => mountSkill({ workspaceRoot: root, skillName }))).toBe(
    code,
  );
}

describe('the shipped skills', () => {
  it('lazy-search and red-proof verify against the committed locks', () => {
    const { skills } = verifySkillLock({ workspaceRoot: repositoryRoot });
    expect(skills.map((skill) => skill.name)).toEqual([
      'lazy-search',
      'red-proof',
    ]);
    const grimoire = verifyGrimoireLock({ workspaceRoot: repositoryRoot });
    expect(grimoire.skillNames).toEqual(['lazy-search', 'red-proof']);
    const lazySearch = mountSkill({
      workspaceRoot: repositoryRoot,
      skillName: 'lazy-search',
      verifyGrimoire: true,
    });
    for (const tool of [
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ]) {
      expect(lazySearch.body).toContain(tool);
    }
  });
});

describe('lockSkills and verifySkillLock', () => {
  it('locks every skill folder and verifies them', () => {
    const root = workspace();
    const { locked } = lockSkills({ workspaceRoot: root });
    expect(locked.map((skill) => skill.name)).toEqual(['alpha', 'beta']);
    const lock = readSkillLock({ workspaceRoot: root });
    expect(lock.version).toBe(3);
    expect(lock.skills['alpha']).toEqual({
      path: 'skills/alpha',
      treeHash: hashTree({ directory: join(root, 'skills', 'alpha') }).treeHash,
      fileCount: 2,
    });
    expect(verifySkillLock({ workspaceRoot: root }).skills).toHaveLength(2);
  });

  it('relocks only the named skills and keeps the other entries', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const before = readSkillLock({ workspaceRoot: root });
    writeFileSync(join(root, 'skills', 'alpha', 'notes.txt'), 'changed\n');
    writeFileSync(join(root, 'skills', 'beta', 'notes.txt'), 'changed too\n');
    lockSkills({ workspaceRoot: root, skillNames: ['alpha'] });
    const after = readSkillLock({ workspaceRoot: root });
    expect(after.skills['alpha']).not.toEqual(before.skills['alpha']);
    expect(after.skills['beta']).toEqual(before.skills['beta']);
    expect(codeOf(() => verifySkillLock({ workspaceRoot: root }))).toBe(
      'SKILL_HASH_MISMATCH',
    );
  });

  it('refuses an unlocked skill folder', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    mkdirSync(join(root, 'skills', 'gamma'));
    writeFileSync(
      join(root, 'skills', 'gamma', 'SKILL.md'),
      skillMd({ name: 'gamma' }),
    );
    expectRefused(root, 'gamma', 'SKILL_NOT_LOCKED');
  });

  it('refuses a skill folder, or the skills folder, that is a symbolic link', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    // skills/beta becomes a link to a copy with the very same bytes: still refused.
    const outside = join(root, 'outside-beta');
    renameSync(join(root, 'skills', 'beta'), outside);
    symlinkSync(outside, join(root, 'skills', 'beta'));
    expectRefused(root, 'beta', 'SKILL_SYMLINK');
    expect(mountSkill({ workspaceRoot: root, skillName: 'alpha' }).name).toBe(
      'alpha',
    );

    // The whole skills/ folder as a link: every skill is refused.
    const other = workspace();
    lockSkills({ workspaceRoot: other });
    renameSync(join(other, 'skills'), join(other, 'real-skills'));
    symlinkSync(join(other, 'real-skills'), join(other, 'skills'));
    expectRefused(other, 'alpha', 'SKILL_SYMLINK');
  });

  it('refuses a renamed skill folder: the old entry is missing, the new folder unlocked', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    renameSync(join(root, 'skills', 'beta'), join(root, 'skills', 'delta'));
    expect(codeOf(() => verifySkillLock({ workspaceRoot: root }))).toBe(
      'SKILL_NOT_FOUND',
    );
    const { mounted, refused } = mountVerifiedSkills({ workspaceRoot: root });
    expect(mounted.map((skill) => skill.name)).toEqual(['alpha']);
    expect(
      refused.map(({ skillName, error }) => [
        skillName,
        (error as SkillError).code,
      ]),
    ).toEqual([
      ['beta', 'SKILL_NOT_FOUND'],
      ['delta', 'SKILL_NOT_LOCKED'],
    ]);
  });

  it('reports a hash mismatch with both hashes and the way to fix it', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    writeFileSync(join(root, 'skills', 'alpha', 'extra.txt'), 'x');
    let caught: unknown;
    try {
      mountSkill({ workspaceRoot: root, skillName: 'alpha' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SkillHashMismatchError);
    const error = caught as SkillHashMismatchError;
    expect(error.isRetryable).toBe(false);
    expect(error.expectedFileCount).toBe(2);
    expect(error.actualFileCount).toBe(3);
    expect(error.message).toContain(error.expected);
    expect(error.message).toContain(error.actual);
    expect(error.message).toContain('heretek-skills lock alpha');
  });
});

describe('lock files', () => {
  it('refuses a missing lock', () => {
    const root = workspace();
    expectRefused(root, 'alpha', 'SKILL_LOCK_MISSING');
  });

  it('refuses a lock of another version with a clear message', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const lockPath = join(root, '.skill-lock.json');
    const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<
      string,
      unknown
    >;
    for (const version of [2, 4, '3', undefined]) {
      writeFileSync(lockPath, JSON.stringify({ ...lock, version }));
      let message = '';
      try {
        verifySkillLock({ workspaceRoot: root });
      } catch (error) {
        expect((error as SkillError).code).toBe('SKILL_LOCK_VERSION');
        message = (error as Error).message;
      }
      expect(message).toContain('reads only version 3');
    }
  });

  it('refuses a grimoire.lock of another version', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const path = join(root, 'grimoire.lock');
    writeFileSync(
      path,
      JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), version: 2 }),
    );
    expect(codeOf(() => verifyGrimoireLock({ workspaceRoot: root }))).toBe(
      'SKILL_LOCK_VERSION',
    );
  });

  it('refuses malformed locks', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const lockPath = join(root, '.skill-lock.json');
    const valid = JSON.parse(readFileSync(lockPath, 'utf8')) as {
      skills: Record<string, Record<string, unknown>>;
    };
    const cases: unknown[] = [
      '{ not json',
      [],
      {
        ...valid,
        skills: { alpha: { ...valid.skills['alpha'], treeHash: 'md5:abc' } },
      },
      {
        ...valid,
        skills: {
          alpha: { ...valid.skills['alpha'], path: '../outside/alpha' },
        },
      },
      {
        ...valid,
        skills: { '../x': { ...valid.skills['alpha'], path: 'skills/x' } },
      },
      { ...valid, unexpected: true },
    ];
    for (const content of cases) {
      writeFileSync(
        lockPath,
        typeof content === 'string' ? content : JSON.stringify(content),
      );
      expect(codeOf(() => verifySkillLock({ workspaceRoot: root }))).toBe(
        'SKILL_LOCK_INVALID',
      );
    }
  });
});

describe('mountSkill', () => {
  it('refuses skill names with path parts, "..", or outside the Agent Skills rules', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    for (const name of [
      '../alpha',
      'skills/alpha',
      '..',
      '.',
      'alpha/..',
      'a\\b',
      '',
      'Alpha',
      '-alpha',
      'alpha-',
      'al--pha',
      'a'.repeat(65),
    ]) {
      expect(
        codeOf(() => mountSkill({ workspaceRoot: root, skillName: name })),
        name,
      ).toBe('SKILL_NAME_INVALID');
    }
  });

  it('returns the hashed bytes, decoded SKILL.md and front matter', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const skill = mountSkill({ workspaceRoot: root, skillName: 'alpha' });
    expect(skill.skillMd).toBe(skillMd({ name: 'alpha' }));
    expect(skill.frontMatter).toMatchObject({
      name: 'alpha',
      description: 'A test skill.',
    });
    const listing = skill.files
      .map(
        (file) =>
          `${createHash('sha256').update(file.bytes).digest('hex')}  ${file.path}\n`,
      )
      .join('');
    expect(`sha256:${createHash('sha256').update(listing).digest('hex')}`).toBe(
      skill.treeHash,
    );
  });

  it('verifies grimoire.lock unless told not to', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    rmSync(join(root, 'grimoire.lock'));
    expect(
      codeOf(() => mountSkill({ workspaceRoot: root, skillName: 'alpha' })),
    ).toBe('SKILL_LOCK_MISSING');
    expect(
      mountSkill({
        workspaceRoot: root,
        skillName: 'alpha',
        verifyGrimoire: false,
      }).name,
    ).toBe('alpha');
  });
});

describe('grimoire.lock', () => {
  it('declaration_hash is SHA-256 of the RFC 8785 canonical declaration', () => {
    const grimoire = readGrimoireLock({ workspaceRoot: repositoryRoot });
    // Independent canonical form: every value here is a string or a small integer,
    // so JCS reduces to JSON with keys sorted by code unit and no whitespace.
    const sortKeys = (value: unknown): unknown =>
      typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [
                key,
                sortKeys((value as Record<string, unknown>)[key]),
              ]),
          )
        : value;
    const canonical = JSON.stringify(sortKeys(grimoire.declaration));
    expect(grimoire.declaration_hash).toBe(
      `sha256:${createHash('sha256').update(canonical).digest('hex')}`,
    );
    expect(declarationHash({ declaration: { b: 1, a: 'x' } })).toBe(
      `sha256:${createHash('sha256').update('{"a":"x","b":1}').digest('hex')}`,
    );
  });

  it('refuses a tampered declaration', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const path = join(root, 'grimoire.lock');
    const grimoire = JSON.parse(readFileSync(path, 'utf8')) as {
      declaration: { skills: Record<string, { fileCount: number }> };
    };
    grimoire.declaration.skills['alpha']!.fileCount = 3;
    writeFileSync(path, JSON.stringify(grimoire));
    expect(codeOf(() => verifyGrimoireLock({ workspaceRoot: root }))).toBe(
      'GRIMOIRE_HASH_MISMATCH',
    );
    expect(
      codeOf(() => mountSkill({ workspaceRoot: root, skillName: 'beta' })),
    ).toBe('GRIMOIRE_HASH_MISMATCH');
  });

  it('refuses a grimoire that disagrees with .skill-lock.json', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    writeFileSync(
      join(root, 'skills', 'alpha', 'notes.txt'),
      'relocked by hand\n',
    );
    const lock = readSkillLock({ workspaceRoot: root });
    const tree = hashTree({ directory: join(root, 'skills', 'alpha') });
    writeSkillLock({
      workspaceRoot: root,
      lock: {
        ...lock,
        skills: {
          ...lock.skills,
          alpha: {
            path: 'skills/alpha',
            treeHash: tree.treeHash,
            fileCount: tree.fileCount,
          },
        },
      },
    });
    expect(verifySkillLock({ workspaceRoot: root }).skills).toHaveLength(2);
    expect(codeOf(() => verifyGrimoireLock({ workspaceRoot: root }))).toBe(
      'GRIMOIRE_OUT_OF_DATE',
    );
  });

  it('keeps extra declaration keys when relocking, and they are covered by the hash', () => {
    const root = workspace();
    lockSkills({ workspaceRoot: root });
    const path = join(root, 'grimoire.lock');
    const grimoire = JSON.parse(readFileSync(path, 'utf8')) as {
      declaration: Record<string, unknown>;
      declaration_hash: string;
    };
    grimoire.declaration['roles'] = { 'qa-adversary': ['beta'] };
    grimoire.declaration_hash = declarationHash({
      declaration: grimoire.declaration,
    });
    writeFileSync(path, JSON.stringify(grimoire));
    expect(verifyGrimoireLock({ workspaceRoot: root }).declarationHash).toBe(
      grimoire.declaration_hash,
    );
    lockSkills({ workspaceRoot: root });
    expect(
      readGrimoireLock({ workspaceRoot: root }).declaration['roles'],
    ).toEqual({ 'qa-adversary': ['beta'] });
  });
});

describe('SKILL.md front matter (Agent Skills format)', () => {
  const valid = (text: string, skillName = 'my-skill') =>
    parseSkillMarkdown({ skillName, text });
  const problem = (text: string, skillName = 'my-skill') =>
    codeOf(() => valid(text, skillName));

  it('accepts the limits and optional fields', () => {
    expect(
      valid(skillMd({ name: 'my-skill', description: 'd'.repeat(1024) }))
        .frontMatter.description,
    ).toHaveLength(1024);
    const name64 = `a${'-b'.repeat(31)}a`;
    expect(name64).toHaveLength(64);
    expect(valid(skillMd({ name: name64 }), name64).frontMatter.name).toBe(
      name64,
    );
    expect(
      valid(
        '---\nname: my-skill\ndescription: x\nlicense: MIT\ncompatibility: Node 20\nmetadata:\n  owner: qa\nallowed-tools: Read\n---\nbody',
      ).body,
    ).toBe('body');
    expect(
      valid('\uFEFF---\r\nname: my-skill\r\ndescription: x\r\n---\r\n')
        .frontMatter.name,
    ).toBe('my-skill');
  });

  it('refuses every broken front matter with SKILL_FRONT_MATTER_INVALID', () => {
    const cases = [
      'no front matter',
      '---\nname: my-skill\ndescription: never closed\n',
      '---\nname: [unclosed\n---\n',
      '---\n- a list\n---\n',
      '---\ndescription: no name\n---\n',
      '---\nname: my-skill\n---\n',
      '---\nname: my-skill\ndescription: ""\n---\n',
      '---\nname: my-skill\ndescription: "   "\n---\n',
      skillMd({ name: 'my-skill', description: 'd'.repeat(1025) }),
      skillMd({ name: 'other-name' }),
      '---\nname: My-Skill\ndescription: x\n---\n',
      '---\nname: my-skill\ndescription: 42\n---\n',
      '---\nname: my-skill\ndescription: x\ncompatibility: ""\n---\n',
      `---\nname: my-skill\ndescription: x\ncompatibility: ${'c'.repeat(501)}\n---\n`,
      '---\nname: my-skill\ndescription: x\nmetadata:\n  count: 3\n---\n',
    ];
    for (const text of cases) {
      expect(problem(text), text).toBe('SKILL_FRONT_MATTER_INVALID');
    }
  });

  it('lockSkills refuses a skill with a broken SKILL.md and writes nothing', () => {
    const root = workspace();
    writeFileSync(
      join(root, 'skills', 'beta', 'SKILL.md'),
      skillMd({ name: 'alpha' }),
    );
    expect(codeOf(() => lockSkills({ workspaceRoot: root }))).toBe(
      'SKILL_FRONT_MATTER_INVALID',
    );
    expect(codeOf(() => readSkillLock({ workspaceRoot: root }))).toBe(
      'SKILL_LOCK_MISSING',
    );
    rmSync(join(root, 'skills', 'beta', 'SKILL.md'));
    expect(codeOf(() => lockSkills({ workspaceRoot: root }))).toBe(
      'SKILL_FRONT_MATTER_INVALID',
    );
  });

  it('verification refuses a locked skill whose SKILL.md is invalid', () => {
    const root = workspace(['alpha']);
    writeFileSync(
      join(root, 'skills', 'alpha', 'SKILL.md'),
      'no front matter\n',
    );
    const tree = hashTree({ directory: join(root, 'skills', 'alpha') });
    writeSkillLock({
      workspaceRoot: root,
      lock: {
        version: 3,
        algorithm: 'sha256-tree-v1',
        skills: {
          alpha: {
            path: 'skills/alpha',
            treeHash: tree.treeHash,
            fileCount: tree.fileCount,
          },
        },
      },
    });
    expect(codeOf(() => verifySkillLock({ workspaceRoot: root }))).toBe(
      'SKILL_FRONT_MATTER_INVALID',
    );
  });
});

import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchFolders } from './__fixtures__/scratch.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const vectors = fileURLToPath(new URL('../test-vectors', import.meta.url));
const scratch = scratchFolders('skills-cli-');

beforeAll(() => {
  if (!existsSync(cli)) {
    throw new Error(
      `${cli} is missing: build the package first (pnpm turbo run build --filter @heretek/skills)`,
    );
  }
});

function run(
  args: string[],
  cwd?: string,
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    cwd,
  });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
  };
}

function workspace(): string {
  const root = scratch();
  for (const name of ['alpha', 'beta']) {
    mkdirSync(join(root, 'skills', name), { recursive: true });
    writeFileSync(
      join(root, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Skill ${name}.\n---\nBody.\n`,
    );
  }
  return root;
}

describe('heretek-skills CLI', () => {
  it('answers --help and --version', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('heretek-skills lock');
    const version = run(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 2 with usage on a bad command or flag', () => {
    for (const args of [['frobnicate'], ['verify', '--nope']]) {
      const result = run(args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('Usage:');
    }
  });

  it('locks, verifies and lists a workspace', () => {
    const root = workspace();
    const locked = run(['lock', '--root', root]);
    expect(locked.status).toBe(0);
    expect(locked.stdout).toMatch(
      /locked alpha sha256:[0-9a-f]{64} \(1 files\)/,
    );
    const lock = JSON.parse(
      readFileSync(join(root, '.skill-lock.json'), 'utf8'),
    ) as { version: number };
    expect(lock.version).toBe(3);
    expect(existsSync(join(root, 'grimoire.lock'))).toBe(true);

    const verified = run(['verify'], root);
    expect(verified.status).toBe(0);
    expect(verified.stdout).toContain('ok   alpha');
    expect(verified.stdout).toContain('verified 2 skill(s)');

    mkdirSync(join(root, 'skills', 'gamma'));
    const listed = run(['list', '--root', root, '--json']);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      locked: [{ name: 'alpha' }, { name: 'beta' }],
      unlocked: ['gamma'],
    });
  });

  it('verify exits 1 and names the skill and reason after one changed byte', () => {
    const root = workspace();
    expect(run(['lock', '--root', root]).status).toBe(0);
    const skillMd = join(root, 'skills', 'beta', 'SKILL.md');
    writeFileSync(
      skillMd,
      readFileSync(skillMd, 'utf8').replace('Body.', 'Body!'),
    );
    const result = run(['verify', '--root', root]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('ok   alpha');
    expect(result.stderr).toContain('FAIL beta: SKILL_HASH_MISMATCH');
    expect(result.stderr).toContain('heretek-skills lock beta');

    const json = run(['verify', '--root', root, '--json']);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      failures: [{ skillName: 'beta', code: 'SKILL_HASH_MISMATCH' }],
    });

    expect(run(['lock', '--root', root, 'beta']).status).toBe(0);
    expect(run(['verify', '--root', root]).status).toBe(0);
  });

  it('verify exits 1 without a lock, and on a tampered grimoire.lock', () => {
    const root = workspace();
    const missing = run(['verify', '--root', root]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('SKILL_LOCK_MISSING');

    expect(run(['lock', '--root', root]).status).toBe(0);
    const grimoirePath = join(root, 'grimoire.lock');
    writeFileSync(
      grimoirePath,
      readFileSync(grimoirePath, 'utf8').replace(
        '"fileCount": 1',
        '"fileCount": 2',
      ),
    );
    const tampered = run(['verify', '--root', root]);
    expect(tampered.status).toBe(1);
    expect(tampered.stderr).toContain('GRIMOIRE_HASH_MISMATCH');
  });

  it('lock refuses a symlink or a bad skill name and writes nothing', () => {
    const root = workspace();
    symlinkSync(
      join(root, 'skills', 'alpha', 'SKILL.md'),
      join(root, 'skills', 'beta', 'linked.md'),
    );
    const linked = run(['lock', '--root', root]);
    expect(linked.status).toBe(1);
    expect(linked.stderr).toContain('SKILL_SYMLINK');
    expect(existsSync(join(root, '.skill-lock.json'))).toBe(false);

    const badName = run(['lock', '--root', root, '../alpha']);
    expect(badName.status).toBe(1);
    expect(badName.stderr).toContain('SKILL_NAME_INVALID');
  });

  it('hash prints the listing and tree hash of the basic test vector', () => {
    const { vectors: list } = JSON.parse(
      readFileSync(join(vectors, 'vectors.json'), 'utf8'),
    ) as {
      vectors: { name: string; listing: string; treeHash: string }[];
    };
    const basic = list.find((vector) => vector.name === 'basic')!;
    const result = run(['hash', join(vectors, 'basic')]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      `${basic.listing}${basic.treeHash} (15 files)\n`,
    );
  });
});

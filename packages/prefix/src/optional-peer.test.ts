import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIFF_PEER, TOKENIZER_PEER } from './optional-peer.js';
import {
  PACKAGE_ROOT,
  REPO_ROOT,
  useTempWorkspaces,
} from './__fixtures__/workspace.js';

const manifest = JSON.parse(
  readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8'),
) as {
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

const workspaces = useTempWorkspaces();

describe('optional peer dependencies', () => {
  it('declares js-tiktoken and diff as optional peers, with the ranges the errors name', () => {
    for (const peer of [TOKENIZER_PEER, DIFF_PEER]) {
      expect(manifest.peerDependencies[peer.name]).toBe(peer.range);
      expect(manifest.peerDependenciesMeta[peer.name]?.optional).toBe(true);
      expect(manifest.dependencies?.[peer.name]).toBeUndefined();
    }
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  describe('installed without them', () => {
    // The built package alone in a node_modules outside the repository:
    // neither js-tiktoken nor diff can be resolved from there.
    let app: string;
    // pnpm's bin shims set NODE_PATH to the store; a user's shell does not.
    const env = { ...process.env, NODE_PATH: '' };
    let run: (script: string) => ReturnType<typeof spawnSync>;

    beforeAll(() => {
      const dist = join(PACKAGE_ROOT, 'dist');
      if (!existsSync(join(dist, 'index.js')))
        throw new Error(
          `${dist} is missing: build the package first (pnpm turbo run build --filter @heretek/prefix)`,
        );
      app = workspaces.copy('heretek-prefix-lean-');
      const target = join(app, 'node_modules', '@heretek', 'prefix');
      mkdirSync(target, { recursive: true });
      cpSync(dist, join(target, 'dist'), { recursive: true });
      cpSync(join(PACKAGE_ROOT, 'package.json'), join(target, 'package.json'));
      for (const peer of ['js-tiktoken', 'diff']) {
        const probe = spawnSync(
          process.execPath,
          ['-e', `require.resolve(${JSON.stringify(peer)})`],
          { cwd: app, encoding: 'utf8', env },
        );
        expect(probe.status, `${peer} must not resolve from ${app}`).not.toBe(
          0,
        );
      }
      run = (script) =>
        spawnSync(process.execPath, ['--input-type=module', '-e', script], {
          cwd: app,
          encoding: 'utf8',
          env,
        });
    });

    it('imports, serves roles and assembles prompts', () => {
      const result = run(`
        import { canCallMutating, assemblePrefixCachedPrompt, toAnthropicSystem, PrefixError } from '@heretek/prefix';
        const prompt = assemblePrefixCachedPrompt({ role: 'director', workspaceRoot: process.cwd(), activeProfile: 'core' });
        let code;
        try { toAnthropicSystem({ prompt, model: 'claude-sonnet-4-5' }); } catch (error) { code = PrefixError.isInstance(error) && error.code; }
        console.log(JSON.stringify({ director: canCallMutating('director'), bytes: prompt.cacheBreakpoints[2], code }));
      `);
      expect(result.stderr).toBe('');
      const out = JSON.parse(String(result.stdout)) as {
        director: boolean;
        bytes: number;
        code: string;
      };
      expect(out.director).toBe(false);
      expect(out.bytes).toBeGreaterThan(1000);
      expect(out.code).toBe('OPTIONAL_DEPENDENCY_MISSING');
    });

    it('names the package to install when a token estimate or a diff is asked for', () => {
      const result = run(`
        import { assemblePrefixCachedPrompt, diffPrompts, measurePrompt } from '@heretek/prefix';
        const a = assemblePrefixCachedPrompt({ role: 'director', workspaceRoot: process.cwd(), activeProfile: 'core' });
        const b = assemblePrefixCachedPrompt({ role: 'qa-adversary', workspaceRoot: process.cwd(), activeProfile: 'core' });
        const caught = (fn) => { try { fn(); return 'no error'; } catch (error) { return error.code + ': ' + error.message; } };
        console.log(JSON.stringify({
          measure: caught(() => measurePrompt(a)),
          diff: caught(() => diffPrompts({ a, b })),
          same: diffPrompts({ a, b: a }).unifiedDiff,
        }));
      `);
      expect(result.stderr).toBe('');
      const out = JSON.parse(String(result.stdout)) as Record<string, string>;
      expect(out.measure).toMatch(
        /^OPTIONAL_DEPENDENCY_MISSING: Token estimates .* need js-tiktoken, an optional peer dependency of @heretek\/prefix .*npm install js-tiktoken@\^1\.0\.21/,
      );
      expect(out.diff).toMatch(
        /^OPTIONAL_DEPENDENCY_MISSING: Prompt diffs .* need diff, .*npm install diff@\^8\.0\.4/,
      );
      expect(out.same).toBe('');
    });

    it('runs the CLI commands that need neither, and explains the others', () => {
      const cli = join(
        app,
        'node_modules',
        '@heretek',
        'prefix',
        'dist',
        'cli.js',
      );
      const printed = execFileSync(
        process.execPath,
        [cli, 'print', 'director'],
        { cwd: app, encoding: 'utf8', env },
      );
      expect(printed).toContain('# Active profile: core');
      const layers = spawnSync(process.execPath, [cli, 'layers', 'director'], {
        cwd: app,
        encoding: 'utf8',
        env,
      });
      expect(layers.status).toBe(1);
      expect(layers.stdout).toBe('');
      expect(layers.stderr).toMatch(
        /^heretek-prefix: OPTIONAL_DEPENDENCY_MISSING: .*npm install js-tiktoken@\^1\.0\.21/,
      );
    });
  });

  it('loads them from the repository, where they are devDependencies', () => {
    // The same built package inside the repository measures normally.
    const out = execFileSync(
      process.execPath,
      [join(PACKAGE_ROOT, 'dist', 'cli.js'), 'layers', 'director', '--json'],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(
      (JSON.parse(out) as { totalTokens: number }).totalTokens,
    ).toBeGreaterThan(1000);
  });
});

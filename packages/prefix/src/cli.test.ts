import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MINIMUM_CACHEABLE_TOKENS } from './cache-minimums.js';
import { ROLE_NAMES, assemblePrefixCachedPrompt } from './index.js';
import { VERSION } from './version.js';
import {
  PACKAGE_ROOT,
  REPO_ROOT,
  useTempWorkspaces,
} from './__fixtures__/workspace.js';

const CLI = join(PACKAGE_ROOT, 'dist', 'cli.js');

/** Run the built CLI in a child process; resolves with its exit status and output. */
function cli(
  args: string[],
  cwd = REPO_ROOT,
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const status =
          error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

beforeAll(() => {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run the build before the tests`);
});
const workspaces = useTempWorkspaces();

// Concurrent: each child process loads the tokenizer, so they share the cores.
describe.concurrent('heretek-prefix CLI (built dist/cli.js)', () => {
  it('prints exactly the assembled prompt, from the current directory or --root', async () => {
    const expected = assemblePrefixCachedPrompt({
      role: 'staff-mobile',
      workspaceRoot: REPO_ROOT,
      activeProfile: 'android',
    });
    const print = ['print', 'staff-mobile', '--profile', 'android'];
    const fromCwd = await cli(print);
    expect(fromCwd.status).toBe(0);
    expect(fromCwd.stdout).toBe(expected.systemPrompt);
    expect(fromCwd.stderr).toBe('');
    const windowsRoot = workspaces.windows();
    const fromRoot = await cli([...print, '--root', windowsRoot], PACKAGE_ROOT);
    expect(fromRoot.stdout).toBe(expected.systemPrompt);
  });

  it('prints the layer table with bytes, tokens and every fingerprint', async () => {
    const prompt = assemblePrefixCachedPrompt({
      role: 'qa-adversary',
      workspaceRoot: REPO_ROOT,
      activeProfile: 'game',
    });
    const { status, stdout } = await cli([
      'layers',
      'qa-adversary',
      '--profile',
      'game',
    ]);
    expect(status).toBe(0);
    for (const layer of prompt.layers) {
      expect(stdout).toMatch(
        new RegExp(
          `^${layer.index}\\s+${layer.name}\\s+${layer.byteLength}\\s+\\d+\\s+${layer.sha256}$`,
          'm',
        ),
      );
    }
    expect(stdout).toContain(prompt.frozenPrefixSha256);
    expect(stdout).toContain(
      `cache breakpoints (UTF-8 byte offsets): ${prompt.cacheBreakpoints.join(' ')}`,
    );

    const json = JSON.parse(
      (await cli(['layers', 'qa-adversary', '--profile', 'game', '--json']))
        .stdout,
    ) as {
      cacheBreakpoints: number[];
      layers: { sha256: string; bytes: number; tokens: number }[];
      frozenTokens: number;
    };
    expect(json.cacheBreakpoints).toEqual([...prompt.cacheBreakpoints]);
    expect(json.layers.map((layer) => layer.sha256)).toEqual(
      prompt.layers.map((layer) => layer.sha256),
    );
    expect(json.frozenTokens).toBeGreaterThanOrEqual(1024);
  });

  it('diffs two roles: layers 1, 2 and 4 identical, layer 3 differs, and a unified diff', async () => {
    const { status, stdout } = await cli([
      'diff',
      'director',
      'staff-backend',
      '--profile',
      'appsec',
    ]);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^layer 1 shared-context: identical [0-9a-f]{64}$/m);
    expect(stdout).toMatch(/^layer 2 protocol: identical [0-9a-f]{64}$/m);
    expect(stdout).toMatch(
      /^layer 3 role: differs [0-9a-f]{64} [0-9a-f]{64}$/m,
    );
    expect(stdout).toMatch(/^layer 4 profile: identical [0-9a-f]{64}$/m);
    const director = assemblePrefixCachedPrompt({
      role: 'director',
      workspaceRoot: REPO_ROOT,
      activeProfile: 'appsec',
    });
    const shared = Number(/shared prefix: (\d+) bytes/.exec(stdout)?.[1]);
    expect(shared).toBeGreaterThanOrEqual(director.frozenPrefixBytes);
    expect(stdout).toContain('--- director (appsec)');
    expect(stdout).toContain('+++ staff-backend (appsec)');
    expect(stdout).toContain('-# Role: director');
    expect(stdout).toContain('+# Role: staff-backend');

    const sameRole = (
      await cli([
        'diff',
        'director',
        'director',
        '--profile',
        'core',
        '--profile-b',
        'research',
      ])
    ).stdout;
    expect(sameRole).toMatch(/^layer 3 role: identical/m);
    expect(sameRole).toMatch(/^layer 4 profile: differs/m);
  });

  it('reports all roles and profiles', async () => {
    const { status, stdout } = await cli(['report']);
    expect(status).toBe(0);
    for (const role of ROLE_NAMES) {
      expect(stdout).toMatch(
        new RegExp(`^\\| ${role} \\| \\d+ \\| \\d+ \\|`, 'm'),
      );
    }
    expect(stdout).toMatch(/^\| research \| \d+ \| \d+ \|$/m);
    // Which models cache the frozen prefix: "yes" exactly where its tokens reach the minimum.
    const frozenTokens = Number(
      /^Frozen prefix .*?: \d+ bytes, (\d+) tokens/m.exec(stdout)?.[1],
    );
    expect(frozenTokens).toBeGreaterThan(1024);
    const rows = [
      ...stdout.matchAll(
        /^\| (anthropic|openai|gemini) \| (.+?) \| (\d+) \| (yes|no) \| (.+?) \|$/gm,
      ),
    ];
    expect(rows).toHaveLength(MINIMUM_CACHEABLE_TOKENS.length);
    for (const [, provider, , minimum, cached] of rows) {
      expect(cached, `${provider} ${minimum}`).toBe(
        frozenTokens >= Number(minimum) ? 'yes' : 'no',
      );
    }
    expect(rows.some((row) => row[1] === 'openai' && row[4] === 'yes')).toBe(
      true,
    );
    expect(
      rows.some(
        (row) => row[1] === 'anthropic' && row[3] === '4096' && row[4] === 'no',
      ),
    ).toBe(true);
  });

  it('emits provider request parts and warns on stderr below the minimum', async () => {
    const anthropic = await cli([
      'anthropic',
      'director',
      '--model',
      'claude-opus-4-5',
    ]);
    expect(anthropic.status).toBe(0);
    const parsed = JSON.parse(anthropic.stdout) as {
      system: { text: string }[];
    };
    const prompt = assemblePrefixCachedPrompt({
      role: 'director',
      workspaceRoot: REPO_ROOT,
      activeProfile: 'core',
    });
    expect(parsed.system.map((block) => block.text).join('')).toBe(
      prompt.systemPrompt,
    );
    expect(anthropic.stderr).toMatch(
      /^warning: .*below the 4096-token minimum/m,
    );
    const openai = await cli(['openai', 'director', '--model', 'gpt-5']);
    expect(JSON.parse(openai.stdout)).toMatchObject({
      prompt_cache_key: expect.stringMatching(/^heretek-[0-9a-f]{24}$/),
    });
    expect(openai.stderr).toBe('');
    expect((await cli(['openai', 'director'])).status).toBe(2);
  });

  it('fails with a typed message and a non-zero exit code', async () => {
    const unknownRole = await cli(['print', 'admin']);
    expect(unknownRole.status).toBe(1);
    expect(unknownRole.stdout).toBe('');
    expect(unknownRole.stderr).toContain('UNKNOWN_ROLE');

    const empty = workspaces.copy();
    const missing = await cli([
      'print',
      'director',
      '--root',
      join(empty, 'nowhere'),
    ]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('ROLE_FILE_MISSING');
    expect(missing.stderr).toContain('roles/shared/01-context.md');

    expect(
      (await cli(['print', 'director', '--profile', 'ios'])).stderr,
    ).toContain('UNKNOWN_PROFILE');
    expect((await cli([])).status).toBe(2);
    expect((await cli(['frobnicate'])).status).toBe(2);
    expect((await cli(['print', 'director', '--bogus'])).status).toBe(2);
  });

  it('answers --help and --version', async () => {
    expect((await cli(['--version'])).stdout.trim()).toBe(VERSION);
    const help = await cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: heretek-prefix');
  });
});

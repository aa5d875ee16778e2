import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKENDS } from '@heretek/internal';
import { normalizeSourceText } from './normalize.js';
import {
  PROFILE_NAMES,
  PrefixError,
  ROLE_NAMES,
  RoleFileError,
  UnknownProfileError,
  UnknownRoleError,
  assemblePrefixCachedPrompt,
  splitAtFrozenPrefix,
} from './index.js';
import type { AssembledPrefix } from './index.js';
import {
  PACKAGE_ROOT,
  REPO_ROOT,
  useTempWorkspaces,
} from './__fixtures__/workspace.js';

const workspaces = useTempWorkspaces();

const bytesOf = (text: string) => Buffer.from(text, 'utf8');
/** The words of `words` that `text` lacks: an empty list when it holds them all. */
const missingFrom = (text: string, words: readonly string[]) =>
  words.filter((word) => !text.includes(word));
const sha256 = (text: string) =>
  createHash('sha256').update(text, 'utf8').digest('hex');

function all(workspaceRoot: string): AssembledPrefix[] {
  return ROLE_NAMES.flatMap((role) =>
    PROFILE_NAMES.map((activeProfile) =>
      assemblePrefixCachedPrompt({ role, workspaceRoot, activeProfile }),
    ),
  );
}

describe('assemblePrefixCachedPrompt on the real roles/', () => {
  const prompts = all(REPO_ROOT);
  /** The frozen protocol layer, the same in every role's prompt. */
  const protocol = (prompts[0] as AssembledPrefix).layers[1].text;

  it('keeps layers 1+2 byte-identical across all 6 roles and all 5 profiles', () => {
    expect(prompts).toHaveLength(30);
    const [first] = prompts as [AssembledPrefix];
    const frozen = bytesOf(first.systemPrompt).subarray(
      0,
      first.frozenPrefixBytes,
    );
    expect(frozen.length).toBeGreaterThan(1000);
    for (const prompt of prompts) {
      expect(prompt.frozenPrefixBytes).toBe(first.frozenPrefixBytes);
      expect(
        bytesOf(prompt.systemPrompt)
          .subarray(0, prompt.frozenPrefixBytes)
          .equals(frozen),
      ).toBe(true);
      expect(prompt.frozenPrefixSha256).toBe(first.frozenPrefixSha256);
      expect(prompt.layers[0].sha256).toBe(first.layers[0].sha256);
      expect(prompt.layers[1].sha256).toBe(first.layers[1].sha256);
    }
    // ... and the roles really differ after it.
    expect(new Set(prompts.map((prompt) => prompt.layers[2].sha256)).size).toBe(
      6,
    );
  });

  it('splits every prompt where the frozen prefix ends: the same first part for all, the role and profile after it', () => {
    const firsts = new Set<string>();
    for (const prompt of prompts) {
      const { frozen, rest } = splitAtFrozenPrefix(prompt);
      expect(frozen + rest).toBe(prompt.systemPrompt);
      expect(bytesOf(frozen).length).toBe(prompt.frozenPrefixBytes);
      expect(rest.startsWith(`# Role: ${prompt.role}\n`)).toBe(true);
      firsts.add(frozen);
    }
    expect(firsts.size).toBe(1);
  });

  it('keeps layers 1-3 identical across profiles for one role, and layer 4 differs per profile', () => {
    for (const role of ROLE_NAMES) {
      const forRole = prompts.filter((prompt) => prompt.role === role);
      const [first] = forRole as [AssembledPrefix];
      const upToRole = bytesOf(first.systemPrompt).subarray(
        0,
        first.cacheBreakpoints[1],
      );
      for (const prompt of forRole) {
        expect(prompt.cacheBreakpoints[1]).toBe(first.cacheBreakpoints[1]);
        expect(
          bytesOf(prompt.systemPrompt)
            .subarray(0, prompt.cacheBreakpoints[1])
            .equals(upToRole),
        ).toBe(true);
      }
      expect(
        new Set(forRole.map((prompt) => prompt.layers[3].sha256)).size,
      ).toBe(5);
    }
  });

  it('gives UTF-8 byte offsets on code-point boundaries, strictly increasing, the last at the prompt end', () => {
    for (const prompt of prompts) {
      const bytes = bytesOf(prompt.systemPrompt);
      const [frozenEnd, roleEnd, end] = prompt.cacheBreakpoints;
      expect(frozenEnd).toBe(prompt.frozenPrefixBytes);
      expect(0 < frozenEnd && frozenEnd < roleEnd && roleEnd < end).toBe(true);
      expect(end).toBe(bytes.length);
      let offset = 0;
      for (const layer of prompt.layers) {
        expect(layer.byteStart).toBe(offset);
        expect(layer.byteEnd - layer.byteStart).toBe(layer.byteLength);
        expect(
          bytes.subarray(layer.byteStart, layer.byteEnd).toString('utf8'),
        ).toBe(layer.text);
        offset = layer.byteEnd;
      }
      expect([
        prompt.layers[1].byteEnd,
        prompt.layers[2].byteEnd,
        prompt.layers[3].byteEnd,
      ]).toEqual([...prompt.cacheBreakpoints]);
    }
  });

  it('fingerprints every layer with the SHA-256 of its UTF-8 bytes', () => {
    for (const prompt of prompts) {
      for (const layer of prompt.layers)
        expect(layer.sha256).toBe(sha256(layer.text));
      expect(prompt.frozenPrefixSha256).toBe(
        sha256(prompt.layers[0].text + prompt.layers[1].text),
      );
      expect(prompt.systemPromptSha256).toBe(sha256(prompt.systemPrompt));
      expect(prompt.layers.map((layer) => layer.text).join('')).toBe(
        prompt.systemPrompt,
      );
    }
  });

  it('puts the three meta-tools, the handoff envelope and both skills in the frozen protocol layer', () => {
    expect(
      missingFrom(protocol, [
        'mcp_search_tools',
        'mcp_inspect_schema',
        'mcp_call_tool',
        'lazy-search',
        'red-proof',
        'trace id',
        'SHA-256 digest',
        'Never hand mutating work to director or qa-adversary',
      ]),
    ).toEqual([]);
  });

  it("describes the broker's real answers in the protocol layer: hit lines, unmatched words, schema fields, error codes", () => {
    // The broker's search lines are `<name> [read-only|mutating] - <description>`, then `Matched nothing: <words>`.
    expect(
      missingFrom(protocol, [
        '`[read-only]`',
        '`[mutating]`',
        '`Matched nothing: `',
        '`No tools match`',
        // mcp_inspect_schema answers JSON with these keys.
        '`name`',
        '`target`',
        '`description`',
        '`mutating`',
        '`inputSchema`',
      ]),
    ).toEqual([]);
    // Every code the broker puts at the start of an isError result, each with what to do.
    for (const code of [
      'UNKNOWN_TOOL',
      'ROLE_FORBIDDEN',
      'INVALID_ARGUMENTS',
      'NO_GATEWAY',
      'CIRCUIT_OPEN',
      'BACKEND_FAILED',
      'CANCELLED',
    ]) {
      expect(protocol).toMatch(new RegExp(`^- \`${code}\`: .+\\.$`, 'm'));
    }
  });

  it('renders each role permissions from the role table into layer 3', () => {
    for (const prompt of prompts) {
      const layer3 = prompt.layers[2].text;
      expect(layer3).toContain(`# Role: ${prompt.role}`);
      expect(layer3).toContain(`- Role: ${prompt.role} (`);
      const readOnly =
        prompt.role === 'director' || prompt.role === 'qa-adversary';
      expect(layer3.includes('read-only tools only')).toBe(readOnly);
      expect(layer3.includes('you may receive mutating work')).toBe(!readOnly);
    }
  });

  it('lists in layer 4 exactly the profile targets plus core', () => {
    for (const prompt of prompts) {
      const layer4 = prompt.layers[3].text;
      for (const entry of DEFAULT_BACKENDS) {
        const inScope =
          entry.profile === 'core' || entry.profile === prompt.activeProfile;
        expect(layer4.includes(`- \`${entry.target}\` (`)).toBe(inScope);
      }
    }
  });
});

describe('reproducibility', () => {
  it('gives the same bytes from a checkout with CRLF line endings, a BOM and trailing spaces', () => {
    const root = workspaces.windows();
    const raw = readFileSync(join(root, 'roles', 'director.md'), 'utf8');
    expect(raw.startsWith('\uFEFF')).toBe(true);
    expect(raw).toContain('\r\n');
    const original = all(REPO_ROOT);
    const windows = all(root);
    windows.forEach((prompt, index) => {
      expect(prompt.systemPrompt).toBe(
        (original[index] as AssembledPrefix).systemPrompt,
      );
      expect(prompt.systemPromptSha256).toBe(
        (original[index] as AssembledPrefix).systemPromptSha256,
      );
    });
    expect(normalizeSourceText('\uFEFFa \r\nb\rc\t\r\n\r\n')).toBe('a\nb\nc');
  });

  it('never lets the workspace path, a date, a random id or the environment into any layer', () => {
    const rootA = workspaces.copy('heretek-prefix-alpha-');
    const rootB = workspaces.copy('heretek prefix beta ü-');
    const promptsA = all(rootA);
    const promptsB = all(rootB);
    const forbidden = [
      rootA,
      rootB,
      basename(rootA),
      basename(rootB),
      REPO_ROOT,
      process.cwd(),
      tmpdir(),
      String(new Date().getFullYear()),
    ];
    promptsA.forEach((prompt, index) => {
      const other = promptsB[index] as AssembledPrefix;
      expect(
        bytesOf(prompt.systemPrompt).equals(bytesOf(other.systemPrompt)),
      ).toBe(true);
      for (const layer of prompt.layers) {
        for (const value of forbidden) expect(layer.text).not.toContain(value);
        expect(layer.text).not.toMatch(/\b\d{4}-\d{2}-\d{2}\b/); // dates
        expect(layer.text).not.toMatch(/\b\d{1,2}:\d{2}(:\d{2})?\b/); // times
        expect(layer.text).not.toMatch(
          /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i,
        ); // uuids
        expect(layer.text).not.toMatch(
          /[A-Za-z]:\\|\/(home|tmp|Users|root|work)\//,
        ); // absolute paths
        expect(layer.text).not.toContain('\r');
        expect(layer.text).not.toContain('\uFEFF');
      }
      expect(
        prompt.layers
          .flatMap((layer) => layer.sources)
          .every((source) => source.startsWith('roles/')),
      ).toBe(true);
    });
  });

  it('gives the same bytes in a process with another time zone, locale, home and working directory', () => {
    const script = `
      import { assemblePrefixCachedPrompt } from ${JSON.stringify(join(PACKAGE_ROOT, 'dist', 'index.js'))};
      const out = [];
      for (const role of ['director', 'staff-mobile', 'qa-adversary']) {
        for (const activeProfile of ['core', 'android']) {
          out.push(assemblePrefixCachedPrompt({ role, workspaceRoot: process.argv[1], activeProfile }).systemPromptSha256);
        }
      }
      process.stdout.write(out.join(','));`;
    const runWith = (env: NodeJS.ProcessEnv, cwd: string) => {
      const result = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', script, REPO_ROOT],
        {
          env: { PATH: process.env.PATH, ...env },
          cwd,
          encoding: 'utf8',
        },
      );
      expect(result.stderr).toBe('');
      return result.stdout;
    };
    const here = runWith({ TZ: 'UTC', LANG: 'C' }, REPO_ROOT);
    const there = runWith(
      {
        TZ: 'Asia/Kathmandu',
        LANG: 'tr_TR.UTF-8',
        LC_ALL: 'tr_TR.UTF-8',
        HOME: '/nonexistent',
      },
      workspaces.copy(),
    );
    expect(here.split(',')).toHaveLength(6);
    expect(there).toBe(here);
    const expected = ['director', 'staff-mobile', 'qa-adversary'].flatMap(
      (role) =>
        ['core', 'android'].map(
          (activeProfile) =>
            assemblePrefixCachedPrompt({
              role,
              workspaceRoot: REPO_ROOT,
              activeProfile,
            }).systemPromptSha256,
        ),
    );
    expect(here).toBe(expected.join(','));
  });

  it('counts offsets in UTF-8 bytes, not UTF-16 units, with multi-byte text in every layer', () => {
    const root = workspaces.copy();
    for (const file of [
      'shared/01-context.md',
      'shared/02-protocol.md',
      'staff-backend.md',
    ]) {
      const path = join(root, 'roles', ...file.split('/'));
      writeFileSync(
        path,
        `${readFileSync(path, 'utf8')}\nNon-ASCII: naïve café, 東京, 🚀 emoji, e\u0301.\n`,
      );
    }
    const prompt = assemblePrefixCachedPrompt({
      role: 'staff-backend',
      workspaceRoot: root,
      activeProfile: 'game',
    });
    const bytes = bytesOf(prompt.systemPrompt);
    expect(bytes.length).toBeGreaterThan(prompt.systemPrompt.length);
    for (const offset of prompt.cacheBreakpoints) {
      // A code-point boundary: the byte there (if any) is not a UTF-8 continuation byte.
      if (offset < bytes.length)
        expect((bytes[offset] as number) & 0xc0).not.toBe(0x80);
    }
    expect(
      Buffer.from(prompt.systemPrompt, 'utf8')
        .subarray(0, prompt.frozenPrefixBytes)
        .toString('utf8'),
    ).toBe(prompt.layers[0].text + prompt.layers[1].text);
    expect(prompt.layers[0].text).toContain('é'); // NFC: e + combining accent became one code point
    expect(prompt.cacheBreakpoints[2]).toBe(bytes.length);
  });

  it('changes only the fingerprint of the layer whose source changed', () => {
    const root = workspaces.copy();
    const before = assemblePrefixCachedPrompt({
      role: 'staff-frontend',
      workspaceRoot: root,
      activeProfile: 'research',
    });
    const path = join(root, 'roles', 'staff-frontend.md');
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace('user interfaces', 'user interface'),
    );
    const after = assemblePrefixCachedPrompt({
      role: 'staff-frontend',
      workspaceRoot: root,
      activeProfile: 'research',
    });
    expect(
      after.layers.map(
        (layer, index) => layer.sha256 === before.layers[index]?.sha256,
      ),
    ).toEqual([true, true, false, true]);
    expect(after.frozenPrefixSha256).toBe(before.frozenPrefixSha256);
  });
});

describe('errors', () => {
  /** Assembling `role` (profile `activeProfile`) in `root` fails naming `file`. */
  function expectRoleFileError(
    assembling: { role: string; root: string; activeProfile?: string },
    code: string,
    file: string,
  ) {
    try {
      assemblePrefixCachedPrompt({
        role: assembling.role,
        workspaceRoot: assembling.root,
        activeProfile: assembling.activeProfile ?? 'core',
      });
    } catch (error) {
      expect(RoleFileError.isInstance(error)).toBe(true);
      expect(PrefixError.isInstance(error)).toBe(true);
      expect((error as RoleFileError).code).toBe(code);
      expect((error as RoleFileError).file).toBe(file);
      expect((error as Error).message).toContain(file);
      return;
    }
    throw new Error('expected a RoleFileError');
  }

  it('names a missing role file', () => {
    const root = workspaces.copy();
    rmSync(join(root, 'roles', 'qa-adversary.md'));
    expectRoleFileError(
      { role: 'qa-adversary', root },
      'ROLE_FILE_MISSING',
      'roles/qa-adversary.md',
    );
    // Other roles still assemble.
    expect(
      assemblePrefixCachedPrompt({
        role: 'director',
        workspaceRoot: root,
        activeProfile: 'core',
      }).role,
    ).toBe('director');
  });

  it('names a missing shared file and a workspace without roles/', () => {
    const root = workspaces.copy();
    rmSync(join(root, 'roles', 'shared', '02-protocol.md'));
    expectRoleFileError(
      { role: 'director', root },
      'ROLE_FILE_MISSING',
      'roles/shared/02-protocol.md',
    );
    rmSync(join(root, 'roles'), { recursive: true });
    expectRoleFileError(
      { role: 'director', root },
      'ROLE_FILE_MISSING',
      'roles/shared/01-context.md',
    );
  });

  it.each([
    ['an empty file', ''],
    ['whitespace only', ' \r\n\t\n'],
    ['a BOM and blank lines', '\uFEFF\r\n\r\n'],
  ])('names an empty role file (%s)', (_label, content) => {
    const root = workspaces.copy();
    writeFileSync(join(root, 'roles', 'staff-mobile.md'), content);
    expectRoleFileError(
      { role: 'staff-mobile', root, activeProfile: 'android' },
      'ROLE_FILE_EMPTY',
      'roles/staff-mobile.md',
    );
  });

  it('names a role file that is a folder', () => {
    const root = workspaces.copy();
    rmSync(join(root, 'roles', 'shared', '01-context.md'));
    mkdirSync(join(root, 'roles', 'shared', '01-context.md'));
    expectRoleFileError(
      { role: 'director', root },
      'ROLE_FILE_UNREADABLE',
      'roles/shared/01-context.md',
    );
  });

  it('refuses unknown roles and profiles with typed errors, before touching the disk', () => {
    expect(() =>
      assemblePrefixCachedPrompt({
        role: 'admin',
        workspaceRoot: '/nonexistent',
        activeProfile: 'core',
      }),
    ).toThrow(UnknownRoleError);
    expect(() =>
      assemblePrefixCachedPrompt({
        role: 'director',
        workspaceRoot: REPO_ROOT,
        activeProfile: 'ios',
      }),
    ).toThrow(UnknownProfileError);
    let caught: unknown;
    try {
      assemblePrefixCachedPrompt({
        role: 'director',
        workspaceRoot: REPO_ROOT,
        activeProfile: 'Core',
      });
    } catch (error) {
      caught = error;
    }
    expect((caught as PrefixError).code).toBe('UNKNOWN_PROFILE');
    expect((caught as Error).message).toContain(
      'core, appsec, android, game, research',
    );
    expect(() =>
      assemblePrefixCachedPrompt({
        role: 'director',
        workspaceRoot: '',
        activeProfile: 'core',
      }),
    ).toThrow(/workspaceRoot/);
  });
});

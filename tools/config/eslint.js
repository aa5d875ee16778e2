// Shared flat config. stdout of the broker carries the MCP protocol, so
// console output other than stderr (console.error / console.warn) is an error
// in library and app code. Runtime imports must be declared dependencies
// (tests, benches and configs may use devDependencies).
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/.tsbuild/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/coverage/**',
      '.tools/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': ['error', { allow: ['error', 'warn'] }],
      'import-x/no-extraneous-dependencies': [
        'error',
        {
          devDependencies: [
            '**/*.test.ts',
            '**/__fixtures__/**',
            '**/bench/**',
            '**/scripts/**',
            '**/*.config.ts',
          ],
          // @heretek/internal is bundled into every package at build time.
          whitelist: ['@heretek/internal'],
          includeTypes: false,
          // The package's own manifest, then the workspace root's (test tools).
          packageDir: [process.cwd(), ROOT],
        },
      ],
    },
  },
  {
    // The broker publishes with every dependency bundled (apps/broker/tsup.config.ts),
    // so what its source imports is declared as a devDependency.
    files: ['apps/broker/src/**/*.ts'],
    rules: {
      'import-x/no-extraneous-dependencies': [
        'error',
        {
          devDependencies: true,
          packageDir: [
            fileURLToPath(new URL('../../apps/broker', import.meta.url)),
            ROOT,
          ],
        },
      ],
    },
  },
  {
    // The Claude Code plugin's hook program is bundled the same way
    // (packages/claude-code/tsup.config.ts): the package has no runtime dependencies.
    files: ['packages/claude-code/src/**/*.ts'],
    rules: {
      'import-x/no-extraneous-dependencies': [
        'error',
        {
          devDependencies: true,
          packageDir: [
            fileURLToPath(
              new URL('../../packages/claude-code', import.meta.url),
            ),
            ROOT,
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', '**/bench/**', '**/scripts/**', '**/*.bench.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Units one person can hold: no function of 100 lines or more in a
    // package's source, and no import circle.
    files: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/__fixtures__/**'],
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // Sources import `./x.js`, which is `./x.ts` here.
      'import-x/resolver-next': [
        createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      'max-lines-per-function': ['error', { max: 99 }],
      'import-x/no-cycle': 'error',
    },
  },
);

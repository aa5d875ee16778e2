// Test fixture: compiles src/usage/usage-log.ts (and the modules it imports,
// with the source-only @heretek/internal) to plain JavaScript with the
// workspace's TypeScript, so real child processes can run the module as it is
// in the source tree; `zod` resolves to the broker's installed copy.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const SOURCES = [
  'usage/usage-log.ts',
  'trust/state-dir.ts',
  'trust/state-file.ts',
  'error-text.ts',
  'errors.ts',
  'issue-text.ts',
];
const srcRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const internalRoot = path.resolve(srcRoot, '../../../packages/internal/src');
const zodUrl = pathToFileURL(
  path.join(
    path.dirname(createRequire(import.meta.url).resolve('zod/package.json')),
    'index.js',
  ),
).href;

/** Compiles one module to `to` (.js), pointing its package imports at `internal` and zod. */
async function compile(options: {
  from: string;
  to: string;
  internal: string;
}): Promise<void> {
  const { outputText } = ts.transpileModule(
    await readFile(options.from, 'utf8'),
    {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
      },
    },
  );
  const relative = path.relative(path.dirname(options.to), options.internal);
  const internal = relative.startsWith('.') ? relative : `./${relative}`;
  await mkdir(path.dirname(options.to), { recursive: true });
  await writeFile(
    options.to.replace(/\.ts$/, '.js'),
    outputText
      .replaceAll("from 'zod'", `from '${zodUrl}'`)
      .replaceAll("from '@heretek/internal'", `from '${internal}/index.js'`),
  );
}

/**
 * Writes the compiled modules and an appender script into `directory`;
 * returns the script's path. The script sends `ready` over its IPC channel, waits until the file
 * `go` exists (so several writers start together), then appends `count` uses of tool
 * `<writer>_tool` with terms `['n<i>']` (then `padding` terms of 60
 * characters each) to `file`, one after another, and exits 1 (with the
 * problem on stderr) on the first failed append.
 */
export async function writeAppender(directory: string): Promise<string> {
  const internal = path.join(directory, 'internal');
  for (const name of await readdir(internalRoot)) {
    if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
      await compile({
        from: path.join(internalRoot, name),
        to: path.join(internal, name),
        internal,
      });
    }
  }
  for (const source of SOURCES) {
    await compile({
      from: path.join(srcRoot, source),
      to: path.join(directory, source),
      internal,
    });
  }
  await writeFile(
    path.join(directory, 'package.json'),
    JSON.stringify({ type: 'module' }),
  );
  const script = path.join(directory, 'append.js');
  await writeFile(
    script,
    `import { existsSync } from 'node:fs';
import { UsageLog } from './usage/usage-log.js';
const [file, writer, count, padding, go] = process.argv.slice(2);
process.send?.('ready', () => process.disconnect());
while (!existsSync(go)) await new Promise((resolve) => setTimeout(resolve, 2));
const log = new UsageLog({
  file,
  log: (line) => process.stderr.write(line + '\\n'),
});
const pad = Array.from({ length: Number(padding) }, () => 'p'.repeat(60));
for (let i = 0; i < Number(count); i += 1) {
  const status = await log.append({ terms: ['n' + i, ...pad], tool: writer + '_tool' });
  if (!status.ok) {
    process.stderr.write(status.message + '\\n');
    process.exit(1);
  }
}
`,
  );
  return script;
}

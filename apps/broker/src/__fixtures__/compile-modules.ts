// Test fixture: compiles broker modules, and every module they import, to
// plain JavaScript with the workspace's TypeScript, so that real child
// processes run them as they are in the source tree. Installed packages
// resolve to the broker's copies; the source-only @heretek/internal is
// compiled beside them.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const srcRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
);
const internalRoot = path.resolve(srcRoot, '../../../packages/internal/src');

/** Where an installed package's ES module entry is, as a file URL. */
function packageUrl(name: string): string {
  const root = path.resolve(srcRoot, '..', 'node_modules', name);
  const manifest = JSON.parse(
    readFileSync(path.join(root, 'package.json'), 'utf8'),
  ) as {
    exports?: Record<string, { import?: string } | string>;
    main?: string;
  };
  const entry = manifest.exports?.['.'];
  const file =
    (typeof entry === 'string' ? entry : entry?.import) ?? manifest.main;
  return pathToFileURL(path.join(root, file ?? 'index.js')).href;
}

/**
 * Compiles `entries` (paths below `src/`, e.g. `trust/pin-store.ts`) and the
 * modules they import into `directory`, at the same paths with `.js`.
 */
export async function compileModules(
  directory: string,
  entries: readonly string[],
): Promise<void> {
  const done = new Set<string>();
  const compile = async (from: string, to: string): Promise<void> => {
    if (done.has(from)) return;
    done.add(from);
    const { outputText } = ts.transpileModule(await readFile(from, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
      },
    });
    const imports: Array<Promise<void>> = [];
    const text = outputText.replace(
      /(from |import\()'([^']+)'/g,
      (whole, keyword: string, specifier: string) => {
        if (specifier.startsWith('.')) {
          const source = path.resolve(
            path.dirname(from),
            specifier.replace(/\.js$/, '.ts'),
          );
          imports.push(
            compile(source, path.resolve(path.dirname(to), specifier)),
          );
          return whole;
        }
        if (specifier.startsWith('node:')) return whole;
        if (specifier === '@heretek/internal') {
          const target = path.join(directory, '@heretek-internal', 'index.js');
          imports.push(compile(path.join(internalRoot, 'index.ts'), target));
          return `${keyword}'${pathToFileURL(target).href}'`;
        }
        return `${keyword}'${packageUrl(specifier)}'`;
      },
    );
    await mkdir(path.dirname(to), { recursive: true });
    await writeFile(to.replace(/\.ts$/, '.js'), text);
    await Promise.all(imports);
  };
  await mkdir(directory, { recursive: true });
  await writeFile(
    path.join(directory, 'package.json'),
    JSON.stringify({ type: 'module' }),
  );
  await Promise.all(
    entries.map((entry) =>
      compile(
        path.join(srcRoot, entry),
        path.join(directory, entry.replace(/\.ts$/, '.js')),
      ),
    ),
  );
}

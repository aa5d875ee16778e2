// Loads the broker's description cleaning and injection rules from their
// TypeScript source (src/trust/sanitize.ts and src/trust/injection-rules.ts),
// transpiled on the fly with the workspace's `typescript`, so an evaluation
// always measures the current source.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const brokerRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
);

export async function loadTrustModules() {
  const dir = await mkdtemp(path.join(tmpdir(), 'heretek-trust-eval-'));
  try {
    const modules = {};
    for (const name of ['sanitize', 'injection-rules']) {
      const source = await readFile(
        path.join(brokerRoot, 'src/trust', `${name}.ts`),
        'utf8',
      );
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
        },
      });
      const file = path.join(dir, `${name}.mjs`);
      await writeFile(file, outputText);
      Object.assign(modules, await import(pathToFileURL(file).href));
    }
    return modules;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

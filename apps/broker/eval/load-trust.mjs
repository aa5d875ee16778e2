// Loads the broker's trust modules (src/trust/*.ts) from their TypeScript
// source, transpiled on the fly with the workspace's `typescript` into a
// temporary directory, so an evaluation always measures the current source.
// `@heretek/internal` (a source-only workspace package) is transpiled beside
// them; `canonicalize` resolves to the broker's installed copy.
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const brokerRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
);
const internalRoot = path.resolve(brokerRoot, '../../packages/internal/src');

async function transpileDirectory(from, to, rewrite) {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from)) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
    const source = await readFile(path.join(from, name), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
      },
    });
    await writeFile(
      path.join(to, name.replace(/\.ts$/, '.js')),
      rewrite(outputText),
    );
  }
}

/** Every export of src/trust/index.ts. */
export async function loadTrustModules() {
  const dir = await mkdtemp(path.join(tmpdir(), 'heretek-trust-eval-'));
  try {
    await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
    await transpileDirectory(
      internalRoot,
      path.join(dir, 'internal'),
      (text) => text,
    );
    const canonicalize = import.meta.resolve('canonicalize');
    await transpileDirectory(
      path.join(brokerRoot, 'src/trust'),
      path.join(dir, 'trust'),
      (text) =>
        text
          .replaceAll("from '@heretek/internal'", "from '../internal/index.js'")
          .replaceAll("from 'canonicalize'", `from '${canonicalize}'`),
    );
    return await import(
      pathToFileURL(path.join(dir, 'trust', 'index.js')).href
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

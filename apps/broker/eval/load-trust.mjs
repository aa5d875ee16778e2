// Loads the broker's trust modules (src/trust/*.ts, and the src/*.ts modules
// they import) from their TypeScript
// source, transpiled on the fly with the workspace's `typescript` into a
// temporary directory, so an evaluation always measures the current source.
// `@heretek/internal` (a source-only workspace package) is transpiled beside
// them; `@heretek/catalog` (built), `canonicalize` and `zod` resolve to the
// broker's installed copies.
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

async function transpileFile(from, to, rewrite) {
  const source = await readFile(from, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
    },
  });
  await writeFile(to.replace(/\.ts$/, '.js'), rewrite(outputText));
}

async function transpileDirectory(from, to, rewrite) {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from)) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
    await transpileFile(path.join(from, name), path.join(to, name), rewrite);
  }
}

/**
 * Every export of src/trust/index.ts, or of another module of src/trust
 * (`entry`, without extension) that the index does not export yet.
 */
export async function loadTrustModules(entry = 'index') {
  const dir = await mkdtemp(path.join(tmpdir(), 'heretek-trust-eval-'));
  try {
    await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
    await transpileDirectory(
      internalRoot,
      path.join(dir, 'internal'),
      (text) => text,
    );
    const catalog = import.meta.resolve('@heretek/catalog');
    const canonicalize = import.meta.resolve('canonicalize');
    const zod = import.meta.resolve('zod');
    const rewrite = (internal) => (text) =>
      text
        .replaceAll("from '@heretek/internal'", `from '${internal}'`)
        .replaceAll("from '@heretek/catalog'", `from '${catalog}'`)
        .replaceAll("from 'canonicalize'", `from '${canonicalize}'`)
        .replaceAll("from 'zod'", `from '${zod}'`);
    // The modules outside src/trust that the trust modules import.
    for (const name of ['error-text.ts', 'errors.ts', 'issue-text.ts']) {
      await transpileFile(
        path.join(brokerRoot, 'src', name),
        path.join(dir, name),
        rewrite('./internal/index.js'),
      );
    }
    await transpileDirectory(
      path.join(brokerRoot, 'src/trust'),
      path.join(dir, 'trust'),
      rewrite('../internal/index.js'),
    );
    return await import(
      pathToFileURL(path.join(dir, 'trust', `${entry}.js`)).href
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// Counts the public API of each package: the names its entry points export
// (values and types apart), read with the TypeScript checker from the
// sources. Run from the repository root: `node scripts/count-exports.mjs`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = process.argv[2] ?? process.cwd();
const packages = [
  'packages/prefix',
  'packages/catalog',
  'packages/gateway-client',
  'packages/skills',
  'packages/handoff',
  'apps/broker',
];

function entries(dir) {
  const manifest = JSON.parse(
    readFileSync(join(root, dir, 'package.json'), 'utf8'),
  );
  const out = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const file =
      typeof target === 'string' ? target : (target.import ?? target.default);
    if (!file || !file.endsWith('.js')) continue;
    const source = join(
      root,
      dir,
      file.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'),
    );
    if (existsSync(source)) out.push({ subpath, source });
  }
  return out;
}

const rows = [];
for (const dir of packages) {
  for (const { subpath, source } of entries(dir)) {
    const program = ts.createProgram([source], {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const file = program.getSourceFile(source);
    const symbol = file && checker.getSymbolAtLocation(file);
    const exported = symbol ? checker.getExportsOfModule(symbol) : [];
    let values = 0;
    let types = 0;
    for (const item of exported) {
      const target =
        item.flags & ts.SymbolFlags.Alias
          ? checker.getAliasedSymbol(item)
          : item;
      if (target.flags & ts.SymbolFlags.Value) values += 1;
      else types += 1;
    }
    const name = JSON.parse(
      readFileSync(join(root, dir, 'package.json'), 'utf8'),
    ).name;
    rows.push(
      `${`${name}${subpath === '.' ? '' : subpath.slice(1)}`.padEnd(30)} ${String(values + types).padStart(4)} (${values} values, ${types} types)`,
    );
  }
}
console.log(rows.join('\n'));

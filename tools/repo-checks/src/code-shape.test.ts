// Rules the packages' sources keep, read with the TypeScript compiler API:
// what a reader can hold (function length, no import circle) and facts with
// one home (the multiplexed tool name, the broker's entry). Each check names
// the file and line that breaks its rule.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Each workspace package's folder, relative to the root (`packages/x`, `apps/y`). */
const PACKAGES = ['packages', 'apps'].flatMap((group) =>
  readdirSync(join(ROOT, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${group}/${entry.name}`)
    .filter((folder) => existsSync(join(ROOT, folder, 'src'))),
);

/** Every TypeScript file below `folder`, relative to the root. */
function typeScriptFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => /\.m?tsx?$/.test(path) && !path.endsWith('.d.ts'))
    .filter((path) => !path.split(/[\\/]/).includes('node_modules'))
    .map((path) => join(folder, path).split('\\').join('/'))
    .sort();
}

/** A test, or a module only tests use (`__fixtures__`). */
function isTestFile(path: string): boolean {
  return /\.test(-d)?\.m?tsx?$/.test(path) || path.includes('/__fixtures__/');
}

/** The non-test sources of one package's `src`. */
function sources(folder: string): string[] {
  return typeScriptFiles(`${folder}/src`).filter((path) => !isTestFile(path));
}

const parsed = new Map<string, ts.SourceFile>();
function parse(path: string): ts.SourceFile {
  let file = parsed.get(path);
  if (file === undefined) {
    file = ts.createSourceFile(
      path,
      readFileSync(join(ROOT, path), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    parsed.set(path, file);
  }
  return file;
}

/** Every node of `file`, depth first. */
function nodes(file: ts.SourceFile): ts.Node[] {
  const all: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    all.push(node);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return all;
}

/** `path:line` of a node, for a failure's message. */
function where(node: ts.Node): string {
  const file = node.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(node.getStart());
  return `${file.fileName}:${line + 1}`;
}

/** Lines a node spans, from its first token to its last. */
function lineSpan(node: ts.Node): number {
  const file = node.getSourceFile();
  const first = file.getLineAndCharacterOfPosition(node.getStart()).line;
  return file.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
}

/** A function's name as a reader would look it up. */
function functionName(node: ts.SignatureDeclaration): string {
  if (node.name !== undefined) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
    parent.name !== undefined
  ) {
    return parent.name.getText();
  }
  return '(anonymous)';
}

/** Where `path` names `name` in code (an identifier or a string), not in a comment. */
function namedAt(path: string, name: string): string[] {
  return nodes(parse(path))
    .filter(
      (node) =>
        (ts.isIdentifier(node) || ts.isStringLiteralLike(node)) &&
        node.text === name,
    )
    .map(where);
}

/**
 * A name built as `<a>_<b>`: a template `${a}_${b}`, a sum with a `'_'`
 * operand, or `[a, b].join('_')`.
 */
function joinsWithUnderscore(node: ts.Node): boolean {
  if (ts.isTemplateExpression(node)) {
    return node.templateSpans
      .slice(0, -1)
      .some((span) => span.literal.text === '_');
  }
  if (
    ts.isBinaryExpression(node) &&
    node.operatorToken.kind === ts.SyntaxKind.PlusToken
  ) {
    return [node.left, node.right].some(
      (side) => ts.isStringLiteralLike(side) && side.text === '_',
    );
  }
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'join' &&
    node.arguments.length === 1 &&
    ts.isStringLiteralLike(node.arguments[0]!) &&
    node.arguments[0].text === '_'
  );
}

/** `x.send = …`, `x['send'] = …` or `send = …` (any assignment operator). */
function assignsSend(node: ts.Node): boolean {
  if (
    !ts.isBinaryExpression(node) ||
    node.operatorToken.kind < ts.SyntaxKind.FirstAssignment ||
    node.operatorToken.kind > ts.SyntaxKind.LastAssignment
  ) {
    return false;
  }
  const target = node.left;
  const name = ts.isPropertyAccessExpression(target)
    ? target.name.text
    : ts.isElementAccessExpression(target) &&
        ts.isStringLiteralLike(target.argumentExpression)
      ? target.argumentExpression.text
      : ts.isIdentifier(target)
        ? target.text
        : undefined;
  return name === 'send';
}

/**
 * The relative imports of a module (static, type-only and dynamic), resolved
 * to files of the same folder tree; `x.js` stands for `x.ts`.
 */
function relativeImports(path: string): string[] {
  const { importedFiles } = ts.preProcessFile(
    readFileSync(join(ROOT, path), 'utf8'),
    true,
    true,
  );
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .flatMap((specifier) => {
      const base = resolve(ROOT, dirname(path), specifier);
      const stem = base.replace(/\.(m?)js$/, '.$1ts');
      const found = [stem, `${base}.ts`, join(base, 'index.ts')].find(
        (candidate) => existsSync(candidate) && !candidate.endsWith('.js'),
      );
      return found === undefined ? [] : [relative(ROOT, found)];
    });
}

/** Every import circle among `files`, each as the modules on it, first repeated. */
function importCircles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((file) => [file, relativeImports(file)]));
  const circles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): void => {
    const open = onPath.indexOf(file);
    if (open !== -1) {
      circles.push([...onPath.slice(open), file]);
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    onPath.pop();
    done.add(file);
  };
  for (const file of files) visit(file);
  return circles;
}

describe('code shape', () => {
  it('no AsyncLocalStorage outside comments in packages/*/src and apps/*/src', () => {
    const found = PACKAGES.flatMap((folder) =>
      typeScriptFiles(`${folder}/src`).flatMap((path) =>
        namedAt(path, 'AsyncLocalStorage'),
      ),
    );
    expect(found).toEqual([]);
  });

  it('no function of 100 or more lines in a package src (tests and fixtures aside)', () => {
    const long = PACKAGES.flatMap(sources).flatMap((path) =>
      nodes(parse(path))
        .filter(
          (node): node is ts.SignatureDeclaration & { body: ts.Node } =>
            ts.isFunctionLike(node) &&
            'body' in node &&
            node.body !== undefined &&
            lineSpan(node) >= 100,
        )
        .map(
          (node) =>
            `${where(node)} ${functionName(node)}: ${lineSpan(node)} lines`,
        ),
    );
    expect(long).toEqual([]);
  });

  it("apps/broker/src/run.ts has at most 200 lines and the broker's sources reassign no send", () => {
    const runFile = 'apps/broker/src/run.ts';
    if (existsSync(join(ROOT, runFile))) {
      const text = readFileSync(join(ROOT, runFile), 'utf8');
      expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(200);
    }
    const reassigned = sources('apps/broker').flatMap((path) =>
      nodes(parse(path)).filter(assignsSend).map(where),
    );
    expect(reassigned).toEqual([]);
  });

  it.each(['apps/broker', 'packages/gateway-client'])(
    'no `as unknown as` in the non-test sources of %s',
    (folder) => {
      const casts = sources(folder).flatMap((path) =>
        nodes(parse(path))
          .filter(
            (node) =>
              ts.isAsExpression(node) &&
              ts.isAsExpression(node.expression) &&
              node.expression.type.kind === ts.SyntaxKind.UnknownKeyword,
          )
          .map(where),
      );
      expect(casts).toEqual([]);
    },
  );

  it('`<target>_<tool>` is built in one function, multiplexedName in @heretek/internal', () => {
    const builders = PACKAGES.flatMap(sources).flatMap((path) =>
      nodes(parse(path))
        .filter(joinsWithUnderscore)
        .map((node) => {
          const inside = ts.findAncestor(node.parent, ts.isFunctionLike);
          const name =
            inside === undefined ? '(top level)' : functionName(inside);
          return `${node.getSourceFile().fileName} in ${name}`;
        }),
    );
    expect(builders).toEqual([
      'packages/internal/src/target-name.ts in multiplexedName',
    ]);
  });

  it.each(PACKAGES)(
    'no import circle among the modules of %s/src',
    (folder) => {
      const circles = importCircles(typeScriptFiles(`${folder}/src`));
      expect(circles.map((circle) => circle.join(' -> '))).toEqual([]);
    },
  );
});

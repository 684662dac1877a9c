// The dependency rules of the codebase, checked on the real source by architecture.test.ts:
// protocol/ is the vocabulary app/ and worker/ share and imports nothing but itself; storage/ is the
// layer under worker/, vm/ and memory/ and imports none of them (only types from protocol/); app ->
// protocol and (types of) worker; worker -> protocol, storage, vm, memory; vm and memory -> storage,
// and neither app nor each other; no Preact, zustand, xyflow or DOM-only globals outside app/.
import ts from 'typescript';

export interface SourceFile {
  /** Repository-relative path with forward slashes, e.g. `worker/stack.ts`. */
  path: string;
  source: string;
}

interface ImportRef {
  specifier: string;
  typeOnly: boolean;
  line: number;
}

const UI_PACKAGES = /^(preact|react|react-dom|zustand|@xyflow\/|@preact\/|workbox-window|virtual:pwa)/;
const DOM_GLOBALS = new Set(['document', 'window', 'localStorage', 'sessionStorage']);
const HEADLESS = ['protocol', 'storage', 'worker', 'vm', 'memory'];

export function topFolder(path: string): string {
  return path.split('/')[0] ?? '';
}

export function listImports(file: SourceFile): ImportRef[] {
  const sf = ts.createSourceFile(file.path, file.source, ts.ScriptTarget.Latest, true);
  const refs: ImportRef[] = [];
  const line = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes =
        !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly) && !clause?.name;
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly: !!clause?.isTypeOnly || allNamedTypes, line: line(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly, line: line(node) });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      refs.push({ specifier: node.arguments[0].text, typeOnly: false, line: line(node) });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      // `import('./x.ts').T` in a type: an import of types all the same.
      refs.push({ specifier: node.argument.literal.text, typeOnly: true, line: line(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** `document.x`, `window.x`...: property accesses on DOM-only globals (code only, not strings). */
export function listDomGlobalUses(file: SourceFile): { name: string; line: number }[] {
  const sf = ts.createSourceFile(file.path, file.source, ts.ScriptTarget.Latest, true);
  const uses: { name: string; line: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && DOM_GLOBALS.has(node.expression.text)) {
      uses.push({ name: node.expression.text, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return uses;
}

/** Resolves a relative specifier against the importing file; bare specifiers stay as they are. */
export function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  const parts = from.split('/').slice(0, -1);
  for (const part of specifier.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.') parts.push(part);
  }
  return parts.join('/');
}

/** Every broken rule, as "path:line message". Empty means the tree is clean. */
export function findViolations(files: SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const folder = topFolder(file.path);
    const headless = HEADLESS.includes(folder);
    if (headless && file.path.endsWith('.tsx')) problems.push(`${file.path}:1 JSX belongs in app/`);
    if (headless) {
      for (const use of listDomGlobalUses(file)) problems.push(`${file.path}:${use.line} uses the DOM-only global ${use.name}`);
    }
    for (const ref of listImports(file)) {
      const target = resolveSpecifier(file.path, ref.specifier);
      const targetFolder = ref.specifier.startsWith('.') ? topFolder(target) : '';
      const where = `${file.path}:${ref.line}`;
      if (headless && UI_PACKAGES.test(ref.specifier)) problems.push(`${where} ${folder}/ must not import ${ref.specifier}`);
      if (headless && targetFolder === 'app') problems.push(`${where} ${folder}/ must not import app/`);
      if ((folder === 'vm' || folder === 'memory') && ['worker', 'vm', 'memory'].includes(targetFolder) && targetFolder !== folder) {
        problems.push(`${where} ${folder}/ must not import ${targetFolder}/`);
      }
      if (folder === 'app' && targetFolder === 'worker' && !ref.typeOnly) {
        problems.push(`${where} app/ may import only types from worker/ (use \`import type\`): ${ref.specifier}`);
      }
      if (folder === 'protocol' && ref.specifier.startsWith('.') && targetFolder !== 'protocol') {
        problems.push(`${where} protocol/ imports nothing but itself: ${ref.specifier}`);
      }
      // (Its tests take their runner like any other.)
      if (folder === 'protocol' && !ref.specifier.startsWith('.') && !ref.typeOnly && !file.path.endsWith('.test.ts')) {
        problems.push(`${where} protocol/ may take only types from a package: ${ref.specifier}`);
      }
      if (folder === 'storage' && ['app', 'worker', 'vm', 'memory'].includes(targetFolder)) {
        problems.push(`${where} storage/ is the layer under worker/, vm/ and memory/ and must not import ${targetFolder}/`);
      }
      if (folder === 'storage' && targetFolder === 'protocol' && !ref.typeOnly) {
        problems.push(`${where} storage/ may take only types from protocol/: ${ref.specifier}`);
      }
      if (folder === 'app' && (targetFolder === 'vm' || targetFolder === 'memory' || targetFolder === 'storage')) {
        problems.push(`${where} app/ must not import ${targetFolder}/ (go through the stack worker)`);
      }
      if (folder === 'cloudflare-proxy' && ['app', 'protocol', 'storage', 'worker', 'vm', 'memory'].includes(targetFolder)) {
        problems.push(`${where} cloudflare-proxy/ is its own package and must not import ${targetFolder}/`);
      }
    }
  }
  return problems;
}

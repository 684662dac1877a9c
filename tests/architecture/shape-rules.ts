// The shape rules of the product code, checked on the real source by shape.test.ts: no import
// circle between files (type-only imports count: a circle of types is still a knot to untie), no
// file over 600 lines, no function over 150 (nested functions count inside the one around them,
// so a factory closure must itself stay small).
import ts from 'typescript';
import { listImports, resolveSpecifier, type SourceFile } from './import-rules.ts';

export const MAX_FILE_LINES = 600;
export const MAX_FUNCTION_LINES = 150;

/** Each import circle among `files`, as the paths in it (sorted); empty when there is none. */
export function findCircles(files: SourceFile[]): string[][] {
  const known = new Set(files.map((file) => file.path));
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = listImports(file)
      .map((ref) => (ref.specifier.startsWith('.') ? resolveSpecifier(file.path, ref.specifier.split('?')[0]!) : ''))
      .filter((target) => known.has(target));
    edges.set(file.path, targets);
  }
  // Tarjan's strongly connected components; one of more than one file is a circle.
  const circles: string[][] = [];
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (path: string) => {
    order.set(path, order.size);
    low.set(path, order.get(path)!);
    stack.push(path);
    onStack.add(path);
    for (const next of edges.get(path) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(path, Math.min(low.get(path)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(path, Math.min(low.get(path)!, order.get(next)!));
    }
    if (low.get(path) !== order.get(path)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === path) break;
    }
    if (component.length > 1 || edges.get(path)?.includes(path)) circles.push(component.sort());
  };
  for (const file of files) if (!order.has(file.path)) visit(file.path);
  return circles;
}

/** Files over MAX_FILE_LINES and functions over MAX_FUNCTION_LINES, as "path: n lines" / "path:line name: n lines". */
export function findOversized(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const lines = file.source.split('\n').length;
    if (lines > MAX_FILE_LINES) found.push(`${file.path}: ${lines} lines`);
    const sf = ts.createSourceFile(file.path, file.source, ts.ScriptTarget.Latest, true);
    const lineOf = (position: number) => sf.getLineAndCharacterOfPosition(position).line + 1;
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = lineOf(node.getStart());
        const length = lineOf(node.getEnd()) - first + 1;
        if (length > MAX_FUNCTION_LINES) found.push(`${file.path}:${first} ${functionName(node)}: ${length} lines`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

function functionName(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return '(anonymous)';
}

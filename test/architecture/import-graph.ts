// The import graph of a source tree, read with the TypeScript compiler's own parser (the
// `typescript` package the build already uses: it sees `import type`, `export … from`, `import()`
// and `import('…').T` exactly as tsc does, with no second parser to keep current), and the checks
// test/unit/architecture/import-graph.test.ts runs on it: every import allowed by the layer table
// (test/architecture/layers.ts), every folder in the table, no file-level cycle.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One row of a layer table: which rows this folder (or file) may import, and why. */
export interface LayerRow {
  /** rows whose files this row's files may import; `'*'`: every row but the ones in `except` */
  may: readonly string[] | '*';
  except?: readonly string[];
  why: string;
  /** the folder does not exist yet (its row is written ahead, so the first file needs no table edit) */
  planned?: true;
}

/**
 * Row name (a path from the root) → row. A file belongs to the longest row that is it or a folder
 * above it; a row ending in `/*` stands for each folder directly inside, each its own node with
 * that row's rule (`src/providers/*`: every provider folder without a row of its own).
 */
export type LayerTable = Readonly<Record<string, LayerRow>>;

export type ImportKind = 'import' | 'import type' | 'export from' | 'import()' | "import('…') type";

export interface ImportRef {
  specifier: string;
  line: number;
  kind: ImportKind;
}

/** Every module a file names: static and type imports, re-exports, dynamic imports, import types. */
export function parseImports(fileName: string, text: string): ImportRef[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: ImportRef[] = [];
  const add = (lit: ts.Node, kind: ImportKind) => {
    const specifier = ts.isStringLiteralLike(lit) ? lit.text : `<computed: ${lit.getText(sf)}>`;
    out.push({ specifier, line: sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1, kind });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) add(n.moduleSpecifier, n.importClause?.isTypeOnly ? 'import type' : 'import');
    else if (ts.isExportDeclaration(n) && n.moduleSpecifier) add(n.moduleSpecifier, 'export from');
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) add(n.moduleReference.expression, 'import');
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0]) add(n.arguments[0], 'import()');
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) add(n.argument.literal, "import('…') type");
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

export interface FileImport extends ImportRef {
  /** the imported file, relative to the root (`null`: a package or a built-in module) */
  target: string | null;
}

/** Files (relative to `root`, `/`-separated) → what each imports, for every .ts file under `dirs`. */
export function readGraph(root: string, dirs: readonly string[]): Map<string, FileImport[]> {
  const graph = new Map<string, FileImport[]>();
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (e.name.endsWith('.ts')) graph.set(child, importsOf(root, child));
    }
  };
  for (const d of dirs) walk(d);
  return graph;
}

function importsOf(root: string, file: string): FileImport[] {
  return fileImports(file, fs.readFileSync(path.join(root, file), 'utf8'));
}

/** What `file` (a path from the root) imports, given its text: each relative specifier resolved. */
export function fileImports(file: string, text: string): FileImport[] {
  return parseImports(file, text).map((ref) => {
    const relative = ref.specifier.startsWith('./') || ref.specifier.startsWith('../');
    const target = relative ? path.posix.normalize(path.posix.join(path.posix.dirname(file), ref.specifier)) : null;
    return { ...ref, target };
  });
}

interface NodeOf {
  /** the node: the row's name, or for a `/*` row the folder it stands for */
  node: string;
  row: string;
}

/** The node a file belongs to: the most specific row that is the file or a folder above it. */
export function nodeOf(table: LayerTable, file: string): NodeOf | null {
  let best: (NodeOf & { score: number }) | null = null;
  for (const row of Object.keys(table)) {
    let node: string | null = null;
    if (row.endsWith('/*')) {
      const prefix = row.slice(0, -1);
      const child = file.startsWith(prefix) ? file.slice(prefix.length).split('/') : [];
      if (child.length > 1) node = prefix + child[0]!;
    } else if (file === row || file.startsWith(`${row}/`)) node = row;
    // a row named for the folder itself beats a `/*` row standing for it
    const score = node === null ? -1 : node.length * 2 + (row.endsWith('/*') ? 0 : 1);
    if (node !== null && (!best || score > best.score)) best = { node, row, score };
  }
  return best && { node: best.node, row: best.row };
}

/** Whether a `may` entry names the node (a `/*` entry names every folder directly inside it). */
function names(entry: string, node: string): boolean {
  if (!entry.endsWith('/*')) return entry === node;
  const prefix = entry.slice(0, -1);
  return node.startsWith(prefix) && !node.slice(prefix.length).includes('/');
}

/** The rows a row may import, `'*'` spelled out (never itself, nor a row that names it). */
export function allowedRows(table: LayerTable, row: string): string[] {
  const r = table[row]!;
  if (r.may !== '*') return [...r.may];
  const except = new Set(r.except ?? []);
  return Object.keys(table).filter((k) => k !== row && !except.has(k) && !mayName(table[k]!, row));
}

function mayName(r: LayerRow, node: string): boolean {
  return r.may !== '*' && r.may.some((e) => names(e, node));
}

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}

/** Every import the table does not allow, each named with its file, line, specifier and the rule. */
export function layerViolations(table: LayerTable, graph: ReadonlyMap<string, readonly FileImport[]>): Violation[] {
  const out: Violation[] = [];
  for (const [file, imports] of graph) {
    const from = nodeOf(table, file);
    for (const imp of imports) {
      const at = { file, line: imp.line, specifier: imp.specifier };
      if (imp.specifier.startsWith('<computed')) {
        out.push({ ...at, message: `${imp.kind} of a computed specifier cannot be checked: name the module as a string` });
        continue;
      }
      if (imp.target === null) continue;
      if (!from) {
        out.push({ ...at, message: `${file} belongs to no row of the layer table: add a row for its folder` });
        continue;
      }
      const to = nodeOf(table, imp.target);
      if (to?.node === from.node) continue;
      const allowed = allowedRows(table, from.row);
      if (to && allowed.some((e) => names(e, to.node))) continue;
      const target = to ? `${to.node}` : `${imp.target} (in no row)`;
      out.push({
        ...at,
        message: `${from.node} may not import ${target} (${imp.kind} '${imp.specifier}'); row "${from.row}" may import: ${allowed.join(', ') || 'nothing of ours'} — ${table[from.row]!.why}`,
      });
    }
  }
  return out;
}

/**
 * Folders and files directly inside `dir` that have no row of their own (a `/*` row covers the
 * folders directly inside its folder). Files other than .ts are not code and need no row.
 */
export function missingRows(table: LayerTable, root: string, dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (!e.isDirectory() && !e.name.endsWith('.ts')) continue;
    // a folder is covered by its own row, by a `/*` row for its parent, or by a `/*` row inside it
    const covered = rel in table || (e.isDirectory() && (`${dir}/*` in table || `${rel}/*` in table));
    if (!covered) out.push(rel);
  }
  return out.sort();
}

/** Rows that name nothing on disk (a `planned` row may: its folder is written ahead). */
export function staleRows(table: LayerTable, root: string): string[] {
  return Object.entries(table)
    .filter(([row, r]) => !r.planned && !fs.existsSync(path.join(root, row.endsWith('/*') ? row.slice(0, -2) : row)))
    .map(([row]) => row);
}

export interface Cycle {
  /** a shortest way round, starting and ending at the same node (`a → b → c → a`) */
  cycle: string[];
  /** every node of the knot (strongly connected component) the cycle is in, sorted */
  knot: string[];
}

/** One cycle for each knot of the graph (`edges`: a node → the nodes it points at). */
export function findCycles(edges: ReadonlyMap<string, readonly string[]>): Cycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const next = (v: string) => (edges.get(v) ?? []).filter((w) => edges.has(w));
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || next(v).includes(v)) components.push(component);
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) connect(v);
  return components.map((c) => ({ cycle: shortestCycle(c.sort()[0]!, new Set(c), next), knot: c }));
}

/** The shortest way from `start` back to itself inside one component (breadth first). */
function shortestCycle(start: string, inside: ReadonlySet<string>, next: (v: string) => string[]): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of next(v).filter((x) => inside.has(x)).sort()) {
      if (w === start) {
        const way: string[] = [];
        for (let u = v; u !== start; u = from.get(u)!) way.unshift(u);
        return [start, ...way, start];
      }
      if (!from.has(w) && w !== start) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** The file graph's edges (imports between files of the graph only), for findCycles. */
export function fileEdges(graph: ReadonlyMap<string, readonly FileImport[]>): Map<string, string[]> {
  return new Map([...graph].map(([file, imports]) => [file, [...new Set(imports.flatMap((i) => (i.target && graph.has(i.target) ? [i.target] : [])))]]));
}

/** The table's own edges (row → rows it may import, `/*` rows as themselves), for findCycles. */
export function tableEdges(table: LayerTable): Map<string, string[]> {
  const rowFor = (entry: string) => (entry in table ? entry : nodeOf(table, `${entry}/file.ts`)?.row);
  return new Map(Object.keys(table).map((row) => [row, [...new Set(allowedRows(table, row).flatMap((e) => rowFor(e) ?? []))].filter((r) => r !== row)]));
}

// YAML with source positions → zod validation → diagnostics that name file:line:col, the key path
// and what was expected. All problems are collected and reported together (Terraform-style), never
// one exception at a time.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type Diagnostic } from '../errors.ts';

export type PathKey = string | number;

export interface SourceDoc {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
}

export function formatPath(path: readonly PathKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += out ? `.${k}` : k;
  }
  return out;
}

export function parseYaml(text: string, file: string): { source: SourceDoc; diagnostics: Diagnostic[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, strict: true });
  const diagnostics: Diagnostic[] = [...doc.errors, ...doc.warnings].map((e) => {
    // prettyErrors: false leaves linePos unset; the offset is always there.
    const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
    return { file, line: pos.line, column: pos.col, path: '', message: yamlMessage(e.message) };
  });
  return { source: { file, doc, lines }, diagnostics };
}

function yamlMessage(message: string): string {
  // The yaml library appends a code frame after the first line; keep the sentence only.
  return `invalid YAML: ${message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
}

/** The node at `path`, or the deepest existing ancestor (for a missing key: its parent map). */
function nodeAt(source: SourceDoc, path: readonly PathKey[]): { node: Node | null; exact: boolean } {
  let node: unknown = source.doc.contents;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key));
      if (!pair) return { node: node as Node, exact: false };
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      if (item === undefined) return { node: node as Node, exact: false };
      node = item;
    } else {
      return { node: (node as Node) ?? null, exact: false };
    }
  }
  return { node: (node as Node) ?? null, exact: true };
}

/** The key node of `key` in the map at `path` (for unknown-key errors, point at the key itself). */
function keyNodeAt(source: SourceDoc, path: readonly PathKey[], key: string): Node | null {
  const { node } = nodeAt(source, path);
  if (!isMap(node)) return null;
  const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
  return pair && isScalar(pair.key) ? (pair.key as Node) : null;
}

export function positionOf(source: SourceDoc, node: Node | null): { line: number; column: number } {
  const offset = node?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const p = source.lines.linePos(offset);
  return { line: p.line, column: p.col };
}

export function diagnosticAt(source: SourceDoc, path: readonly PathKey[], message: string, keyName?: string): Diagnostic {
  const node = keyName !== undefined ? keyNodeAt(source, path, keyName) : nodeAt(source, path).node;
  const { line, column } = positionOf(source, node);
  const fullPath = keyName !== undefined ? [...path, keyName] : path;
  return { file: source.file, line, column, path: formatPath(fullPath), message };
}

function valueAt(data: unknown, path: readonly PathKey[]): unknown {
  let v: unknown = data;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PathKey, unknown>)[k];
  }
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `"${v}"`;
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${String(v)}`;
}

/** zod's type names in the words of YAML. */
function expectedName(t: string): string {
  return t === 'object' || t === 'record' || t === 'map' ? 'a mapping' : t === 'array' || t === 'tuple' ? 'a list' : t;
}

export function levenshtein(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

export function didYouMean(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

// --- walking zod schemas to learn the keys an object accepts (for "did you mean") -------------

type AnyZod = z.ZodType;
interface ZodDef {
  type: string;
  shape?: Record<string, AnyZod>;
  innerType?: AnyZod;
  element?: AnyZod;
  valueType?: AnyZod;
  options?: AnyZod[];
  in?: AnyZod;
  out?: AnyZod;
  getter?: () => AnyZod;
}
const defOf = (s: AnyZod): ZodDef => (s as unknown as { _zod: { def: ZodDef } })._zod.def;

function unwrap(s: AnyZod): AnyZod[] {
  const d = defOf(s);
  switch (d.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return unwrap(d.innerType!);
    case 'pipe':
      return unwrap(d.in!);
    case 'lazy':
      return unwrap(d.getter!());
    case 'union':
      return (d.options ?? []).flatMap(unwrap);
    default:
      return [s];
  }
}

function schemasAt(schema: AnyZod, path: readonly PathKey[], data: unknown): AnyZod[] {
  let current = unwrap(schema);
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const next: AnyZod[] = [];
    for (const s of current) {
      const d = defOf(s);
      if (d.type === 'object' && typeof key === 'string' && d.shape?.[key]) next.push(...unwrap(d.shape[key]));
      else if (d.type === 'array' && typeof key === 'number' && d.element) next.push(...unwrap(d.element));
      else if (d.type === 'record' && d.valueType) next.push(...unwrap(d.valueType));
    }
    current = next;
    void data;
  }
  return current;
}

/** A union member whose literal key (e.g. `provider: ssh`) contradicts the data is not the one meant. */
function literalsFit(s: AnyZod, data: unknown): boolean {
  const shape = defOf(s).shape;
  if (!shape || data === null || typeof data !== 'object') return true;
  for (const [k, v] of Object.entries(shape)) {
    const d = defOf(v) as ZodDef & { values?: unknown[] };
    const given = (data as Record<string, unknown>)[k];
    if (d.type === 'literal' && given !== undefined && !(d.values ?? []).includes(given)) return false;
  }
  return true;
}

export function knownKeys(schema: AnyZod, path: readonly PathKey[], data?: unknown): string[] {
  const keys = new Set<string>();
  const objects = schemasAt(schema, path, data).filter((s) => defOf(s).type === 'object' && defOf(s).shape);
  const here = valueAt(data, path);
  const fitting = objects.filter((s) => literalsFit(s, here));
  for (const s of fitting.length ? fitting : objects) for (const k of Object.keys(defOf(s).shape!)) keys.add(k);
  return [...keys];
}

/** zod issues → diagnostics with positions and the house wording. */
export function issuesToDiagnostics(source: SourceDoc, schema: AnyZod, data: unknown, issues: readonly z.core.$ZodIssue[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((k): k is PathKey => typeof k === 'string' || typeof k === 'number');
    const got = valueAt(data, path);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = knownKeys(schema, path, data);
        for (const key of issue.keys) {
          const hint = didYouMean(key, known);
          out.push(diagnosticAt(source, path, `unknown key "${key}"${hint ? `; did you mean "${hint}"?` : ''} (expected one of ${known.join(', ')})`, key));
        }
        break;
      }
      case 'invalid_value':
        out.push(diagnosticAt(source, path, `expected one of ${issue.values.map(String).join(', ')}; got ${describe(got)}`));
        break;
      case 'invalid_type':
        out.push(
          diagnosticAt(
            source,
            path,
            got === undefined ? `required key is missing (expected ${expectedName(issue.expected)})` : `expected ${expectedName(issue.expected)}; got ${describe(got)}`,
          ),
        );
        break;
      case 'invalid_union': {
        const disc = (issue as { note?: string; discriminator?: string }).discriminator;
        const options = (issue as { options?: unknown[] }).options;
        if (got === undefined && !disc) {
          // A missing key whose value may take several forms (`target: name` or a list): name them.
          const branches = (issue as { errors?: Array<Array<{ code: string; expected?: string }>> }).errors ?? [];
          const expected = [...new Set(branches.map((b) => b[0]?.expected).filter((e): e is string => typeof e === 'string'))].map(expectedName);
          if (expected.length) {
            out.push(diagnosticAt(source, path, `required key is missing (expected ${expected.join(' or ')})`));
            break;
          }
        }
        out.push(
          diagnosticAt(
            source,
            path,
            disc && options ? `expected ${disc} to be one of ${options.map(String).join(', ')}; got ${describe(got)}` : disc ? `${issue.message} (key "${disc}")` : `${issue.message}; got ${describe(got)}`,
          ),
        );
        break;
      }
      case 'too_big':
      case 'too_small':
        out.push(diagnosticAt(source, path, typeof got === 'number' ? `${issue.message}; got ${got}` : issue.message));
        break;
      default:
        out.push(diagnosticAt(source, path, issue.message));
    }
  }
  return out;
}

/** Parse + validate a YAML document against a schema; ConfigError with every diagnostic on failure. */
export function validateYaml<S extends AnyZod>(text: string, file: string, schema: S): { value: z.output<S>; source: SourceDoc } {
  const { source, diagnostics } = parseYaml(text, file);
  if (diagnostics.length) throw new ConfigError(diagnostics);
  const data: unknown = source.doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) {
    throw new ConfigError([{ file, line: 1, column: 1, path: '', message: 'the document is empty (expected a mapping)' }]);
  }
  const result = schema.safeParse(data);
  if (!result.success) throw new ConfigError(sortDiagnostics(issuesToDiagnostics(source, schema, data, result.error.issues)));
  return { value: result.data as z.output<S>, source };
}

export function sortDiagnostics(d: Diagnostic[]): Diagnostic[] {
  return [...d].sort((a, b) => a.line - b.line || a.column - b.column);
}

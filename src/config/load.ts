// YAML with source positions → zod validation → diagnostics that name file:line:col, the key path
// and what was expected. All problems are collected and reported together (Terraform-style), never
// one exception at a time.
import { CST, isAlias, isCollection, isMap, isPair, isScalar, isSeq, Lexer, LineCounter, parseDocument, visit, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type Diagnostic } from '../errors.ts';
import { excerpt } from '../text/excerpt.ts';
import { describeValue } from '../input/fields.ts';

export type PathKey = string | number;

export interface SourceDoc {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
  /**
   * Values set on the command line over the file's (`--set key=value`, config/overrides.ts): a
   * problem at or under one of these paths is reported at its argument, not at a line.
   */
  overrides?: ReadonlyArray<{ path: readonly PathKey[]; argument: string }>;
}

export function formatPath(path: readonly PathKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += out ? `.${excerpt(k)}` : excerpt(k);
  }
  return out;
}

/** Deepest flow nesting (`[[[…`) and block indentation a configuration may use. The yaml parser
 * recurses once per level: a few thousand levels overflow the stack after seconds and hundreds of MB.
 * Real playbooks nest under ten levels. */
export const MAX_FLOW_DEPTH = 64;
export const MAX_INDENT = 256;
/** Block sequences written compactly (`- - - - x`) nest without indenting. */
const MAX_ITEMS_PER_LINE = 64;
/**
 * Most scalar values (keys included) a configuration may hold. yaml keeps ~1 KB per node and zod an
 * issue per bad one: 520,000 one-character list items (1 MiB) took 970 MB, 200,000 560 MB, 150,000
 * 340 MB (bench/RESULTS.md, "limits"). A real playbook or inventory holds a few hundred.
 */
export const MAX_VALUES = 120_000;
/**
 * Longest scalar (a key or value, quotes included) a configuration may hold. yaml folds a quoted
 * scalar one character at a time: a 4 MB double-quoted string took 1.7 s, a 50 MB one minutes and
 * 1.8 GB (issue 26). A path, a name or a description is far shorter.
 */
export const MAX_SCALAR_CHARS = 64 * 1024;
/** Diagnostics built from zod's issues; the rest are only counted ("… and N more"). */
export const MAX_DIAGNOSTICS_COLLECTED = 1000;

/** The first place the text nests deeper or holds more values than the limits, found by the yaml lexer (a flat state machine). */
function tooLarge(text: string): { offset: number; message: string } | null {
  let depth = 0;
  let offset = 0;
  let lineStart = true;
  let itemsOnLine = 0;
  let values = 0;
  let afterMarker = false;
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token);
    if (type === 'scalar' || type === 'single-quoted-scalar' || type === 'double-quoted-scalar' || type === 'block-scalar-header') {
      if (++values > MAX_VALUES) return { offset, message: `more than ${MAX_VALUES.toLocaleString('en-US')} values; a playbook or inventory needs a few thousand at most` };
    }
    // a quoted scalar is one token; a plain or block scalar's text is the token after its marker
    const scalarText = type === 'single-quoted-scalar' || type === 'double-quoted-scalar' || (afterMarker && type !== 'scalar');
    afterMarker = type === 'scalar';
    if (scalarText && token.length > MAX_SCALAR_CHARS) {
      return { offset, message: `a value of ${token.length.toLocaleString('en-US')} characters; at most ${MAX_SCALAR_CHARS.toLocaleString('en-US')} (64 KiB) are read` };
    }
    if (type === 'flow-seq-start' || type === 'flow-map-start') {
      if (++depth > MAX_FLOW_DEPTH) return { offset, message: `nested more than ${MAX_FLOW_DEPTH} levels deep in [ ] / { }; a playbook or inventory needs a handful` };
    } else if (type === 'flow-seq-end' || type === 'flow-map-end') depth = Math.max(0, depth - 1);
    else if (type === 'flow-error-end') depth = 0;
    else if (type === 'newline') {
      lineStart = true;
      itemsOnLine = 0;
    } else if (type === 'space' && lineStart && token.length > MAX_INDENT) {
      return { offset, message: `indented ${token.length} columns; more than ${MAX_INDENT} is not a configuration file` };
    } else if (type === 'seq-item-ind' || type === 'explicit-key-ind') {
      if (++itemsOnLine > MAX_ITEMS_PER_LINE) return { offset, message: `more than ${MAX_ITEMS_PER_LINE} nested items on one line` };
    }
    if (type !== 'space' && type !== 'newline') lineStart = false;
    // control tokens (document/scalar markers) are not source text
    if (type !== 'doc-mode' && type !== 'flow-error-end' && type !== 'scalar') offset += token.length;
  }
  return null;
}

export function parseYaml(text: string, file: string): { source: SourceDoc; diagnostics: Diagnostic[] } {
  const lines = new LineCounter();
  const deep = tooLarge(text);
  if (deep) {
    lines.addNewLine(0);
    for (let i = text.indexOf('\n'); i >= 0 && i < deep.offset; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
    const pos = lines.linePos(deep.offset);
    return { source: { file, doc: parseDocument(''), lines }, diagnostics: [{ file, line: pos.line, column: pos.col, path: '', message: `invalid YAML: ${deep.message}` }] };
  }
  // uniqueKeys: false — yaml's own check compares each new key with every earlier one (quadratic:
  // minutes for 100,000 keys); duplicateKeys does the same check with a set per map.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false, strict: true });
  const diagnostics: Diagnostic[] = [...doc.errors, ...doc.warnings].map((e) => {
    // prettyErrors: false leaves linePos unset; the offset is always there.
    const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
    return { file, line: pos.line, column: pos.col, path: '', message: yamlMessage(e.message) };
  });
  const source = { file, doc, lines };
  diagnostics.push(...duplicateKeys(source));
  return { source, diagnostics: sortDiagnostics(diagnostics) };
}

/** A key given twice in one mapping, at the second one (yaml's "Map keys must be unique", in linear time). */
function duplicateKeys(source: SourceDoc): Diagnostic[] {
  const out: Diagnostic[] = [];
  visit(source.doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const k = `${typeof pair.key.value}:${String(pair.key.value)}`;
        if (!seen.has(k)) {
          seen.add(k);
          continue;
        }
        const { line, column } = positionOf(source, pair.key);
        out.push({ file: source.file, line, column, path: '', message: 'invalid YAML: Map keys must be unique' });
      }
    },
  });
  return out;
}

function yamlMessage(message: string): string {
  // The yaml library appends a code frame after the first line; keep the sentence only.
  return `invalid YAML: ${message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
}

// Each map's pairs by key text, built once per map: a diagnostic per key of a 100,000-key map
// would otherwise search the map once per diagnostic (quadratic: minutes).
const pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  let index = pairIndex.get(map);
  if (!index) {
    index = new Map();
    for (const p of map.items) {
      if (isPair(p) && isScalar(p.key)) {
        const k = String(p.key.value);
        if (!index.has(k)) index.set(k, p);
      }
    }
    pairIndex.set(map, index);
  }
  return index.get(key);
}

/**
 * The node at `path`, or the deepest existing ancestor (for a missing key: its parent map). An
 * alias on the way is followed to its anchored node; `alias` is the first one followed: a problem
 * under it is the value used there (the anchored node may be valid where else it is used).
 */
function nodeAt(source: SourceDoc, path: readonly PathKey[]): { node: Node | null; exact: boolean; alias: Node | null } {
  let alias: Node | null = null;
  const follow = (n: unknown): unknown => {
    if (!isAlias(n)) return n;
    alias ??= n;
    return n.resolve(source.doc) ?? n;
  };
  let node: unknown = follow(source.doc.contents);
  for (const key of path) {
    if (isMap(node)) {
      const pair = pairOf(node, String(key));
      if (!pair) return { node, exact: false, alias };
      node = follow(pair.value ?? pair.key);
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      if (item === undefined) return { node, exact: false, alias };
      node = follow(item);
    } else {
      return { node: (node as Node) ?? null, exact: false, alias };
    }
  }
  return { node: (node as Node) ?? null, exact: true, alias };
}

/** The key node of `key` in the map at `path` (for unknown-key errors, point at the key itself), or the alias the map was reached through. */
function keyNodeAt(source: SourceDoc, path: readonly PathKey[], key: string): Node | null {
  const { node, alias } = nodeAt(source, path);
  if (alias) return alias;
  if (!isMap(node)) return null;
  const pair = pairOf(node, key);
  return pair && isScalar(pair.key) ? pair.key : null;
}

export function positionOf(source: SourceDoc, node: Node | null): { line: number; column: number } {
  const offset = node?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const p = source.lines.linePos(offset);
  return { line: p.line, column: p.col };
}

export function diagnosticAt(source: SourceDoc, path: readonly PathKey[], message: string, keyName?: string): Diagnostic {
  const fullPath = keyName !== undefined ? [...path, keyName] : path;
  const set = source.overrides?.find((o) => o.path.length <= fullPath.length && o.path.every((k, i) => String(k) === String(fullPath[i])));
  if (set) return { file: set.argument, line: 0, column: 0, path: formatPath(fullPath), message, argument: set.argument };
  let node: Node | null;
  if (keyName !== undefined) node = keyNodeAt(source, path, keyName);
  else {
    const found = nodeAt(source, path);
    node = found.alias ?? found.node;
  }
  const { line, column } = positionOf(source, node);
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

/** zod's "expected number" for ±.inf / .nan: the number type is right, its value is not. */
function expectedFor(expected: string, got: unknown): string {
  if (expected === 'number' && typeof got === 'number' && !Number.isFinite(got)) return 'a finite number';
  return expectedName(expected);
}

/** zod's type names in the words of YAML. */
function expectedName(t: string): string {
  return t === 'object' || t === 'record' || t === 'map' ? 'a mapping' : t === 'array' || t === 'tuple' ? 'a list' : t;
}

let row = new Int32Array(64);

/** Edit distance, case-insensitive. One reused row: a diagnostic per key of a big map calls this a lot. */
export function levenshtein(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  if (row.length < b.length + 1) row = new Int32Array(b.length + 1);
  const dp = row;
  for (let j = 0; j <= b.length; j++) dp[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(tmp + 1, dp[j - 1]! + 1, prev + (ca === b.charCodeAt(j - 1) ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

export function didYouMean(word: string, candidates: readonly string[]): string | null {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    if (Math.abs(c.length - word.length) > limit) continue; // the distance is at least the length difference
    const d = levenshtein(word, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== null && bestD <= limit ? best : null;
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
  return collectDiagnostics(source, schema, data, issues, Infinity).diagnostics;
}

/** Like issuesToDiagnostics, building at most `limit` diagnostics and counting the rest. */
export function collectDiagnostics(source: SourceDoc, schema: AnyZod, data: unknown, issues: readonly z.core.$ZodIssue[], limit: number): { diagnostics: Diagnostic[]; more: number } {
  const out: Diagnostic[] = [];
  let more = 0;
  for (const issue of issues) {
    if (out.length >= limit) {
      more += issue.code === 'unrecognized_keys' ? issue.keys.length : 1;
      continue;
    }
    const path = issue.path.filter((k): k is PathKey => typeof k === 'string' || typeof k === 'number');
    const got = valueAt(data, path);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = knownKeys(schema, path, data);
        for (const key of issue.keys) {
          if (out.length >= limit) {
            more++;
            continue;
          }
          // a key far longer than any known one is no typo of it (and Levenshtein is quadratic)
          const hint = key.length <= 64 ? didYouMean(key, known) : null;
          out.push(diagnosticAt(source, path, `unknown key "${excerpt(key)}"${hint ? `; did you mean "${hint}"?` : ''} (expected one of ${known.join(', ')})`, key));
        }
        break;
      }
      case 'invalid_value':
        out.push(diagnosticAt(source, path, `expected one of ${issue.values.map(String).join(', ')}; got ${describeValue(got)}`));
        break;
      case 'invalid_type':
        out.push(
          diagnosticAt(
            source,
            path,
            got === undefined ? `required key is missing (expected ${expectedName(issue.expected)})` : `expected ${expectedFor(issue.expected, got)}; got ${describeValue(got)}`,
          ),
        );
        break;
      case 'invalid_union': {
        // The value has the type of one form only (a mapping where a number or a mapping is
        // allowed): that form's own issues, each at its key, say more than "invalid input".
        const fitting = fittingBranch(issue);
        if (fitting) {
          const inner = collectDiagnostics(source, schema, data, fitting.map((i) => ({ ...i, path: [...issue.path, ...i.path] })), limit - out.length);
          out.push(...inner.diagnostics);
          more += inner.more;
          break;
        }
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
            disc && options ? `expected ${disc} to be one of ${options.map(String).join(', ')}; got ${describeValue(got)}` : disc ? `${issue.message} (key "${disc}")` : `${issue.message}; got ${describeValue(got)}`,
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
  return { diagnostics: out, more };
}

/**
 * The one branch of a failed union whose issues are not "wrong type here" (invalid_type at the
 * union's own position), or null when none or several are.
 */
function fittingBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] | null {
  const branches = (issue as { errors?: z.core.$ZodIssue[][] }).errors ?? [];
  const fits = branches.filter((b) => b.length > 0 && !b.every((i) => i.code === 'invalid_type' && i.path.length === 0));
  return fits.length === 1 ? fits[0]! : null;
}

/** Parse + validate a YAML document against a schema; ConfigError with every diagnostic on failure. */
export function validateYaml<S extends AnyZod>(text: string, file: string, schema: S, edit?: (source: SourceDoc) => void): { value: z.output<S>; source: SourceDoc } {
  const { source, diagnostics } = parseYaml(text, file);
  if (diagnostics.length) throw new ConfigError(diagnostics);
  const structural = tagsAndAliases(source);
  if (structural.length) throw new ConfigError(structural);
  // values from the command line replace the file's before anything is checked (config/overrides.ts)
  edit?.(source);
  let data: unknown;
  try {
    data = source.doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml throws a bare ReferenceError for an alias bomb ("billion laughs"): say where.
    if (!(err instanceof ReferenceError)) throw err;
    throw new ConfigError([aliasBomb(source)], { cause: err });
  }
  if (data === null || data === undefined) {
    throw new ConfigError([{ file, line: 1, column: 1, path: '', message: 'the document is empty (expected a mapping)' }]);
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const { diagnostics: found, more } = collectDiagnostics(source, schema, data, result.error.issues, MAX_DIAGNOSTICS_COLLECTED);
    throw new ConfigError(sortDiagnostics(found), { more });
  }
  return { value: result.data, source };
}

/** yaml's limit on the nodes aliases may expand to (its protection against "billion laughs"). */
const MAX_ALIAS_COUNT = 100;
const CORE = 'tag:yaml.org,2002:';
/** Tags whose value is a plain string, number, boolean, null, mapping or list: the rest (!!omap,
 * !!set, !!pairs, !!binary, !!timestamp) load as Map, Set, Buffer or Date, which no key accepts. */
const PLAIN_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => CORE + t));

/**
 * Unsupported YAML 1.1 tags and aliases without an anchor, each at its position. Also run on each
 * `--set` value (config/overrides.ts), so the command line accepts no value a file would refuse.
 */
export function tagsAndAliases(source: SourceDoc): Diagnostic[] {
  const out: Diagnostic[] = [];
  const at = (node: Node, message: string) => {
    const { line, column } = positionOf(source, node);
    out.push({ file: source.file, line, column, path: '', message });
  };
  visit(source.doc, (_key, node) => {
    if (isAlias(node)) {
      if (!node.resolve(source.doc)) at(node, `alias *${excerpt(node.source)} has no anchor &${excerpt(node.source)} before it`);
      return;
    }
    if ((isScalar(node) || isCollection(node)) && node.tag?.startsWith(CORE) && !PLAIN_TAGS.has(node.tag)) {
      const tag = node.tag.slice(CORE.length);
      const plain = tag === 'set' ? 'list' : isCollection(node) ? 'mapping' : 'string';
      at(node, `the tag !!${excerpt(tag)} is not supported; write a plain ${plain} without the tag`);
    }
  });
  return out;
}

/** Where an alias bomb starts: the first alias of a collection that itself holds aliases. */
function aliasBomb(source: SourceDoc): Diagnostic {
  let first: Node | null = null;
  let nested: Node | null = null;
  visit(source.doc, {
    Alias(_key, node) {
      first ??= node;
      const target = node.resolve(source.doc);
      let hasAlias = false;
      if (target && isCollection(target)) visit(target, { Alias: () => ((hasAlias = true), visit.BREAK) });
      if (hasAlias) {
        nested = node;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  const { line, column } = positionOf(source, nested ?? first);
  return { file: source.file, line, column, path: '', message: `aliases expand to more than yaml's limit of ${MAX_ALIAS_COUNT} nodes (an alias bomb?); write the values out instead of nesting aliases` };
}

export function sortDiagnostics(d: Diagnostic[]): Diagnostic[] {
  return [...d].sort((a, b) => a.line - b.line || a.column - b.column);
}

// `--set key=value` (validate, plan, run): a playbook value given on the command line, so that one
// playbook serves the lab and the real run (`--set settings.fileSize=16m --set target=lab-vcenter`).
// The value is read as a YAML scalar or flow list and put into the playbook's document before it is
// validated: the same zod schema and allowed values as in the file; a problem is reported at the
// `--set` argument (config/load.ts diagnosticAt), not at a line of the file. A run records its
// overrides in its plan (RunPlan.overrides); `run --resume` uses them and refuses other ones.
import { isAlias, isCollection, isMap, isScalar, visit, type YAMLMap } from 'yaml';
import { ConfigError, UsageError, type Diagnostic } from '../errors.ts';
import { excerpt } from '../text/excerpt.ts';
import { parseYaml, tagsAndAliases, type SourceDoc } from './load.ts';

/** What `--set` may override: the target(s), the repetitions, a timing setting, a timeout, a matrix axis's values. */
const SETTABLE = /^(target|repeat|settings\.[A-Za-z][A-Za-z0-9]*|timeouts\.[A-Za-z][A-Za-z0-9]*|matrix\.[A-Za-z][A-Za-z0-9]*\.[A-Za-z][A-Za-z0-9]*)$/;
const SETTABLE_WORDS =
  'target, repeat, settings.<name> (fileSize, runtimeSec, rampSec, passes, warmupPass, prefill, writeData, intervalSec, direct, aggregate), timeouts.<name> (stepSec, workloadSlackSec) or matrix.<section>.<axis> (e.g. matrix.disk.sizeGb=[16])';
/** A value is a few characters (a size, a number, a target name or a short list of them). */
const MAX_VALUE_CHARS = 1024;

export interface PlaybookOverride {
  /** the key path, e.g. ['settings', 'fileSize'] */
  path: string[];
  value: unknown;
  /** `key=value` as given */
  text: string;
  /** `--set key=value`, where a problem with it is reported */
  argument: string;
}

/** `key=value` arguments → overrides; a malformed one, an unknown key or a key given twice is refused naming the argument. */
export function parseSetArguments(args: readonly string[] | undefined): PlaybookOverride[] {
  const out: PlaybookOverride[] = [];
  for (const text of args ?? []) {
    const argument = `--set ${excerpt(text)}`;
    const eq = text.indexOf('=');
    if (eq <= 0) throw new UsageError(`${argument}: expected key=value, e.g. --set settings.fileSize=16m or --set target=lab-vcenter`);
    const key = text.slice(0, eq).trim();
    const raw = text.slice(eq + 1);
    if (!SETTABLE.test(key)) throw new UsageError(`${argument}: "${excerpt(key)}" cannot be set from the command line; expected ${SETTABLE_WORDS}`);
    if (raw.length > MAX_VALUE_CHARS) throw new UsageError(`${argument}: the value is ${raw.length} characters long; at most ${MAX_VALUE_CHARS}`);
    const before = out.find((o) => o.path.join('.') === key);
    if (before) throw new UsageError(`${argument}: ${key} is already set by --set ${excerpt(before.text)}; give each key once`);
    // a YAML scalar or flow list, as the file would hold it: 16m is text, 3 a number, [a, b] a list;
    // parsed and checked as a file is (config/load.ts): an unknown tag (!custom), a YAML 1.1 tag
    // (!!binary) or an alias a file would refuse is refused here too, naming the argument
    const { source, diagnostics } = parseYaml(raw, argument);
    const problem = diagnostics[0] ?? tagsAndAliases(source)[0];
    if (problem) throw new UsageError(`${argument}: the value is not a plain YAML value: ${excerpt(problem.message.replace(/^invalid YAML: /, ''))}`);
    const doc = source.doc;
    // one value refers to nothing: an anchor or alias in it is a mistake (or an attempt), not a shorthand
    let anchored: string | null = null;
    visit(doc, (_key, node) => {
      if (isAlias(node) || ((isScalar(node) || isCollection(node)) && node.anchor)) {
        anchored = isAlias(node) ? `*${node.source}` : `&${String((node as { anchor: string }).anchor)}`;
        return visit.BREAK;
      }
      return undefined;
    });
    if (anchored) throw new UsageError(`${argument}: the value is not a plain YAML value: anchors and aliases (${excerpt(anchored)}) are not supported in --set; write the value out`);
    if (isMap(doc.contents)) throw new UsageError(`${argument}: expected a value or a [list], not a mapping`);
    const path = key.split('.');
    let value = doc.toJS() as unknown;
    // an axis's values are a list: one value (`matrix.disk.sizeGb=16`) is a list of one
    if (path[0] === 'matrix' && value !== null && !Array.isArray(value)) value = [value];
    out.push({ path, value, text, argument });
  }
  return out;
}

/** Puts the overrides into the parsed document (before validation) and marks where they are. */
export function applyOverrides(source: SourceDoc, overrides: readonly PlaybookOverride[]): void {
  if (!overrides.length) return;
  // a document that is not a mapping is refused by the schema at its line, as without --set
  if (!isMap(source.doc.contents)) return;
  const refused: Diagnostic[] = [];
  for (const o of overrides) {
    // a matrix value replaces an axis's values; a section the file's matrix does not have is no
    // axis of it (its other keys, e.g. disk.format, would be missing): refused at the argument
    if (o.path[0] === 'matrix' && !isMap(source.doc.getIn(o.path.slice(0, 2), true))) {
      const sections = isMap(source.doc.get('matrix', true)) ? (source.doc.get('matrix', true) as YAMLMap).items.map((p) => String(isScalar(p.key) ? p.key.value : p.key)) : [];
      refused.push({ file: o.argument, line: 0, column: 0, path: o.path.join('.'), argument: o.argument, message: `the playbook's matrix has no ${o.path[1]} section (sections: ${sections.join(', ') || 'none'}); --set changes the values of an axis the matrix has` });
      continue;
    }
    const current = source.doc.get(o.path[0]!, true);
    if (o.path.length === 1 && o.path[0] === 'repeat' && typeof o.value === 'number' && isMap(current)) {
      // `--set repeat=N` over `repeat: {count: 3, reprovision: true}` changes the number, not
      // what a repetition is: the unit, order and seed stay (a repeat-until-stable becomes N fixed)
      for (const k of ['min', 'max', 'until']) current.delete(k);
      current.set('count', source.doc.createNode(o.value));
    } else source.doc.setIn(o.path, source.doc.createNode(o.value));
  }
  source.overrides = overrides.map((o) => ({ path: o.path, argument: o.argument }));
  if (refused.length) throw new ConfigError(refused);
}

/** The overrides as recorded in a plan (`key=value`, in the order given). */
export function overrideTexts(overrides: readonly PlaybookOverride[]): string[] {
  return overrides.map((o) => o.text);
}

/** Two sets of overrides that set the same keys to the same values, whatever the order or spelling (`16m` vs `"16m"`). */
export function sameOverrides(a: readonly PlaybookOverride[], b: readonly PlaybookOverride[]): boolean {
  const canon = (list: readonly PlaybookOverride[]) =>
    list
      .map((o) => `${o.path.join('.')}=${JSON.stringify(o.value)}`)
      .sort()
      .join('\n');
  return canon(a) === canon(b);
}

// Loading playbooks and inventories: read, validate, resolve secrets, cross-check. Every problem of
// a file is reported at once as a ConfigError whose diagnostics carry file:line:col and key path.
import { resolveStore, type ResolvedStore } from './store.ts';
import path from 'node:path';
import { ConfigError, InputTooLarge, InvalidArgument, NotARegularFile, UsageError, type Diagnostic } from '../errors.ts';
import { detectEncoding } from '../input/encoding.ts';
import { fsReason } from '../input/fs-reason.ts';
import { readInputFile } from '../input/read-input.ts';
import { axisAccepts, axisExpected, CORE_AXES } from '../contract/axis.ts';
import { endpointSections, moduleOf, providerModule, providerModules, type Target } from '../providers/index.ts';
import { resolveWorkload } from '../workloads/custom.ts';
import { diagnosticAt, parseYaml, sortDiagnostics, validateYaml, type PathKey, type SourceDoc } from './load.ts';
import { endpointEntries, inventorySchema, type Inventory } from './inventory.ts';
import type { Env } from '../contract/provider.ts';
import { absoluteSecretRef, inventoryLayerSchema, mergeLayers, type InventoryLayer } from './inventory-layers.ts';
import { matrixAxes, playbookSchema, targetNames, type Playbook } from './playbook.ts';
import { secretLeakDiagnostics, type SecretSource } from './secret-checks.ts';
import { applyOverrides, type PlaybookOverride } from './overrides.ts';
import { resolveSecret, Secret, shortSecretMessage } from '../input/secrets.ts';
import { countPermutations, MAX_PERMUTATIONS } from './matrix-size.ts';

export interface LoadedPlaybook {
  file: string;
  playbook: Playbook;
  source: SourceDoc;
  /** sha256 of the file bytes, recorded in the run for reproducibility */
  text: string;
  /** values given with `--set` over the file's (already in `playbook`) */
  overrides: PlaybookOverride[];
}

export interface LoadedInventory {
  file: string;
  inventory: Inventory;
  source: SourceDoc;
  /** resolved secrets by reference string */
  secrets: Map<string, Secret>;
  /** every secret this inventory uses, with where it is configured (incl. a GOVC_* fallback) */
  secretSources: SecretSource[];
  /** the inventory's `store:` (a PostgreSQL URL), its password reference resolved */
  store?: ResolvedStore;
  /**
   * the environment the inventory was loaded with (the CLI's, read once there): `${env:…}` secrets
   * and an endpoint's defaults (govc's GOVC_URL)
   */
  env: Env;
  /** every file given (`-i a.yaml -i b.yaml`), in order; `file` is the first */
  files?: string[];
  /** the file that defines an entry (`['targets', name]`); `source` for one file */
  sourceOf?: (at: readonly PathKey[]) => SourceDoc;
}

function readConfigFile(file: string): string {
  const refuse = (message: string): never => {
    throw new ConfigError([{ file, line: 1, column: 1, path: '', message }]);
  };
  let bytes: Buffer;
  try {
    bytes = readInputFile(file, 'config');
  } catch (err) {
    if (err instanceof InputTooLarge || err instanceof NotARegularFile) return refuse(err.details.reason);
    const code = (err as NodeJS.ErrnoException).code;
    return refuse(code === 'ENOENT' ? 'file not found' : `cannot read file: ${fsReason(err)}`);
  }
  const { encoding, bom } = detectEncoding(bytes);
  if (encoding !== 'utf-8') return refuse(`the file is ${encoding.slice(0, 6).toUpperCase()} (${encoding.endsWith('le') ? 'little' : 'big'}-endian); save it as UTF-8`);
  const nul = bytes.indexOf(0);
  if (nul >= 0) return refuse(`the file holds a NUL byte at offset ${nul}: it is binary, not YAML text`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(bom));
  } catch {
    return refuse('the file is not valid UTF-8; save it as UTF-8');
  }
}

/** `overrides`: values given with `--set` (config/overrides.ts), validated like the file's own. */
export function loadPlaybook(file: string, overrides: readonly PlaybookOverride[] = []): LoadedPlaybook {
  const text = readConfigFile(file);
  const { value, source } = validateYaml(text, file, playbookSchema, (s) => applyOverrides(s, overrides));
  const diags: Diagnostic[] = [];
  const axes = matrixAxes(value.matrix);
  const axisNames = new Set(axes.map((a) => a.name));
  // A list of targets is the first axis: include/exclude/baseline may name it.
  if (typeof value.target !== 'string') axisNames.add('target');
  const checkAxisMap = (key: 'include' | 'exclude' | 'baseline', map: Record<string, unknown>, at: PathKey[]) => {
    for (const k of Object.keys(map)) {
      if (!axisNames.has(k)) diags.push(diagnosticAt(source, at, `"${k}" is not an axis of the matrix (axes: ${[...axisNames].join(', ')})`, k));
    }
    void key;
  };
  value.include?.forEach((m, i) => checkAxisMap('include', m, ['include', i]));
  value.exclude?.forEach((m, i) => checkAxisMap('exclude', m, ['exclude', i]));
  if (value.baseline) {
    checkAxisMap('baseline', value.baseline, ['baseline']);
    // A baseline value no permutation has would leave that axis compared with nothing: the report
    // would fall back to another value. Refused here, where the value is written.
    const valuesOf = new Map<string, ReadonlyArray<string | number | boolean>>(axes.map((a) => [a.name, a.values]));
    if (typeof value.target !== 'string') valuesOf.set('target', value.target);
    for (const [k, v] of Object.entries(value.baseline)) {
      const values = valuesOf.get(k);
      if (values && !values.some((x) => String(x) === String(v))) {
        diags.push(diagnosticAt(source, ['baseline', k], `${JSON.stringify(v)} is not a value of the axis ${k} (values: ${values.map((x) => String(x)).join(', ')})`));
      }
    }
  }
  // environmentOf: `axis=value` keys naming an axis of the matrix and one of its values
  const listedTargets = typeof value.target === 'string' ? [value.target] : value.target;
  for (const key of Object.keys(value.environmentOf ?? {})) {
    const eq = key.indexOf('=');
    const axis = eq > 0 ? key.slice(0, eq) : '';
    const values = axis === 'target' ? listedTargets : axes.find((a) => a.name === axis)?.values;
    if (!values) diags.push(diagnosticAt(source, ['environmentOf'], `"${key}": expected axis=value with an axis of the matrix (axes: ${['target', ...axes.map((a) => a.name)].join(', ')})`, key));
    else if (!values.some((v) => String(v) === key.slice(eq + 1))) diags.push(diagnosticAt(source, ['environmentOf'], `"${key}": ${JSON.stringify(key.slice(eq + 1))} is not a value of ${axis} (values: ${values.map(String).join(', ')})`, key));
  }
  // Workloads: each matrix value must resolve to a profile now, not at 3 a.m.
  value.matrix.workload.profile.forEach((p, i) => {
    const inline = value.workloads?.[p];
    try {
      resolveWorkload(inline ?? p);
    } catch (err) {
      if (!(err instanceof InvalidArgument)) throw err;
      diags.push(inline ? diagnosticAt(source, inlineOptionPath(p, inline, err.details.name), err.message) : diagnosticAt(source, ['matrix', 'workload', 'profile', i], err.message));
    }
  });
  const countAxes = typeof value.target === 'string' ? axes : [{ name: 'target', values: value.target }, ...axes];
  const count = countPermutations(countAxes, { include: value.include, exclude: value.exclude });
  if (count > BigInt(MAX_PERMUTATIONS)) {
    const sizes = countAxes.map((a) => `${a.name} ${a.values.length}`).join(' × ');
    const rules = [value.exclude?.length ? 'less exclude' : '', value.include?.length ? 'plus include' : ''].filter(Boolean).join(', ');
    diags.push(
      diagnosticAt(source, [], `the matrix expands to ${count.toLocaleString('en-US')} permutations (${sizes}${rules ? `, ${rules}` : ''}); at most ${MAX_PERMUTATIONS.toLocaleString('en-US')} are allowed: drop axis values or split the playbook`, 'matrix'),
    );
  }
  const ds = value.matrix.datastore;
  if (ds?.blockSizeMb && ds.blockSizeKb) diags.push(diagnosticAt(source, ['matrix', 'datastore', 'blockSizeKb'], 'give either blockSizeMb or blockSizeKb, not both'));
  if (diags.length) throw new ConfigError(sortDiagnostics(diags));
  return { file, playbook: value, source, text, overrides: [...overrides] };
}

/** Where a refused custom fio option is written (`workloads.<name>.fio[.<i>].<key>`), else the workload itself. */
function inlineOptionPath(name: string, inline: unknown, option: string): PathKey[] {
  const fio = inline && typeof inline === 'object' ? (inline as { fio?: unknown }).fio : undefined;
  const jobs: unknown[] = Array.isArray(fio) ? fio : fio && typeof fio === 'object' ? [fio] : [];
  for (const [i, job] of jobs.entries()) {
    const key = job && typeof job === 'object' ? Object.keys(job).find((k) => k.replace(/^--/, '') === option) : undefined;
    if (key !== undefined) return Array.isArray(fio) ? ['workloads', name, 'fio', i, key] : ['workloads', name, 'fio', key];
  }
  return ['workloads', name];
}

/** A secret field: in every entry of an endpoint section, or in the targets of one provider. */
type SecretField = { section: string; path: string[] } | { section: 'targets'; provider: string; path: string[] };

// The endpoints' secret fields (sshHosts', each provider's endpoint section's) and each provider's
// own in its targets (ProviderModule.secretFields).
const SECRET_FIELDS: SecretField[] = [
  ...endpointSections().flatMap((e) => (e.secretFields ?? []).map((p) => ({ section: e.key, path: [...p] }))),
  { section: 'sshHosts', path: ['password'] },
  { section: 'sshHosts', path: ['passphrase'] },
  ...providerModules().flatMap((m) => m.secretFields.map((p) => ({ section: 'targets' as const, provider: m.name, path: [...p] }))),
];

/** The entries of a section a secret field applies to (a target's field: targets of its provider only). */
function secretFieldEntries(f: SecretField, section: unknown): Array<[string, unknown]> {
  const entries = section && typeof section === 'object' ? Object.entries(section) : [];
  if (!('provider' in f)) return entries;
  return entries.filter(([, e]) => e && typeof e === 'object' && (e as { provider?: unknown }).provider === f.provider);
}

/**
 * One inventory, or several given with `-i` more than once (config/inventory-layers.ts): later
 * files add or replace endpoints (SSH hosts, a provider's: vCenters) and targets by name and may
 * use the earlier ones'. `env`: the environment, as the CLI read it.
 */
export function loadInventory(files: string | readonly string[], env: Env): LoadedInventory {
  const list = typeof files === 'string' ? [files] : [...files];
  if (!list.length) throw new UsageError('no inventory file given (-i FILE)');
  const layers = list.map((file, i) => loadLayer(file, i === 0, env));
  const diags: Diagnostic[] = [];
  const secrets = new Map<string, Secret>();
  const secretSources: SecretSource[] = [];
  const secretPaths = new Map<InventoryLayer, Set<string>>();
  for (const layer of layers) {
    const paths = new Set<string>();
    secretPaths.set(layer, paths);
    for (const f of SECRET_FIELDS) {
      const { section, path: p } = f;
      for (const [entryName, entry] of secretFieldEntries(f, (layer.value as Record<string, unknown>)[section])) {
        let v: unknown = entry;
        for (const k of p) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
        if (typeof v !== 'string') continue;
        const at = [section, entryName, ...p];
        paths.add(JSON.stringify(at));
        const r = resolveSecret(v, layer.baseDir, env);
        if (!r.ok) {
          diags.push(diagnosticAt(layer.source, at, r.message));
          continue;
        }
        // several files: a relative ${file:…} is the file's own; the merged entry names it absolutely
        const ref = layers.length > 1 ? absoluteSecretRef(v, layer.baseDir) : v;
        const secret = ref === v ? r.secret : new Secret(ref, r.secret.reveal());
        if (ref !== v) setAt(entry, p, ref);
        secrets.set(ref, secret);
        secretSources.push({ where: at.join('.'), secret });
      }
    }
  }
  const merged = mergeLayers(layers);
  const { value, sourceOf } = merged;
  diags.push(...envSecrets(value, sourceOf, env, secretSources));
  for (const layer of layers) {
    const paths = secretPaths.get(layer)!;
    diags.push(...secretLeakDiagnostics(layer.source, layer.value, secretSources, (at) => paths.has(JSON.stringify(at)), (at) => at.length === 1 && at[0] === 'store'));
  }
  diags.push(...crossReferenceDiagnostics(value, sourceOf, env));
  let store: ResolvedStore | undefined;
  const storeLayer = merged.storeLayer;
  if (storeLayer?.value.store !== undefined) {
    const r = resolveStore(storeLayer.value.store, storeLayer.baseDir, env);
    if (r.ok) {
      store = r.store;
      if (r.store.password) secretSources.push({ where: 'store', secret: r.store.password });
    } else diags.push(diagnosticAt(storeLayer.source, ['store'], r.error));
  }
  if (diags.length) throw new ConfigError(sortDiagnostics(dedupe(diags)));
  const first = layers[0]!;
  return { file: first.file, files: list, inventory: value, source: first.source, sourceOf, secrets, secretSources, env, ...(store ? { store } : {}) };
}

/**
 * A target whose endpoint entry gives no password falls back to the environment's (a vSphere
 * target: govc's GOVC_PASSWORD; EndpointSection.envSecret): that password is a secret of this
 * inventory too. Added to `sources` once; a too-short one refused at the first target using it.
 */
function envSecrets(value: Inventory, sourceOf: (at: readonly PathKey[]) => SourceDoc, env: Env, sources: SecretSource[]): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const [tName, t] of Object.entries(value.targets)) {
    const m = moduleOf(t);
    const ref = m.endpointOf?.(t);
    const section = m.endpointSection;
    if (!ref || !section?.envSecret) continue;
    const s = section.envSecret(endpointEntries(value, section.key)[ref.name], env);
    if (!s || seen.has(s.where)) continue;
    seen.add(s.where);
    const short = shortSecretMessage(s.value);
    if (short) diags.push(diagnosticAt(sourceOf(['targets', tName]), ['targets', tName, ...ref.path], `${s.what} this target falls back to: ${short}`));
    else sources.push({ where: s.where, secret: new Secret(s.ref, s.value) });
  }
  return diags;
}

/** One inventory file read and checked by the schema on its own (a later one may hold no targets). */
function loadLayer(file: string, first: boolean, env: NodeJS.ProcessEnv): InventoryLayer {
  const text = readConfigFile(file);
  const baseDir = path.dirname(path.resolve(file));
  try {
    const { value, source } = validateYaml(text, file, first ? inventorySchema() : inventoryLayerSchema());
    return { file, baseDir, value, source };
  } catch (err) {
    // A secret value pasted into a field that is also invalid would be echoed ("got …"): register
    // the secrets the file references first, so the printer masks them (cli/exit.ts).
    if (err instanceof ConfigError) registerReferencedSecrets(text, file, baseDir, env);
    throw err;
  }
}

/** What a target's SSH hosts and vCenter must be, in the merged inventory; each problem at the file that names it. */
function crossReferenceDiagnostics(value: Inventory, sourceOf: (at: readonly PathKey[]) => SourceDoc, env: NodeJS.ProcessEnv): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const names = { sshHosts: Object.keys(value.sshHosts), endpoints: Object.fromEntries(endpointSections().map((e) => [e.key, Object.keys(endpointEntries(value, e.key))])), env };
  for (const [tName, t] of Object.entries(value.targets)) {
    const at = ['targets', tName];
    const source = sourceOf(at);
    const m = moduleOf(t);
    for (const ref of m.sshHostsOf(t)) {
      const host = value.sshHosts[ref.name];
      if (!host) diags.push(diagnosticAt(source, [...at, ...ref.path], `no sshHosts entry named "${ref.name}" (have: ${Object.keys(value.sshHosts).join(', ') || 'none'})`));
      else if (ref.shell === 'posix' && host.shell !== 'posix') {
        diags.push(diagnosticAt(source, [...at, ...ref.path], `sshHosts.${ref.name} declares shell ${host.shell}, but target "${tName}" (${t.provider}) sends POSIX sh command lines there; set its shell to posix (or leave it out)`));
      }
      // ESXi's sshd offers only keyboard-interactive (sshKeyboardInteractive): a password-only host
      // told not to use it could never log in; say so here rather than at the first SSH connect.
      if (host && ref.keyboardInteractive === true && host.keyboardInteractive === false && host.password !== undefined && !host.privateKeyFile) {
        diags.push(
          diagnosticAt(sourceOf(['sshHosts', ref.name]), ['sshHosts', ref.name, 'keyboardInteractive'], `target ${tName} drives this host as ESXi, whose sshd offers only keyboard-interactive for passwords (the password method is rejected): remove keyboardInteractive: false, or log in with privateKeyFile`),
        );
      }
    }
    for (const d of m.checkInventory(t, names)) diags.push(diagnosticAt(source, [...at, ...d.path], d.message));
  }
  return diags;
}

/** A diagnostic at an inventory key, in the file that defines it (the last of several that do). */
export function inventoryDiagnosticAt(inv: Pick<LoadedInventory, 'source' | 'sourceOf'>, at: readonly PathKey[], message: string): Diagnostic {
  return diagnosticAt(inv.sourceOf?.(at) ?? inv.source, at, message);
}

/** The inventory files in words: one name, or `a.yaml + b.yaml`. */
export function inventoryName(inv: Pick<LoadedInventory, 'file' | 'files'>): string {
  return (inv.files ?? [inv.file]).join(' + ');
}

function setAt(entry: unknown, p: readonly string[], value: string): void {
  let o: unknown = entry;
  for (const k of p.slice(0, -1)) o = o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;
  if (o && typeof o === 'object') (o as Record<string, unknown>)[p[p.length - 1]!] = value;
}

function registerReferencedSecrets(text: string, file: string, baseDir: string, env: NodeJS.ProcessEnv): void {
  try {
    const { source, diagnostics } = parseYaml(text, file);
    if (diagnostics.length) return;
    const data = source.doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown> | null;
    for (const f of SECRET_FIELDS) {
      const p = f.path;
      for (const [, entry] of secretFieldEntries(f, data?.[f.section])) {
        let v: unknown = entry;
        for (const k of p) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
        if (typeof v === 'string') resolveSecret(v, baseDir, env); // registers the value; failures do not matter here
      }
    }
  } catch {
    // best effort: the ConfigError being thrown is what the user sees
  }
}

/**
 * Cross-checks between a playbook and the inventory it runs against, for every target the playbook
 * names: its diagnostics, and the targets found by name, in playbook order. (src/plan/check.ts adds
 * what the targets' planners refuse; the CLI checks both at once.)
 */
export function compatibilityDiagnostics(pb: LoadedPlaybook, inv: LoadedInventory): { targets: Map<string, Target>; diagnostics: Diagnostic[] } {
  const names = targetNames(pb.playbook);
  const listed = typeof pb.playbook.target !== 'string';
  const out = new Map<string, Target>();
  // The playbook's names and values end up in plans, run directory names and reports too.
  const diags: Diagnostic[] = secretLeakDiagnostics(pb.source, pb.playbook, inv.secretSources ?? [], () => false);
  // several targets: an axis applies to the targets whose provider takes it; the others lack it
  // (playbook lackingAxes), which is refused only when no listed target takes it
  const takenByAny = new Set(names.flatMap((n) => (inv.inventory.targets[n] ? moduleOf(inv.inventory.targets[n]).axes.map((a) => a.name) : [])));
  names.forEach((name, i) => {
    const at: PathKey[] = listed ? ['target', i] : ['target'];
    const target = inv.inventory.targets[name];
    if (!target) diags.push(diagnosticAt(pb.source, at, `no target "${name}" in ${inventoryName(inv)} (have: ${Object.keys(inv.inventory.targets).join(', ')})`));
    else {
      diags.push(...targetDiagnostics(pb, name, target, listed ? takenByAny : new Set(), (p, message) => inventoryDiagnosticAt(inv, ['targets', name, ...p], message)));
      out.set(name, target);
    }
  });
  return { targets: out, diagnostics: dedupe(diags) };
}

/** compatibilityDiagnostics, thrown as one ConfigError when there is any. */
export function checkCompatibility(pb: LoadedPlaybook, inv: LoadedInventory): Map<string, Target> {
  const { targets, diagnostics } = compatibilityDiagnostics(pb, inv);
  if (diagnostics.length) throw new ConfigError(sortDiagnostics(diagnostics));
  return targets;
}

/** Two targets of one provider report the same matrix problem at the same place: once is enough. */
export function dedupe(diags: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diags.filter((d) => {
    const k = `${d.line}:${d.column}:${d.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Where an axis is written in the playbook's matrix: its key, or the nearest enclosing key. */
export function axisKeyAt(pb: Pick<Playbook, 'matrix'>, axis: string): { at: PathKey[]; key: string } {
  const [section = '', key = ''] = axis.split('.');
  const m = pb.matrix as Record<string, Record<string, unknown> | undefined>;
  if (m[section]?.[key] !== undefined) return { at: ['matrix', section], key };
  if (m[section] !== undefined) return { at: ['matrix'], key: section };
  return { at: [], key: 'matrix' };
}

function unusedAxisMessage(name: string, provider: Target['provider'], axis: string): string {
  const takes = providerModule(provider).axes.map((a) => a.name);
  const noone = !providerModules().some((m) => m.axes.some((a) => a.name === axis));
  const what = takes.length ? `${provider} targets take ${[...takes, ...CORE_AXES].join(', ')}` : `${provider} targets provision nothing, their only axis is ${CORE_AXES.join(', ')}`;
  return `target "${name}" (${provider}) does not use ${axis}: ${what}; each of its values would repeat the same permutation${noone ? ` (no provider uses ${axis} yet)` : ''}`;
}

function targetDiagnostics(pb: LoadedPlaybook, name: string, target: Target, takenByOthers: ReadonlySet<string>, inventoryAt: (p: PathKey[], message: string) => Diagnostic): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const m = pb.playbook.matrix;
  const provider = target.provider;
  // Every axis must be one the provider's planner reads, every value one it takes
  // (src/providers/<name>/axes.ts); src/plan/check.ts then dry-runs the planner on each combination.
  const module = moduleOf(target);
  const declared = new Map(module.axes.map((a) => [a.name, a]));
  for (const axis of matrixAxes(m)) {
    if (CORE_AXES.includes(axis.name)) continue;
    const spec = declared.get(axis.name);
    const { at, key } = axisKeyAt(pb.playbook, axis.name);
    if (!spec) {
      if (!takenByOthers.has(axis.name)) diags.push(diagnosticAt(pb.source, at, unusedAxisMessage(name, provider, axis.name), key));
      continue;
    }
    axis.values.forEach((v, i) => {
      if (axisAccepts(spec, v)) return;
      const rule = spec.values ? `supports ${axis.name} ${spec.values.join(', ')}` : `needs ${axis.name} in ${axisExpected(spec)}`;
      diags.push(diagnosticAt(pb.source, [...at, key, i], `target "${name}" (${provider}) ${rule}; got ${JSON.stringify(v)}`));
    });
  }
  // A custom workload is written for one tool: fio options mean nothing to diskspd and the reverse.
  const tool = module.workloadTool?.(target) ?? 'fio';
  const other = tool === 'fio' ? 'diskspd' : 'fio';
  const profiles = matrixAxes(m).find((a) => a.name === 'workload.profile');
  profiles?.values.forEach((v, i) => {
    const inline = typeof v === 'string' ? pb.playbook.workloads?.[v] : undefined;
    if (!inline || inline[other] === undefined) return;
    const { at, key } = axisKeyAt(pb.playbook, 'workload.profile');
    diags.push(
      diagnosticAt(pb.source, [...at, key, i], `target "${name}" (${provider}) measures with ${tool}${tool === 'diskspd' ? ' (a Windows guest)' : ''}, but workload "${v}" gives ${other} ${other === 'fio' ? 'options' : 'parameters'}; allowed here: a preset, an IOMeter spec, or a workload with ${tool}: ${tool === 'fio' ? 'options' : 'parameters'} (or iometer:)`),
    );
  });
  // What the target's inventory entry must give for a value (the planner refuses it too; here it is
  // said with the inventory key to add): the provider's own check, keyed by axis.
  const values = Object.fromEntries(matrixAxes(m).map((a) => [a.name, a.values]));
  for (const d of module.validate(target, values, name)) {
    const { at, key } = axisKeyAt(pb.playbook, d.axis);
    diags.push(d.index === undefined ? diagnosticAt(pb.source, at, d.message, key) : diagnosticAt(pb.source, [...at, key, d.index], d.message));
    // a problem of the inventory entry too (vm.count beyond the VMs a target names): said at its line as well
    if (d.inventory) diags.push(inventoryAt(d.inventory, d.message));
  }
  return diags;
}

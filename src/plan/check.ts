// `validate` runs the planners: every permutation the plan would hold is planned here, with the
// same provider planner `plan` and `run` use (ProviderModule.planner), and every refusal is a
// diagnostic at the playbook value that caused it. So validate, plan and run cannot disagree.
//
// Linear in the number of permutations: a planner reads only its provider's declared axes
// (providers/<name>/axes.ts), so permutations that agree on those are one configuration, planned
// once. Two different combinations that plan to the same steps are refused too: the axis that
// tells them apart changes nothing on that target, and a report would compare a configuration
// with itself. So are two that differ only in axes the provider declares as not measured in them
// (AxisSpec.notMeasuredWhen: an RDM measures its LUN whatever datastore holds its mapping file),
// which would measure the same thing twice and provision it twice.
import { compatibilityDiagnostics, axisKeyAt, dedupe, inventoryDiagnosticAt, type LoadedInventory, type LoadedPlaybook } from '../config/index.ts';
import { matrixSchema } from '../config/playbook.ts';
import { diagnosticAt, sortDiagnostics, type PathKey } from '../config/load.ts';
import { ConfigError, InvalidArgument, type Diagnostic } from '../errors.ts';
import { axisAccepts, type AxisSpec } from '../contract/axis.ts';
import { moduleOf, type Target } from '../providers/index.ts';
import type { Axes, AxisValue } from '../contract/axis.ts';
import { axesKey } from './matrix.ts';
import { newRunId, ownedPrefix, permutationId } from './permutation.ts';
import { expandPlaybook } from './plan.ts';

/** Problems reported per target before validate stops planning it (fix those first). */
export const MAX_PLAN_DIAGNOSTICS = 20;

/**
 * The playbook checked against the inventory (compatibilityDiagnostics) and then planned on each
 * target; every problem at once as one ConfigError. Returns the targets by name, in playbook order.
 */
export function checkPlaybookAgainst(pb: LoadedPlaybook, inv: LoadedInventory): Map<string, Target> {
  const { targets, diagnostics } = compatibilityDiagnostics(pb, inv);
  // a value already refused is not reported again by its planner
  const taken = new Set(diagnostics.map((d) => `${d.file}:${d.line}:${d.column}`));
  const planned = planDiagnostics(pb, targets, inv).filter((d) => !taken.has(`${d.file}:${d.line}:${d.column}`));
  const all = dedupe([...diagnostics, ...planned]);
  if (all.length) throw new ConfigError(sortDiagnostics(all));
  return targets;
}

const show = (axes: Axes, names: readonly string[]): string =>
  names
    .filter((n) => axes[n] !== undefined)
    .map((n) => `${n}=${String(axes[n])}`)
    .join(', ');

/** What each target's planner refuses among the playbook's permutations, at the values that caused it. */
export function planDiagnostics(pb: LoadedPlaybook, targets: ReadonlyMap<string, Target>, inv?: Pick<LoadedInventory, 'source' | 'sourceOf'>): Diagnostic[] {
  const book = pb.playbook;
  const listed = typeof book.target !== 'string';
  const { axes, permutations } = expandPlaybook(book, book.target, (name) => {
    const t = targets.get(name);
    return t ? moduleOf(t).axes.map((a) => a.name) : undefined;
  });
  const runId = newRunId();
  const diags: Diagnostic[] = [];
  [...targets].forEach(([name, target]) => {
    const module = moduleOf(target);
    const planner = module.planner(target);
    if (!planner) return;
    const declared = module.axes;
    const read = declared.map((a) => a.name).filter((n) => axes.some((a) => a.name === n));
    const targetAt: PathKey[] = listed ? ['target', targetNamesOf(book.target).indexOf(name)] : ['target'];
    const label = `target "${name}" (${target.provider})`;
    // one permutation per configuration (the first in playbook order), as the plan would hold it
    const firstOf = new Map<string, Axes>();
    for (const p of permutations) {
      if (listed && p.target !== name) continue;
      const key = axesKey(Object.fromEntries(read.map((n) => [n, p[n]!])));
      if (!firstOf.has(key)) firstOf.set(key, p);
    }
    const sameSteps = new Map<string, Axes>();
    const sameMeasure = new Map<string, Axes>();
    let found = 0;
    const report = (d: Diagnostic): boolean => {
      diags.push(d);
      if (++found < MAX_PLAN_DIAGNOSTICS) return true;
      diags.push(diagnosticAt(pb.source, [], `${label}: validate stopped after ${MAX_PLAN_DIAGNOSTICS} problems with its permutations; fix these first`, 'matrix'));
      return false;
    };
    for (const p of firstOf.values()) {
      // a value config/index.ts refused already: its planner would only say it again
      if (!acceptedByDeclaration(declared, p)) continue;
      const prefix = ownedPrefix(runId, permutationId(p));
      let steps: unknown;
      try {
        steps = planner(p, { prefix });
      } catch (err) {
        if (!(err instanceof InvalidArgument)) throw err;
        const where = positionOf(pb, err.details.name, p, targetAt);
        const message = `${label} cannot build ${show(p, read) || 'its permutations'}: ${err.message}`;
        if (!report(diagnosticAt(pb.source, where.at, message, where.key))) return;
        // the refusal is as much about an inventory value: reported at that line too
        const field = err.details.inventoryField;
        if (inv && field !== undefined && !report(inventoryDiagnosticAt(inv, ['targets', name, field], `${label}: ${err.message}`))) return;
        continue;
      }
      // the owned names differ per permutation by construction; what is sent must differ too
      const config = JSON.stringify(steps).split(prefix).join('');
      const twin = sameSteps.get(config);
      if (!twin) {
        sameSteps.set(config, p);
        // Different steps may still measure the same thing: an axis the provider declares as not
        // measured in this permutation (an RDM's datastore) is left out of what must differ.
        const ignored = declared.flatMap((spec) => {
          const why = p[spec.name] === undefined ? undefined : spec.notMeasuredWhen?.(p);
          return why ? [{ name: spec.name, why }] : [];
        });
        if (!ignored.length) continue;
        const measured = `${ignored.map((i) => i.name).join(',')}|${axesKey(Object.fromEntries(read.filter((n) => !ignored.some((i) => i.name === n)).map((n) => [n, p[n]!])))}`;
        const first = sameMeasure.get(measured);
        if (!first) {
          sameMeasure.set(measured, p);
          continue;
        }
        const by = ignored.find((i) => String(p[i.name]) !== String(first[i.name])) ?? ignored[0]!;
        const at = positionOf(pb, by.name, p, targetAt);
        const msg = `${label} would measure the same thing for ${show(p, read)} as for ${show(first, read)}: ${by.why}; keep one ${by.name} value for these permutations (exclude the others)`;
        if (!report(diagnosticAt(pb.source, at.at, msg, at.key))) return;
        continue;
      }
      const differs = read.find((n) => String(p[n]) !== String(twin[n]));
      const where = differs ? positionOf(pb, differs, p, targetAt) : { at: targetAt };
      const same = `${label} builds the same configuration for ${show(p, read)} as for ${show(twin, read)}: ${differs ?? 'the axis'} changes nothing there, so both permutations would measure the same thing; drop the value or exclude the combination`;
      if (!report(diagnosticAt(pb.source, where.at, same, where.key))) return;
    }
  });
  return diags;
}

const targetNamesOf = (t: string | string[]): string[] => (typeof t === 'string' ? [t] : t);

function acceptedByDeclaration(declared: readonly AxisSpec[], p: Axes): boolean {
  return declared.every((spec) => p[spec.name] === undefined || axisAccepts(spec, p[spec.name]!));
}

/**
 * Where a planner's refusal points: the value of the axis it names (in the matrix, or the include
 * entry that brought it), the axis's place when the permutation has none, and the playbook's
 * `target` for an inventory field (the message names it).
 */
function positionOf(pb: LoadedPlaybook, name: string, p: Axes, targetAt: PathKey[]): { at: PathKey[]; key?: string } {
  const book = pb.playbook;
  const value: AxisValue | undefined = p[name];
  const [section, key] = name.split('.');
  const isAxisName = section !== undefined && key !== undefined && Object.keys(matrixSchema.shape).includes(section);
  if (!isAxisName) return { at: targetAt };
  if (value === undefined) return axisKeyAt(book, name);
  const values = (book.matrix as Record<string, Record<string, AxisValue[] | undefined> | undefined>)[section]?.[key];
  const i = values?.findIndex((v) => String(v) === String(value)) ?? -1;
  if (i >= 0) return { at: ['matrix', section, key, i] };
  const inc = book.include?.findIndex((entry) => entry[name] !== undefined && String(entry[name]) === String(value)) ?? -1;
  if (inc >= 0) return { at: ['include', inc, name] };
  return axisKeyAt(book, name);
}

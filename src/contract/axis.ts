// What a provider declares about the matrix: the axes its planner reads and the values each takes.
// `validate` refuses any other axis on that provider's targets (it would only duplicate
// permutations: the planner ignores it) and any other value, at the value's file:line:col; then it
// dry-runs the planner on every distinct combination of these axes (src/plan/check.ts).

/** One value of a matrix axis, as plans, ledgers and result records carry it. */
export type AxisValue = string | number | boolean;
/** A permutation's axes: flat axis name (`datastore.kind`) → value. */
export type Axes = Record<string, AxisValue>;

export interface AxisSpec {
  /** flat axis name as plans and records spell it, e.g. `datastore.kind` */
  readonly name: string;
  /** every value the provider takes; or, for an open-ended axis, `expected` and `accepts` */
  readonly values?: readonly AxisValue[];
  /** the rule in words, e.g. "whole GiB up to 63488 (62 TiB, the largest VMDK)" */
  readonly expected?: string;
  readonly accepts?: (value: AxisValue) => boolean;
  /**
   * Why, in this permutation, the axis changes nothing the workload measures (e.g. an RDM measures
   * its LUN, not the datastore that holds its mapping file), or undefined when it does. `validate`
   * refuses two permutations that differ only in such axes: the same thing measured twice, and
   * provisioned (possibly reformatted) twice.
   */
  readonly notMeasuredWhen?: (permutation: Axes) => string | undefined;
}

/** The axes every target takes whatever its provider: the workload (checked by the playbook loader). */
export const CORE_AXES: readonly string[] = ['workload.profile'];

/** What a provider takes for an axis, in words: its values or its rule. */
export function axisExpected(spec: AxisSpec): string {
  return spec.values ? `one of ${spec.values.join(', ')}` : (spec.expected ?? 'any value');
}

/** Whether the provider takes `value` on this axis. */
export function axisAccepts(spec: AxisSpec, value: AxisValue): boolean {
  if (spec.values) return spec.values.includes(value);
  return spec.accepts ? spec.accepts(value) : true;
}

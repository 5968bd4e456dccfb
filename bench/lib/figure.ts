// A benchmark figure: one named number with its unit and target, printed as one line a script can
// read (`name: value unit (target …)`). A figure that could not be measured keeps its name and
// says why instead of a value.

export interface Figure {
  name: string;
  /** null: not measured (see `note`) */
  value: number | null;
  unit: string;
  /** human-readable target, e.g. "≥ 0.98" */
  target: string;
  /** true/false when the target is a comparison we can check; null when it is not checkable */
  met: boolean | null;
  note?: string;
}

export function figure(name: string, value: number | null, unit: string, target: string, met: boolean | null, note?: string): Figure {
  return note === undefined ? { name, value, unit, target, met } : { name, value, unit, target, met, note };
}

/** A figure whose target is a bound: `atLeast` (≥) or `atMost` (<). */
export function bounded(name: string, value: number, unit: string, bound: { atLeast?: number; below?: number; atMost?: number }, note?: string): Figure {
  let target = 'none';
  let met: boolean | null = null;
  if (bound.atLeast !== undefined) {
    target = `≥ ${bound.atLeast}${unit ? ` ${unit}` : ''}`;
    met = value >= bound.atLeast;
  } else if (bound.below !== undefined) {
    target = `< ${bound.below}${unit ? ` ${unit}` : ''}`;
    met = value < bound.below;
  } else if (bound.atMost !== undefined) {
    target = `≤ ${bound.atMost}${unit ? ` ${unit}` : ''}`;
    met = value <= bound.atMost;
  }
  return figure(name, value, unit, target, met, note);
}

export function pending(name: string, unit: string, target: string, reason: string): Figure {
  return figure(name, null, unit, target, null, reason);
}

/** Three significant digits for small numbers, integers for large ones. */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1000) return String(Math.round(v));
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(3).replace(/\.?0+$/, '');
  return v.toPrecision(3);
}

/** `name: value unit (target …[, met|MISSED])`; unmeasured: `name: pending (target …; reason)`. */
export function figureLine(f: Figure): string {
  const verdict = f.met === null ? '' : f.met ? ', met' : ', MISSED';
  if (f.value === null) return `${f.name}: pending (target ${f.target}; ${f.note ?? 'not measured'})`;
  return `${f.name}: ${formatValue(f.value)}${f.unit ? ` ${f.unit}` : ''} (target ${f.target}${verdict})`;
}

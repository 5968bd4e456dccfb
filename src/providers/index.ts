// Every provider, one line each (exhaustive: a name added to ProviderName fails to compile until it
// is listed here). Everything outside src/providers/<name>/ asks this registry about a provider —
// the inventory schema, validate, the planner, the estimate, retries, --confirm-destroy, composition
// — so adding one is a new folder, its name, one line here and an example inventory
// (docs/architecture.md, "Adding a provider").
import { environmentSchema } from '../input/environment.ts';
import { z } from 'zod';
import type { AxisSpec } from '../contract/axis.ts';
import type { PlannedStep, ProviderModule, ProviderName } from '../contract/provider.ts';
import { UsageError } from '../errors.ts';
import { lazy } from '../lazy.ts';
import { argumentProblems } from './operations.ts';
import { esxiShell } from './esxi-shell/index.ts';
import { hypervProvider } from './hyperv/index.ts';
import { local } from './local/index.ts';
import { ssh } from './ssh/index.ts';
import { vsphere } from './vsphere/index.ts';

export const PROVIDERS = {
  local,
  ssh,
  vsphere,
  'esxi-shell': esxiShell,
  hyperv: hypervProvider,
} as const satisfies { readonly [N in ProviderName]: { readonly name: N } }; // each module satisfies ProviderModule itself

type Modules = typeof PROVIDERS;

/** An inventory target, of whichever provider (each module's target schema's output). */
export type Target = { [N in ProviderName]: z.output<Modules[N]['targetSchema']> }[ProviderName];
export type TargetOf<N extends ProviderName> = Extract<Target, { provider: N }>;

/** The inventory's `targets.<name>` schema: one strict object per provider, told apart by `provider` (built on first use). */
export const targetSchema = lazy(() =>
  z.discriminatedUnion(
    'provider',
    // every target may state facts no host reports (config/environment.ts), whatever its provider
    Object.values(PROVIDERS).map((m) => m.targetSchema.extend({ environment: environmentSchema.optional() })) as unknown as [Modules[ProviderName]['targetSchema'], ...Array<Modules[ProviderName]['targetSchema']>],
  ),
);

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** The module of a provider, typed for any target (the registry's one cast). */
export function providerModule(name: ProviderName): ProviderModule {
  const m = (PROVIDERS as Record<string, unknown>)[name];
  if (!m) throw new UsageError(`unknown provider "${String(name)}" (known: ${PROVIDER_NAMES.join(', ')})`);
  return m as ProviderModule;
}

/** The module of a target's provider, with the target's own type. */
export function moduleOf<T extends Target>(target: T): ProviderModule<T['provider'], T> {
  return providerModule(target.provider) as unknown as ProviderModule<T['provider'], T>;
}

/** Every axis some provider declares, the first declaration of each name (registry order). */
export function providerAxes(): AxisSpec[] {
  const out = new Map<string, AxisSpec>();
  for (const m of Object.values(PROVIDERS) as ProviderModule[]) for (const a of m.axes) if (!out.has(a.name)) out.set(a.name, a);
  return [...out.values()];
}

/** The providers' own inventory sections of named endpoints (ProviderModule.endpointSection), by key. */
export function endpointSections(): Array<NonNullable<ProviderModule['endpointSection']>> {
  return (Object.values(PROVIDERS) as ProviderModule[]).flatMap((m) => (m.endpointSection ? [m.endpointSection] : []));
}

/** Every value some provider takes on an axis, in registry order (the playbook schema's enums). */
export function axisValues(axis: string): Array<string | number | boolean> {
  const out: Array<string | number | boolean> = [];
  for (const m of Object.values(PROVIDERS)) {
    for (const spec of m.axes as ReadonlyArray<{ name: string; values?: ReadonlyArray<string | number | boolean> }>) {
      if (spec.name === axis) for (const v of spec.values ?? []) if (!out.includes(v)) out.push(v);
    }
  }
  return out;
}

/**
 * A step's arguments checked against its provider's schema for that operation: null when they
 * parse, else what is wrong (`arguments.<key>: <problem>`). A plan built by this version always
 * parses (test/unit/providers/registry.test.ts); a stored one may come from another version.
 */
export function stepArgumentsProblem(step: Pick<PlannedStep, 'provider' | 'operation' | 'arguments'>): string | null {
  const m = (PROVIDERS as Record<string, ProviderModule | undefined>)[step.provider];
  if (!m) return `provider "${String(step.provider)}" is not one this storsweep knows (${PROVIDER_NAMES.join(', ')})`;
  const schema = m.operations[step.operation];
  if (!schema) return `${step.provider} has no operation ${JSON.stringify(step.operation)} (it has ${Object.keys(m.operations).map((k) => JSON.stringify(k)).join(', ')})`;
  const r = schema.safeParse(step.arguments);
  if (r.success) return null;
  return argumentProblems(r.error.issues);
}

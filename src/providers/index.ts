// Every provider, one line each (exhaustive: a name added to ProviderName fails to compile until it
// is listed here). Everything outside src/providers/<name>/ asks this registry about a provider —
// the inventory schema, validate, the planner, the estimate, retries, --confirm-destroy, composition
// — so adding one is a new folder, its name, one line here and an example inventory
// (docs/architecture.md, "Adding a provider").
//
// A test may add a provider of its own without a branch (registerProvider): before anything reads
// the registry, as the config layer does when it loads (its schemas are built from it then).
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

/** Providers added at run time (registerProvider): a test's, after the shipped ones. */
const registered: ProviderModule[] = [];
/** Set by the first read of the registry: from then on the schemas built from it are fixed. */
let read = false;

/**
 * Adds a provider that is not listed above: a test's own (test/integration/scratch-provider.test.ts).
 * Only before the registry is first read — the config layer builds the playbook and inventory
 * schemas from it when it loads — so a test registers first and imports config/, plan/, app/ after.
 * Its name is outside the `ProviderName` union (which lists the shipped providers for the compiler).
 */
export function registerProvider(m: ProviderModule): void {
  if (providerNamesNow().includes(m.name)) throw new Error(`registerProvider: a provider named ${JSON.stringify(m.name)} is already registered`);
  if (read) throw new Error(`registerProvider(${JSON.stringify(m.name)}): the provider registry was already read (the config layer builds its schemas from it when it loads); register before importing config/, plan/ or app/`);
  registered.push(m);
}

function providerNamesNow(): string[] {
  return [...Object.keys(PROVIDERS), ...registered.map((m) => m.name)];
}

/** Every provider module: the shipped ones in registry order, then any registered. */
export function providerModules(): ProviderModule[] {
  read = true;
  return [...(Object.values(PROVIDERS) as ProviderModule[]), ...registered];
}

/** An inventory target, of whichever provider (each module's target schema's output). */
export type Target = { [N in ProviderName]: z.output<Modules[N]['targetSchema']> }[ProviderName];
export type TargetOf<N extends ProviderName> = Extract<Target, { provider: N }>;

/**
 * The inventory's `targets.<name>` schema: one strict object per provider, told apart by `provider`.
 * Built on first use (config/inventory.ts, as it loads), so a provider registered before is in it.
 */
export const targetSchema = lazy(() =>
  z.discriminatedUnion(
    'provider',
    // every target may state facts no host reports (config/environment.ts), whatever its provider
    providerModules().map((m) => m.targetSchema.extend({ environment: environmentSchema.optional() })) as unknown as [Modules[ProviderName]['targetSchema'], ...Array<Modules[ProviderName]['targetSchema']>],
  ),
);

/** The shipped providers' names (registry order). */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

function findModule(name: string): ProviderModule | undefined {
  return ((PROVIDERS as Record<string, ProviderModule | undefined>)[name] ?? registered.find((m) => m.name === name));
}

/** The module of a provider, typed for any target (the registry's one cast). */
export function providerModule(name: ProviderName): ProviderModule {
  read = true;
  const m = findModule(name);
  if (!m) throw new UsageError(`unknown provider "${String(name)}" (known: ${providerNamesNow().join(', ')})`);
  return m;
}

/** The module of a target's provider, with the target's own type. */
export function moduleOf<T extends Target>(target: T): ProviderModule<T['provider'], T> {
  return providerModule(target.provider) as unknown as ProviderModule<T['provider'], T>;
}

/** Every axis some provider declares, the first declaration of each name (registry order). */
export function providerAxes(): AxisSpec[] {
  const out = new Map<string, AxisSpec>();
  for (const m of providerModules()) for (const a of m.axes) if (!out.has(a.name)) out.set(a.name, a);
  return [...out.values()];
}

/** The providers' own inventory sections of named endpoints (ProviderModule.endpointSection), by key. */
export function endpointSections(): Array<NonNullable<ProviderModule['endpointSection']>> {
  return providerModules().flatMap((m) => (m.endpointSection ? [m.endpointSection] : []));
}

/** Every value some provider takes on an axis, in registry order (the playbook schema's enums). */
export function axisValues(axis: string): Array<string | number | boolean> {
  const out: Array<string | number | boolean> = [];
  for (const m of providerModules()) {
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
  const m = findModule(step.provider);
  if (!m) return `provider "${String(step.provider)}" is not one this storsweep knows (${providerNamesNow().join(', ')})`;
  const schema = m.operations[step.operation];
  if (!schema) return `${step.provider} has no operation ${JSON.stringify(step.operation)} (it has ${Object.keys(m.operations).map((k) => JSON.stringify(k)).join(', ')})`;
  const r = schema.safeParse(step.arguments);
  if (r.success) return null;
  return argumentProblems(r.error.issues);
}

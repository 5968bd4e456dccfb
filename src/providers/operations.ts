// A provider as a list of operations (../contract/operation.ts): defineOperation makes one, with
// the step builder its planner uses; operationsProvider dispatches a Provider's apply, destroy,
// planDestroy, find and verify to the operation a step names or the one that creates an object's
// kind, parsing the step's arguments with that operation's schema first — a step edited in a
// stored plan or the ledger never reaches a command with a value the schema refuses.
import type { z } from 'zod';
import type { Axes } from '../contract/axis.ts';
import type { AnyOperation, ObjectKind, Operation, RecordedObject, StepSpec } from '../contract/operation.ts';
import type { CreatedObject, DestroyPlan, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName } from '../contract/provider.ts';
import { InvalidArgument } from '../errors.ts';

type Def<S extends z.ZodType, H> = Omit<Operation<z.output<S>, H, z.input<S>>, 'step' | 'schema'> & { readonly schema: S };

/** One operation of `provider`: its schema and handlers, plus `step()` for its planner. */
export function defineOperation<S extends z.ZodType, H>(provider: ProviderName, def: Def<S, H>): Operation<z.output<S>, H, z.input<S>> {
  return {
    ...def,
    schema: def.schema as z.ZodType<z.output<S>, z.input<S>>,
    step(spec: StepSpec<z.input<S>>): PlannedStep {
      // one object shape for every step (a plan may hold 100,000 of them)
      const s: PlannedStep = { step: spec.step, provider, operation: def.name, arguments: spec.arguments as Record<string, unknown>, destructive: spec.destructive };
      if (spec.destroys) s.destroys = spec.destroys;
      if (spec.creates) s.creates = spec.creates;
      return s;
    },
  };
}

/** defineOperation for one provider whose connection is `H`: `const op = operationFactory<Host>('name')`, then `op({...})` infers the schema. */
export function operationFactory<H>(provider: ProviderName) {
  return <S extends z.ZodType>(def: Def<S, H>): Operation<z.output<S>, H, z.input<S>> => defineOperation<S, H>(provider, def);
}

/** The argument schemas of a provider's operations by name: what `run --resume` checks a stored plan with. */
export function schemasOf(ops: ReadonlyArray<AnyOperation<never>>): Readonly<Record<string, z.ZodType>> {
  return Object.fromEntries(ops.map((o) => [o.name, o.schema]));
}

/** A step's arguments parsed with its operation's schema; InvalidArgument naming each key that does not parse. */
export function parseArguments(op: Pick<AnyOperation<never>, 'name' | 'schema'>, step: Pick<PlannedStep, 'step' | 'arguments'>): unknown {
  const r = op.schema.safeParse(step.arguments);
  if (r.success) return r.data;
  const issues = closestIssues(r.error.issues);
  throw new InvalidArgument(`step ${step.step} (${op.name}): ${argumentProblems(issues)}`, { name: String(issues[0]?.path[0] ?? 'arguments'), value: JSON.stringify(step.arguments).slice(0, 200) });
}

type Issue = z.core.$ZodIssue;

/** What is wrong with a step's arguments, each problem at its key (`arguments.<key>: <problem>`). */
export function argumentProblems(issues: readonly Issue[]): string {
  return closestIssues(issues)
    .map((i) => `arguments${i.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('')}: ${i.message}`)
    .join('; ');
}

/** An operation with several argument shapes fails as one union issue: what is wrong with the shape it comes closest to. */
function closestIssues(issues: readonly Issue[]): Issue[] {
  return issues.flatMap((i) => {
    if (i.code !== 'invalid_union' || !i.errors.length) return [i];
    const closest = i.errors.reduce((a, b) => (b.length < a.length ? b : a));
    return closestIssues(closest.map((e) => ({ ...e, path: [...i.path, ...e.path] })));
  });
}

/** Seconds a permutation's provisioning takes: each step's operation's estimate, or `perStep`. */
export function estimateSteps(ops: ReadonlyArray<AnyOperation<never>>, steps: readonly PlannedStep[], axes: Axes, perStep: number): number {
  const byName = new Map(ops.map((o) => [o.name, o]));
  let sec = 0;
  for (const s of steps) {
    const op = byName.get(s.operation);
    sec += op?.estimateSec ? op.estimateSec(s.arguments, axes) : perStep;
  }
  return sec;
}

type ProviderHalf = Pick<Provider, 'apply' | 'destroy' | 'find' | 'verify'> & { planDestroy(obj: RecordedObject, ctx: ProviderContext): Promise<DestroyPlan | null> };

/**
 * apply/destroy/planDestroy/find/verify of a connected provider, dispatched to `ops` with `host`
 * (the provider's connection) in their context. A step whose operation is not listed, or has no
 * apply (a workload step), and an object of a kind no operation creates are refused.
 */
export function operationsProvider<H>(provider: ProviderName, ops: ReadonlyArray<AnyOperation<H>>, host: H): ProviderHalf {
  const byName = new Map<string, AnyOperation<H>>();
  const byKind = new Map<string, ObjectKind<H>>();
  for (const o of ops) {
    byName.set(o.name, o);
    for (const [kind, k] of Object.entries(o.objects ?? {})) byKind.set(kind, k);
  }
  const opOf = (step: PlannedStep) => {
    const op = byName.get(step.operation);
    if (!op?.apply) throw new InvalidArgument(`${provider} provider cannot apply operation ${JSON.stringify(step.operation)} (step ${step.step})`, { name: 'operation', value: step.operation });
    return op;
  };
  const kindOf = (kind: string) => {
    const k = byKind.get(kind);
    if (!k) throw new InvalidArgument(`${provider} provider does not own objects of kind ${kind}`, { name: 'kind', value: kind });
    return k;
  };
  return {
    async apply(step, ctx) {
      const op = opOf(step);
      return op.apply!(parseArguments(op, step), { ...ctx, step, host });
    },
    destroy: async (obj, ctx) => kindOf(obj.kind).destroy(obj, { ...ctx, host }),
    planDestroy: async (obj, ctx) => {
      const k = byKind.get(obj.kind);
      return k?.planDestroy ? k.planDestroy(obj, { ...ctx, host }) : null;
    },
    find: async (ref: OwnedObjectRef, sent?: Record<string, unknown>): Promise<CreatedObject | null> => {
      const k = byKind.get(ref.kind);
      return k?.find ? k.find(ref, sent, host) : null;
    },
    async verify(step, created, ctx) {
      const op = byName.get(step.operation);
      if (op?.verify) await op.verify(parseArguments(op, step), created, { ...ctx, step, host });
    },
  };
}

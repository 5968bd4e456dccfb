// One operation of a provider (src/providers/<name>/operations/<op>.ts), in the shape of
// terraform-plugin-framework's resource: its argument schema, and what it does with arguments that
// schema parsed — apply, and for the objects its steps create: destroy, find, the read-only plan
// of a destroy; verify and estimate where it has them. The provider's module lists its operations;
// src/providers/operations.ts dispatches a step to the one it names, parses the step's arguments
// with that operation's schema, and hands apply the typed result. The planner builds its steps
// through `operation.step(...)`, whose arguments are typed by the same schema.
import type { z } from 'zod';
import type { Axes } from './axis.ts';
import type { CreatedObject, DestroyPlan, OwnedObjectRef, PlannedStep, ProviderContext, ProviderName } from './provider.ts';

/** An object as the ledger recorded it, for destroy: `id` is null when the create was sent but its reply never recorded. */
export type RecordedObject = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

/** What apply and verify get besides the arguments: the run's context, the step as planned, and the provider's connection (`host`). */
export type OperationContext<H> = ProviderContext & { readonly step: PlannedStep; readonly host: H };

/** What destroy gets: the run's context and the provider's connection. */
export type HostContext<H> = ProviderContext & { readonly host: H };

/** A planned step of an operation, as its planner writes it: everything but the provider and the operation's name. */
export interface StepSpec<I> {
  step: string;
  arguments: I;
  destructive: boolean;
  destroys?: string[];
  creates?: OwnedObjectRef;
}

/** How the objects of one kind that an operation's steps create are found and removed (`H`: the provider's connection). */
export interface ObjectKind<H> {
  /** Removes it, only as recorded (Provider.destroy); idempotent: already gone is 'absent'. */
  destroy(obj: RecordedObject, ctx: HostContext<H>): Promise<'removed' | 'absent'>;
  /** The read-only half of destroy (Provider.planDestroy), for a kind whose ownership the host proves by a mark. */
  planDestroy?(obj: RecordedObject, ctx: HostContext<H>): Promise<DestroyPlan | null>;
  /** Looks one up by owned name, or by what apply recorded as sent (Provider.find). */
  find?(ref: OwnedObjectRef, sent: Record<string, unknown> | undefined, host: H): Promise<CreatedObject | null>;
}

export interface Operation<A = unknown, H = unknown, I = A> {
  /** the name steps carry (PlannedStep.operation): the API method or command the step amounts to */
  readonly name: string;
  /** the arguments' schema: the planner's output parses with it, a fresh run and a resume parse with it before apply */
  readonly schema: z.ZodType<A, I>;
  /** carries the step out with its parsed arguments; absent for a step the provider does not apply (a workload step) */
  apply?(args: A, ctx: OperationContext<H>): Promise<CreatedObject | null>;
  /** the kinds of object its steps create, each with its destroy/find (absent: it creates nothing the ledger keeps) */
  readonly objects?: Readonly<Record<string, ObjectKind<H>>>;
  /** checks the object a step of it created against its arguments, read back from the product (Provider.verify) */
  verify?(args: A, created: CreatedObject, ctx: OperationContext<H>): Promise<void>;
  /** rough seconds a step of it takes (create + teardown); the provider's default when absent */
  estimateSec?(args: A, axes: Axes): number;
  /** a planned step of this operation, its arguments typed by the schema's input */
  step(spec: StepSpec<I>): PlannedStep;
}

/** An operation of any argument type, as a provider's list holds it (its schema parses what apply then gets). */
export type AnyOperation<H> = Omit<Operation<unknown, H, unknown>, 'schema'> & { readonly schema: z.ZodType };

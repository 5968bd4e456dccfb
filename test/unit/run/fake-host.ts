// A fake provider for executor tests: a test double of our own Provider contract (src/run/provider.ts),
// not of a real product. It keeps a host model (what exists, by owned name) so a test asserts the
// host's state afterwards, not just what the executor returned; and it follows the contract the way
// every real provider must: ctx.sent() before the first mutating command, destroy() only of an
// object found by its owned name (or a matching recorded id), find() by owned name.
import { UnsafeOperation } from '../../../src/errors.ts';
import type { CreatedObject, OwnedObjectRef, PlannedStep, Provider, ProviderContext, WorkloadEndpoint } from '../../../src/contract/provider.ts';
import type { WorkloadProfile, WorkloadTest } from '../../../src/workloads/spec.ts';

export interface HostObject {
  kind: string;
  name: string;
  id: string;
  /** false for what someone else created (never ours to remove) */
  owned: boolean;
}

/** What a scripted apply() does for one call: the default creates the object and returns it. */
export type ApplyScript =
  | 'create'
  /** the provider's guard refuses: nothing sent */
  | 'refuse'
  /** fails before sending anything (a read that failed) */
  | 'fail-before-send'
  /** the create reached the host, then the reply was lost (an ambiguous failure) */
  | 'create-then-fail'
  /** never returns until the step's signal aborts, having sent and created nothing */
  | 'hang'
  /** ignores the step's signal: once the step has given up (its signal aborted) it still tries to send and create; FakeHost.late settles when it has tried */
  | 'late-send';

/** Thrown by the fake for a failure its isTransient() calls transient. */
export class FakeTransient extends Error {
  override readonly name = 'FakeTransient';
}

export class FakeHost {
  readonly objects = new Map<string, HostObject>();
  /** every mutating call and lookup, in order: `create disk ss-…`, `destroy disk ss-…`, `find …` */
  readonly calls: string[] = [];
  /** the late sends ('late-send'), each settled once it has tried to send: what a test awaits instead of the clock */
  readonly late: Array<Promise<unknown>> = [];
  private seq = 0;

  add(kind: string, name: string, owned = true): HostObject {
    const o = { kind, name, id: `${kind}-${++this.seq}`, owned };
    this.objects.set(name, o);
    return o;
  }

  /** What exists, as `kind:name`, sorted. */
  state(): string[] {
    return [...this.objects.values()].map((o) => `${o.kind}:${o.name}`).sort();
  }

  count(prefix: string): number {
    return this.calls.filter((c) => c.startsWith(prefix)).length;
  }
}

export interface FakeProviderOptions {
  /** per step and attempt (1-based count of apply calls for that step name) */
  script?: (step: PlannedStep, call: number) => ApplyScript | Error;
  /** per destroy call of an object (1-based): throw this to fail that attempt, or hang until aborted */
  destroyScript?: (obj: OwnedObjectRef, call: number) => Error | 'hang' | undefined;
}

export function fakeProvider(host: FakeHost, opts: FakeProviderOptions = {}): Provider & { isTransient(err: unknown): boolean } {
  const applyCalls = new Map<string, number>();
  const destroyCalls = new Map<string, number>();
  const toCreated = (o: HostObject): CreatedObject => ({ kind: o.kind, name: o.name, provider: 'esxi-shell', id: o.id, data: { owned: o.name } });
  /** What an apply sends and creates, after ctx.sent() (which refuses once the step has given up). */
  const send = async (step: PlannedStep, ctx: ProviderContext, what: ApplyScript): Promise<CreatedObject | null> => {
    const ref = step.creates;
    if (!ref) {
      await ctx.sent({});
      host.calls.push(`${step.operation} ${step.step}`);
      return null;
    }
    await ctx.sent({ owned: ref.name });
    host.calls.push(`create ${ref.kind} ${ref.name}`);
    const o = host.add(ref.kind, ref.name);
    if (what === 'create-then-fail') throw new FakeTransient(`connection reset after ${step.operation} was sent`);
    return toCreated(o);
  };
  return {
    name: 'esxi-shell',
    async apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
      const n = (applyCalls.get(step.step) ?? 0) + 1;
      applyCalls.set(step.step, n);
      const what = opts.script?.(step, n) ?? 'create';
      if (what instanceof Error) throw what;
      if (what === 'refuse') throw new UnsafeOperation(`refusing ${step.operation}: the device is in use`, { operation: step.operation, target: typeof step.arguments.device === 'string' ? step.arguments.device : '' });
      if (what === 'fail-before-send') throw new Error(`cannot read the host before ${step.operation}`);
      if (what === 'hang') {
        await new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true }));
      }
      if (what === 'late-send') {
        const gaveUp = new Promise<void>((r) => (ctx.signal.aborted ? r() : ctx.signal.addEventListener('abort', () => r(), { once: true })));
        const attempt = gaveUp.then(() => send(step, ctx, what));
        host.late.push(attempt.catch(() => undefined));
        return attempt;
      }
      return send(step, ctx, what);
    },
    async destroy(obj, ctx) {
      const n = (destroyCalls.get(obj.name) ?? 0) + 1;
      destroyCalls.set(obj.name, n);
      const err = opts.destroyScript?.(obj, n);
      host.calls.push(`destroy ${obj.kind} ${obj.name}`);
      if (err === 'hang') await new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true }));
      else if (err) throw err;
      // only an object carrying the owned name, or exactly the recorded id, is ours
      const o = host.objects.get(obj.name);
      if (!o || !o.owned || o.kind !== obj.kind || (obj.id !== null && obj.id !== o.id)) return 'absent';
      host.objects.delete(obj.name);
      return 'removed';
    },
    async find(ref) {
      host.calls.push(`find ${ref.kind} ${ref.name}`);
      const o = host.objects.get(ref.name);
      return o && o.owned && o.kind === ref.kind ? toCreated(o) : null;
    },
    isTransient: (err) => err instanceof FakeTransient,
    close: async () => undefined,
  };
}

export const TESTS: WorkloadTest[] = [{ id: 'rnd-4k-q1t1-read', pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 }];

export const PROFILE: WorkloadProfile = {
  name: 'quick',
  description: '',
  tests: TESTS,
  fileSizeBytes: 1 << 20,
  runtimeSec: 1,
  rampSec: 0,
  passes: 1,
  warmupPass: false,
  intervalSec: 0,
  direct: true,
  aggregate: 'max',
};

/** A workload endpoint that "measures" instantly and writes its raw output through onRaw. */
export function fakeWorkload(opts: { onTest?: (permutationRun: number) => void } = {}): WorkloadEndpoint & { runs: number } {
  const w = {
    tool: 'fio' as const,
    runs: 0,
    connect: async () => ({ target: 'guest', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
    runTest: async (_r: unknown, test: WorkloadTest, _p: WorkloadProfile, o: { onRaw: (t: WorkloadTest, pass: number, raw: string) => Promise<string | null> }) => {
      w.runs++;
      opts.onTest?.(w.runs);
      const rawPath = await o.onRaw(test, 1, '{"fio version":"fio-3.33"}');
      return { test, toolVersion: 'fio-3.33', rawPath, passes: 1, iops: 1000, bytesPerSecond: 4_096_000, latencyUs: { mean: 1, p50: 1, p95: 1, p99: 1, p999: 1 }, cpuPercent: null, representativePass: 0 };
    },
  };
  return w;
}

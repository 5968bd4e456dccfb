// The test file of a fio guest that provisions nothing (local, ssh) as an object the run creates:
// a plan step marks it (test-file-mark.ts) before the workload's pre-fill creates it, the ledger
// lists it, teardown removes it (kept with --keep), `cleanup` removes a leftover one and `status`
// shows it — each only while the mark of that permutation is beside it, read on the guest at that
// moment. A file already at the path that carries no mark of storsweep is refused before anything
// is written there, unless `--confirm-destroy` names its path: then it is marked and handled as ours.
import { z } from 'zod';
import { InternalError, RemoteCommandFailed, UnsafeOperation } from '../errors.ts';
import type { CreatedObject, OwnedObjectRef, PlannedStep, Provider, ProviderContext, ProviderName, TestFileCheck } from '../contract/provider.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { connectionLost } from '../ssh/connection-lost.ts';
import { linuxTestPathProblem, rawTestTarget } from '../workloads/test-target.ts';
import { claimCommand, lookCommand, markLine, markPathOf, MARK_OPERATION, parseLook, parseRemove, removeCommand, TEST_FILE_KIND, type TestFileSeen } from './test-file-mark.ts';

/** The marking step's arguments: the test file and its mark. */
export const markStepSchema = z.strictObject({ path: z.string().min(1), mark: z.string().min(1) });

/** The step that marks `testFile` for a permutation; none for a raw device (its workload step is confirmed instead). */
export function testFileSteps(provider: ProviderName, testFile: string, prefix: string): PlannedStep[] {
  if (rawTestTarget(testFile, 'fio') !== undefined) return [];
  return [
    {
      step: TEST_FILE_KIND,
      provider,
      operation: MARK_OPERATION,
      arguments: { path: testFile, mark: markPathOf(testFile) },
      destructive: false,
      creates: { kind: TEST_FILE_KIND, name: `${prefix}-testfile` },
    },
  ];
}

/**
 * Why a file found at the test file's path is refused, with what the user can do; `confirm`: what
 * --confirm-destroy must then name (everything the run destroys; default this file).
 */
export function foreignMessage(where: string, testFile: string, found: string, confirm = testFile): string {
  return `${where}: the test file ${testFile} exists and storsweep did not create it (${found}); a run would overwrite it with random data and remove it afterwards. Nothing was written. Point testFile elsewhere, remove the file, or confirm with --confirm-destroy ${confirm}`;
}

export async function lookAt(runner: CommandRunner, testFile: string): Promise<TestFileSeen> {
  const r = await runner.run(lookCommand(testFile));
  if (r.exitCode !== 0) throw new RemoteCommandFailed({ host: runner.target, what: `look at the test file ${testFile}`, command: r.command, exitCode: r.exitCode, stderr: r.stderr, reason: 'exit' });
  return parseLook(r.stdout, testFile);
}

/** The composition's read-only look at its test file (run start, validate): connects, looks, closes. */
export function testFileCheck(open: () => Promise<CommandRunner>, testFile: string, o: { local: boolean; key: 'testFile' | 'workdir' }): TestFileCheck | undefined {
  if (rawTestTarget(testFile, 'fio') !== undefined) return undefined;
  return {
    path: testFile,
    ...o,
    async look() {
      const runner = await open();
      try {
        const seen = await lookAt(runner, testFile);
        return seen.kind === 'foreign' ? { path: testFile, where: runner.target, found: seen.found } : null;
      } finally {
        await runner.close().catch(() => undefined);
      }
    },
  };
}

/** A path recorded in a ledger row or a plan, checked before it is used on the guest. */
function recordedPath(v: unknown, what: string): string {
  if (typeof v !== 'string' || linuxTestPathProblem(v) !== null || rawTestTarget(v, 'fio') !== undefined) {
    throw new UnsafeOperation(`${what}: ${JSON.stringify(v)} is not a test file path storsweep writes; left alone`, { operation: 'test file', target: String(v) });
  }
  return v;
}

/**
 * The Provider of a local or ssh target: it has one kind of object, the test file `testFile`
 * (the inventory's). `open` connects to the guest (this machine, or SSH); one connection is kept
 * and made again after a loss.
 */
export function testFileProvider(name: ProviderName, open: () => Promise<CommandRunner>, testFile: string): Provider {
  let runner: Promise<CommandRunner> | null = null;
  const onGuest = async <T>(fn: (r: CommandRunner) => Promise<T>): Promise<T> => {
    const r = await (runner ??= open().catch((err: unknown) => {
      runner = null;
      throw err;
    }));
    try {
      return await fn(r);
    } catch (err) {
      if (connectionLost(err)) {
        runner = null;
        await r.close().catch(() => undefined);
      }
      throw err;
    }
  };
  const created = (ref: OwnedObjectRef, path: string, where: string): CreatedObject => ({ ...ref, provider: name, id: path, data: { path, where } });
  return {
    name,
    isTransient: connectionLost,
    async apply(step: PlannedStep, ctx: ProviderContext): Promise<CreatedObject | null> {
      if (step.operation !== MARK_OPERATION || !step.creates) throw new InternalError(`${name} has no step ${step.step} (${step.operation})`);
      const path = recordedPath(step.arguments.path, 'the plan\'s test file');
      // the plan says where; the inventory (checked against the run's on resume) must say the same
      if (path !== testFile) throw new UnsafeOperation(`the plan's test file ${path} is not the inventory's (${testFile}); nothing was written`, { operation: MARK_OPERATION, target: path });
      const ref = step.creates;
      return onGuest(async (r) => {
        const seen = await lookAt(r, path);
        if (seen.kind === 'foreign' && !(ctx.confirmedDestroy ?? []).includes(path)) {
          throw new UnsafeOperation(foreignMessage(r.target, path, seen.found), { operation: MARK_OPERATION, target: path });
        }
        await ctx.sent({ path, where: r.target, found: seen.kind, ...(seen.kind === 'ours' ? { tookOverFrom: seen.owner } : {}) });
        const c = await r.run(claimCommand(path, markLine(ref.name, path), seen));
        if (c.exitCode === 3) throw new UnsafeOperation(`${r.target}: the test file ${path} changed while it was being marked; nothing was written`, { operation: MARK_OPERATION, target: path });
        if (c.exitCode !== 0) throw new RemoteCommandFailed({ host: r.target, what: `mark the test file ${path}`, command: c.command, exitCode: c.exitCode, stderr: c.stderr, reason: 'exit' });
        if (seen.kind === 'ours' && !seen.owner.startsWith(`ss-${ctx.runId}-`)) ctx.log(`${r.target}: took over the test file ${path}, left by ${seen.owner}`);
        if (seen.kind === 'foreign') ctx.log(`${r.target}: the test file ${path} (${seen.found}) is overwritten as confirmed (--confirm-destroy)`);
        return created(ref, path, r.target);
      });
    },
    async destroy(obj, ctx) {
      const path = recordedPath(obj.data.path ?? obj.id, `${obj.kind} ${obj.name}`);
      return onGuest(async (r) => {
        const c = await r.run(removeCommand(path, markLine(obj.name, path)));
        const out = c.exitCode === 0 ? parseRemove(c.stdout) : null;
        if (!out) throw new RemoteCommandFailed({ host: r.target, what: `remove the test file ${path}`, command: c.command, exitCode: c.exitCode, stderr: c.stderr, reason: c.exitCode === 0 ? 'output' : 'exit', ...(c.exitCode === 0 ? { detail: 'printed no outcome' } : {}) });
        if (out.kind === 'removed' || out.kind === 'mark-only') return 'removed';
        const why = out.kind === 'no-mark' ? `no ${markPathOf(path)} beside it` : out.kind === 'other-mark' ? `its mark names another owner (${JSON.stringify(out.mark.slice(0, 200))})` : 'it is not a regular file';
        ctx.log(`${r.target}: ${path} left alone: ${why}, so it is not this run's test file`);
        return 'absent';
      });
    },
    async find(ref, sent) {
      const path = recordedPath(sent?.path ?? testFile, `${ref.kind} ${ref.name}`);
      return onGuest(async (r) => {
        const seen = await lookAt(r, path);
        return seen.kind === 'ours' && seen.owner === ref.name ? created(ref, path, r.target) : null;
      });
    },
    async close() {
      const r = runner;
      runner = null;
      await (await r?.catch(() => null))?.close().catch(() => undefined);
    },
  };
}

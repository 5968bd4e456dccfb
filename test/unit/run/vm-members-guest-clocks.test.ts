// Each VM's start in a vm.count pass is read by its own guest's clock (fio's timestamp_ms). Two
// guests whose clocks disagree by 3 s showed 3 s of start skew that was not there: the test ran
// again, and its aggregate said startSkewExceeded although the VMs had started together (or a real
// skew was hidden by the opposite offset). run/vm-members.ts reads each guest's clock against this
// machine's before the passes (guestClock) and puts every start on one clock. Driven through
// runMemberWorkload with guests that answer `date +%s%N` and print fio's JSON by their own clocks.
import { describe, expect, it } from 'vitest';
import type { CommandRunner } from '../../../src/contract/command-runner.ts';
import { testIdentity, type ResultRecord } from '../../../src/results/record.ts';
import { guestClock, runMemberWorkload, type MemberRunContext } from '../../../src/run/vm-members.ts';

const TEST = testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 4, threads: 1, readPercent: 100 });

/** A guest whose clock runs `offsetMs` ahead of this machine's. */
function guest(vm: string, offsetMs: number): CommandRunner {
  return {
    target: `tools://${vm}`,
    run: async (command: string) => ({ command, stdout: `${BigInt(Date.now() + offsetMs) * 1_000_000n}\n`, stderr: '', exitCode: 0, durationMs: 1 }),
    close: async () => undefined,
  };
}

function study(offsets: Record<string, number>) {
  const runs: string[] = [];
  const records: ResultRecord[] = [];
  const ctx = {
    perm: { permutationId: 'p-vm2', repetitions: 1 },
    profile: { tests: [{ id: TEST.id }], intervalSec: 0, runtimeSec: 1, prefill: false },
    store: { appendJournal: async () => undefined, addRepetition: async (_p: string, _r: number, recs: ResultRecord[]) => void records.push(...recs) },
    workload: {
      tool: 'fio',
      connectTo: async (vm: string) => guest(vm, offsets[vm]!),
      // fio in the guest: starts when the barrier lets it, prints timestamp_ms by the guest's clock
      runTest: async (runner: CommandRunner, test: { id: string }, _p: unknown, o: { scored: { start(): Promise<void>; end(): Promise<void> }; onRaw: (t: unknown, pass: number, raw: string) => Promise<unknown> }) => {
        runs.push(runner.target);
        await o.scored.start();
        const guestNow = Date.now() + offsets[runner.target.slice('tools://'.length)]!;
        await o.onRaw(test, 1, JSON.stringify({ 'fio version': 'fio-3.33', timestamp_ms: guestNow + 50, jobs: [{ jobname: 'a', job_runtime: 50 }] }));
        await o.scored.end();
        return {};
      },
    },
    signal: new AbortController().signal,
    owner: 'storsweep-test',
    emit: () => undefined,
    sleep: async () => undefined,
    storeRaw: async () => null,
    onStopped: () => undefined,
    makeRecord: (rep: number): ResultRecord => ({
      runId: 'r', permutationId: 'p-vm2', axes: { 'vm.count': 2 }, repetition: rep, test: TEST, iops: 1000, bytesPerSecond: 4_096_000,
      latencyUs: { mean: 100, p50: 90, p95: 200, p99: 300, p999: 400 }, cpuPercent: null, tool: { name: 'fio', version: 'fio-3.33' }, rawPath: null, metadata: {},
    }),
  } as unknown as MemberRunContext;
  const targets = Object.keys(offsets).map((vm, i) => ({ member: { index: i + 1, vm }, facts: {} })) as never;
  return { run: () => runMemberWorkload(ctx, targets, { first: 1, last: 1 }), runs, records };
}

describe('the start skew of VMs whose guest clocks disagree', () => {
  it('VMs started together, one guest 3 s ahead: no skew over the bound, no second attempt', async () => {
    const s = study({ 'ss-vm1': 0, 'ss-vm2': 3000 });
    await s.run();
    const agg = s.records.find((r) => r.vm?.role === 'aggregate')!;
    expect(agg.vm!.startSkewMs!).toBeLessThan(500);
    expect(agg.metadata?.['startSkewExceeded']).toBeUndefined();
    expect(typeof agg.metadata?.['startSkewClockUncertaintyMs']).toBe('number');
    expect(s.runs).toHaveLength(2);
  });

  it('guestClock: the offset from the guest\'s date against this machine\'s midpoint', async () => {
    const c = await guestClock(guest('x', -7000));
    expect(Math.abs(c!.offsetMs + 7000)).toBeLessThan(200);
    expect(c!.uncertaintyMs).toBeGreaterThanOrEqual(0);
    const busybox = { target: 'b', run: async () => ({ command: '', stdout: '1796521409N\n', stderr: '', exitCode: 0, durationMs: 1 }) } as unknown as CommandRunner;
    expect(await guestClock(busybox)).toBeNull();
  });
});

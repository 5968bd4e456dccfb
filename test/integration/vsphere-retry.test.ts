// One retry policy, proven on the vcsim harness with injected faults: the round-trip decorator
// (src/providers/vsphere/retrying.ts) replays what cannot act twice and nothing else; the step
// level (Provider.isTransient) gets only what the decorator could not replay; a client-side
// conclusion is never a server fault; and a run's teardown and `storsweep cleanup` remove through
// one routine — the journal shows the same retries and the same deadline for both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import type { RunPlan } from '../../src/contract/plan.ts';
import { VsphereClient, type MoRef } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { TaskFailed, VsphereClientError, VsphereFault } from '../../src/providers/vsphere/fault.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { isTransient } from '../../src/providers/vsphere/retrying.ts';
import { SoapTransportError } from '../../src/providers/vsphere/soap.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import { ResultStore, type RunMeta } from '../../src/results/store.ts';
import { executeRun, type WorkloadEndpoint } from '../../src/run/executor.ts';
import { cleanupLedger } from '../../src/run/teardown.ts';
import type { WorkloadProfile, WorkloadTest } from '../../src/workloads/spec.ts';

let sim: VcsimHandle;
let client: VsphereClient;
let host: MoRef;
let luns: string[];
const retried: string[] = [];

beforeAll(async () => {
  sim = await startVcsim();
  client = await VsphereClient.connect({
    url: sim.url,
    username: sim.username,
    password: sim.password,
    thumbprint: sim.thumbprint,
    roundTripRetry: { retries: 3, minTimeoutMs: 10, maxTimeoutMs: 40 },
    onRetry: (i) => retried.push(`${i.method} ${i.attempt}`),
  });
  host = await client.findHost('DC0_H0');
  luns = (await client.listVmfsCandidateDisks(host)).map((d) => d.canonicalName).sort();
});

afterAll(async () => {
  await client?.logout();
  await sim?.stop();
});

beforeEach(async () => {
  await sim.control.reset();
  retried.length = 0;
});

const calls = async (method: string) => (await sim.control.calls())[method] ?? 0;

describe('the round-trip decorator', () => {
  it('a busy fault (TaskInProgress) is replayed until the call goes through; one datastore', async () => {
    await sim.control.fault({ method: 'CreateVmfsDatastore', fault: 'TaskInProgress', message: 'injected: busy', count: 2 });
    const ds = await client.createVmfsDatastore(host, { deviceCanonicalName: luns[0]!, vmfsMajorVersion: 6, name: 'ss-rt-busy', allowedDevices: [luns[0]!] });
    expect(await calls('CreateVmfsDatastore')).toBe(3);
    expect(retried).toEqual(['CreateVmfsDatastore 2', 'CreateVmfsDatastore 3']);
    expect(await client.removeDatastore(host, ds)).toBe('removed');
    expect(await client.findDatastoreOrNone('ss-rt-busy')).toBeUndefined();
  });

  it('a fault that is not "busy" (HostConfigFault) is not replayed, nor transient for the step; nothing created', async () => {
    await sim.control.fault({ method: 'CreateVmfsDatastore', fault: 'HostConfigFault', message: 'injected: in use', count: 1 });
    const err = await client.createVmfsDatastore(host, { deviceCanonicalName: luns[0]!, vmfsMajorVersion: 6, name: 'ss-rt-hcf', allowedDevices: [luns[0]!] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VsphereFault);
    expect((err as VsphereFault).faultName).toBe('HostConfigFault');
    expect(isTransient(err)).toBe(false);
    expect(await calls('CreateVmfsDatastore')).toBe(1);
    expect(retried).toEqual([]);
    expect(await client.findDatastoreOrNone('ss-rt-hcf')).toBeUndefined();
  });

  it('a read whose connection drops is replayed', async () => {
    await sim.control.drop({ method: 'RetrievePropertiesEx', when: 'before', count: 1 });
    expect((await client.list('Datacenter')).map((d) => d.name)).toEqual(['DC0']);
    expect(retried).toEqual(['RetrievePropertiesEx 2']);
  });

  it('a create whose connection drops after it ran is not replayed (it may have acted): transient for the step, which looks first', async () => {
    await sim.control.drop({ method: 'CreateVmfsDatastore', when: 'after', count: 1 });
    const err = await client.createVmfsDatastore(host, { deviceCanonicalName: luns[0]!, vmfsMajorVersion: 6, name: 'ss-rt-drop', allowedDevices: [luns[0]!] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SoapTransportError);
    expect(isTransient(err)).toBe(true);
    expect(await calls('CreateVmfsDatastore')).toBe(1);
    const ds = await client.findDatastoreOrNone('ss-rt-drop');
    expect(ds).toBeDefined();
    await client.removeDatastore(host, ds!);
  });

  it('a task that ends busy is not the round-tripper\'s to replay; it is transient for the step', async () => {
    await sim.control.fault({ method: 'ReconfigVM_Task', fault: 'TaskInProgress', message: 'injected: busy task', asTask: true, count: 1 });
    const vm = await client.findVm('DC0_H0_VM0');
    const err = await client.createDisk(vm, { datastore: 'LocalDS_0', fileName: 'ss-rt-task.vmdk', sizeBytes: 1 << 20, format: 'thin' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailed);
    expect(isTransient(err)).toBe(true);
    expect(await calls('ReconfigVM_Task')).toBe(1);
  });

  it('"not found in a listing" is our conclusion, never a server fault, and never transient', async () => {
    const err = await client.findVm('no-such-vm').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VsphereClientError);
    expect(err).not.toBeInstanceOf(VsphereFault);
    expect((err as VsphereClientError).reason).toBe('not-found');
    expect(isTransient(err)).toBe(false);
  });
});

describe('teardown and cleanup: one routine', () => {
  const TEST: WorkloadTest = { id: 'rnd-4k-q1t1-read', pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent: 100 };
  const PROFILE: WorkloadProfile = { name: 'quick', description: '', tests: [TEST], fileSizeBytes: 1 << 20, runtimeSec: 1, rampSec: 0, passes: 1, warmupPass: false, intervalSec: 0, direct: true, aggregate: 'max' };
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-vs-retry-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const target = (): VsphereTargetConfig => ({
    vcenter: { url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint },
    datacenter: 'DC0',
    host: 'DC0_H0',
    vm: 'DC0_H0_VM0',
    vmfsDevice: luns[1]!,
    allowedDevices: [luns[1]!],
  });

  function planFor(runId: string): RunPlan {
    const axes = { 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 };
    // no guest here: the guest-disk step is guest-disk.test.ts's
    const steps = [...planVsphereSteps(axes, target(), { prefix: `ss-${runId}-p1` }).filter((s) => s.step !== 'guest-disk'), { step: 'workload', provider: 'local' as const, operation: 'fio', arguments: {}, destructive: false }];
    return { version: 1, runId, playbook: 'pb', target: 't', provider: 'vsphere', axes: [], baseline: null, profiles: { quick: PROFILE }, permutations: [{ index: 0, permutationId: 'p1', axes, workload: 'quick', steps, repetitions: 1, estimateSec: 1 }], totalEstimateSec: 1 };
  }

  /** The faults every removal meets: the disk's detach task ends busy once; RemoveDatastore hangs 2.5 s. */
  const injectTeardownFaults = async () => {
    await sim.control.fault({ method: 'ReconfigVM_Task', fault: 'TaskInProgress', message: 'injected: busy', asTask: true, count: 1 });
    await sim.control.delay('RemoveDatastore', 2500);
  };

  function workload(beforeTeardown: () => Promise<void>): WorkloadEndpoint {
    return {
      tool: 'fio',
      connect: async () => ({ target: 'guest', run: async () => ({ command: '', exitCode: 0, stdout: '', stderr: '' }), close: async () => undefined }) as never,
      runTest: async (_r, test) => {
        await beforeTeardown();
        return { test, toolVersion: 'fio-3.33', rawPath: null, passes: 1, iops: 1, bytesPerSecond: 1, latencyUs: { mean: 1, p50: 1, p95: 1, p99: 1, p999: 1 }, cpuPercent: null, representativePass: 0 };
      },
    };
  }

  const removalEvents = (store: ResultStore, prefix: string) =>
    store
      .journal()
      .filter((j) => /^(disk|datastore):/.test(j.step) && j.event.startsWith(prefix) && !['intent', 'sent', 'created'].includes(j.event) && !j.event.endsWith('note'))
      .map((j) => `${j.step.split(':')[0]} ${j.event.slice(prefix.length)}${j.event.endsWith('remove-failed') ? ` ${String((j.detail as { reason?: string }).reason).replace(/.*(timed out after \d+ ms).*/, '$1')}` : ''}`);

  const expected = ['disk retry', 'disk removed', 'datastore remove-failed timed out after 1000 ms'];
  const meta = (runId: string): RunMeta => ({ runId, playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [], timeouts: { stepSec: 1 } });
  const retry = { retries: 2, minTimeoutMs: 10, maxTimeoutMs: 20 };

  it("a run's teardown: the busy detach is retried, the hung removal fails at the step deadline", async () => {
    const plan = planFor('rtt');
    const store = ResultStore.create(path.join(dir, 'rtt'), meta('rtt'), plan);
    const provider = createVsphereProvider(target());
    try {
      const summary = await executeRun({ store, plan, provider, workload: workload(injectTeardownFaults), signal: new AbortController().signal, stepTimeoutMs: 1000, retry });
      expect(summary.done).toBe(1);
      expect(removalEvents(store, '')).toEqual(expected);
    } finally {
      await sim.control.delay('RemoveDatastore', 0);
      // what the timed-out removal left is cleaned up (the held call may still have gone through)
      expect(await cleanupLedger(store, async () => provider, () => undefined)).toBe(0);
      await provider.close();
      store.close();
    }
    expect(await client.findDatastoreOrNone('ss-rtt-p1-ds')).toBeUndefined();
  });

  it('`storsweep cleanup` of a --keep run: the same retries, the same deadline, the same journal', async () => {
    const plan = planFor('rtc');
    const store = ResultStore.create(path.join(dir, 'rtc'), meta('rtc'), plan);
    const provider = createVsphereProvider(target());
    try {
      await executeRun({ store, plan, provider, workload: workload(async () => undefined), signal: new AbortController().signal, keep: true, stepTimeoutMs: 1000, retry });
      expect(await client.findDatastoreOrNone('ss-rtc-p1-ds')).toBeDefined();
      await injectTeardownFaults();
      const lines: string[] = [];
      expect(await cleanupLedger(store, async () => provider, (l) => lines.push(l), { retry, timeoutMs: store.meta().timeouts!.stepSec! * 1000 })).toBe(1);
      expect(removalEvents(store, 'cleanup-')).toEqual(expected);
      expect(lines.filter((l) => l.startsWith('retrying'))).toEqual([expect.stringMatching(/^retrying removal of disk ss-rtc-p1-disk \(attempt 2\): .*TaskInProgress/)]);
      expect(lines).toContain('removed: disk ss-rtc-p1-disk');
    } finally {
      await sim.control.delay('RemoveDatastore', 0);
      expect(await cleanupLedger(store, async () => provider, () => undefined)).toBe(0);
      await provider.close();
      store.close();
    }
    expect(await client.findDatastoreOrNone('ss-rtc-p1-ds')).toBeUndefined();
  });
});

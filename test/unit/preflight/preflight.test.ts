import { describe, expect, it } from 'vitest';
import type { PlannedStep } from '../../../src/contract/provider.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import type { JournalEntry } from '../../../src/results/port.ts';
import { placeDemands } from '../../../src/preflight/capacity.ts';
import { canaryPermutations, readCanaryJournal } from '../../../src/preflight/canary.ts';
import { preflightNotice } from '../../../src/preflight/stored.ts';
import { esxiSpaceNeeds, parseAvail } from '../../../src/providers/esxi-shell/preflight.ts';
import { privilegesNeeded, vsphereSpaceNeeds } from '../../../src/providers/vsphere/preflight.ts';

const GiB = 1024 ** 3;
const step = (operation: string, args: Record<string, unknown>, s = operation): PlannedStep => ({ step: s, provider: 'vsphere', operation, arguments: args, destructive: false });

describe('what a permutation puts where', () => {
  it('vSphere: a thick disk its size on the LUN its datastore formats; a thin one what is written; an existing datastore by name; NFS left out', () => {
    const fmt = step('CreateVmfsDatastore', { name: 'ds1', device: 'naa.1' });
    expect(vsphereSpaceNeeds([fmt, step('ReconfigVM_Task', { deviceChange: 'add+create', backing: 'flat', format: 'eagerzeroedthick', datastore: 'ds1', sizeGb: 4, sizeBytes: 4 * GiB })], 16 << 20)).toEqual([{ place: { kind: 'lun', device: 'naa.1' }, bytes: 4 * GiB, what: '4 GiB eagerzeroedthick disk' }]);
    expect(vsphereSpaceNeeds([step('ReconfigVM_Task', { deviceChange: 'add+create', backing: 'flat', format: 'thin', datastore: 'LocalDS_0', sizeGb: 100, sizeBytes: 100 * GiB })], 16 << 20)).toEqual([{ place: { kind: 'datastore', name: 'LocalDS_0' }, bytes: 16 << 20, what: '100 GiB thin disk' }]);
    expect(vsphereSpaceNeeds([step('CreateNasDatastore', { name: 'n' }), step('ReconfigVM_Task', { deviceChange: 'add+create', backing: 'flat', format: 'lazyzeroedthick', datastore: 'n', sizeGb: 9, sizeBytes: 9 * GiB })], 0)).toEqual([]);
  });

  it('ESXi shell: vmkfstools -c on the volume its vmkfstools -C made is on that LUN', () => {
    const steps = [step('vmkfstools -C', { device: 'naa.2', label: 'L' }), step('vmkfstools -c', { path: '/vmfs/volumes/L/x.vmdk', sizeGb: 4000, format: 'eagerzeroedthick' }), step('vmkfstools -c', { path: '/vmfs/volumes/datastore1/y.vmdk', sizeGb: 2, format: 'zeroedthick' })];
    expect(esxiSpaceNeeds(steps, 0)).toEqual([
      { place: { kind: 'lun', device: 'naa.2' }, bytes: 4000 * GiB, what: '4000 GiB eagerzeroedthick disk' },
      { place: { kind: 'datastore', name: 'datastore1' }, bytes: 2 * GiB, what: '2 GiB zeroedthick disk' },
    ]);
  });

  it('vmkfstools -P: the free bytes', () => {
    expect(parseAvail('VMFS-6.82 file system spanning 1 partitions.\nCapacity 99857989632 (95232 file blocks * 1048576), 38575538176 (36788 blocks) avail, max supported file size 69201586814976\n')).toBe(38575538176);
    expect(parseAvail('nothing')).toBeNull();
  });
});

const perm = (id: string, axes: Record<string, unknown>, steps: PlannedStep[], index = 0) => ({ index, permutationId: id, axes, workload: 'w', steps, repetitions: 3, estimateSec: 10 }) as RunPlan['permutations'][number];
const plan = (perms: RunPlan['permutations']): RunPlan => ({ version: 1, runId: 'r', playbook: 'pb', target: 't', provider: 'vsphere', axes: [], baseline: null, profiles: { w: { fileSizeBytes: 1 << 20 } as never }, permutations: perms, totalEstimateSec: 30 });

describe('the largest demand per place', () => {
  it("adds a permutation's disks on one place and keeps the largest permutation", () => {
    const fmt = step('CreateVmfsDatastore', { name: 'd', device: 'naa.1' });
    const disk = (gb: number) => step('ReconfigVM_Task', { deviceChange: 'add+create', backing: 'flat', format: 'eagerzeroedthick', datastore: 'd', sizeGb: gb, sizeBytes: gb * GiB });
    const p = plan([perm('p1', {}, [fmt, disk(4)]), perm('p2', {}, [fmt, disk(8), disk(2)])]);
    const comps = new Map([['t', { preflight: { spaceNeeds: vsphereSpaceNeeds, spaceOf: async () => [] } }]]);
    expect(placeDemands(p, comps)).toEqual([{ target: 't', place: { kind: 'lun', device: 'naa.1' }, bytes: 10 * GiB, permutationId: 'p2', what: ['8 GiB eagerzeroedthick disk', '2 GiB eagerzeroedthick disk'] }]);
  });
});

describe('privileges the steps need', () => {
  it('names the object each is checked on: the host, the VM, the existing datastore or the datacenter', () => {
    const o = { host: { type: 'HostSystem', value: 'h' }, vm: { type: 'VirtualMachine', value: 'v' }, datacenter: { type: 'Datacenter', value: 'dc' } };
    const steps = [step('CreateVmfsDatastore', { host: 'H', name: 'new' }), step('ReconfigVM_Task', { vm: 'V', deviceChange: 'add+create', backing: 'flat', datastore: 'new' })];
    const got = privilegesNeeded(steps, o, true).map((p) => `${p.priv}@${p.on.value}`);
    expect(got).toEqual(['Host.Config.Storage@h', 'VirtualMachine.Config.AddNewDisk@v', 'VirtualMachine.Config.RemoveDisk@v', 'Datastore.AllocateSpace@dc', 'VirtualMachine.GuestOperations.Execute@v', 'VirtualMachine.GuestOperations.Modify@v', 'VirtualMachine.GuestOperations.Query@v']);
    const onExisting = privilegesNeeded([step('ReconfigVM_Task', { vm: 'V', deviceChange: 'add+create', backing: 'flat', datastore: 'ds0' })], { ...o, datastore: { ref: { type: 'Datastore', value: 'ds-9' }, name: 'ds0' } }, false);
    expect(onExisting.find((p) => p.priv === 'Datastore.AllocateSpace')?.on.value).toBe('ds-9');
  });
});

describe('the canary', () => {
  it('keeps the first permutation of each datastore kind, disk format and controller, one repetition each', () => {
    const p = plan([perm('a', { 'datastore.kind': 'vmfs6', 'datastore.blockSizeKb': 64, 'disk.format': 'thin' }, []), perm('b', { 'datastore.kind': 'vmfs6', 'datastore.blockSizeKb': 1024, 'disk.format': 'thin' }, [], 1), perm('c', { 'datastore.kind': 'vmfs5', 'disk.format': 'thin' }, [], 2)]);
    const c = canaryPermutations(p);
    expect(c.permutations.map((x) => [x.permutationId, x.index, x.repetitions])).toEqual([['a', 0, 1], ['c', 1, 1]]);
  });

  it('reads the identity found, the provisioning and the teardown times from the journal', () => {
    const j = (seq: number, t: number, step: string, event: string, detail: unknown = null): JournalEntry => ({ seq, at: new Date(Date.UTC(2026, 0, 1, 0, 0, t)).toISOString(), permutationId: 'p', step, event, detail });
    const journal = [j(1, 0, 'permutation', 'start'), j(2, 1, 'disk:ss-x', 'intent'), j(3, 2, 'disk:ss-x', 'created'), j(4, 3, 'measure', 'found', { identity: 'wwn-0x6000c291', device: '/dev/sdb' }), j(5, 3, 'guest-disk', 'done'), j(6, 5, 'prefill', 'filled'), j(7, 20, 'repetition-1', 'recorded'), j(8, 22, 'disk:ss-x', 'removed'), j(9, 22, 'permutation', 'done')];
    expect(readCanaryJournal('p', journal)).toEqual({ identity: 'wwn-0x6000c291', device: '/dev/sdb', provisionSec: 3, teardownSec: 2 });
  });
});

describe("run's note of the stored preflight", () => {
  it('says its age and each ✗, and nothing when none was kept', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const lines = preflightNotice({ playbook: 'pb', inventory: 'i', at, ok: false, targets: [{ target: 't', checks: [{ check: 'guest fio', status: 'fail', detail: 'missing' }, { check: 'x', status: 'ok', detail: '' }] }] }, Date.parse(at) + 30 * 60000);
    expect(lines).toEqual([`note: the last preflight of this playbook ran 30 min ago (${at}): 1 check(s) failed`, '  ✗ t: guest fio: missing']);
    expect(preflightNotice(null)).toEqual([]);
  });
});

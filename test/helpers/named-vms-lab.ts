// The embedded lab for vm.count on the VMs an inventory names (`scaleVms`: the lab's target
// lab-vcenter-named-vms, three scale VMs), for one file: the lab (useEmbeddedLab), each scale VM as
// pyvmomi reads it before anything runs, and what "left as it was" means — read from outside our
// code: the harness's call log (no clone, power operation or destroy; every ReconfigVM_Task adds or
// removes one disk of ours and nothing else) and pyvmomi (devices, power, Tools, configuration
// unchanged; no disk of ours). `playbook(runtimeSec)`: vm.count [1, 2] on that target.
import { beforeAll, expect } from 'vitest';
import { LAB_SCALE_VMS } from '../../src/lab/lab.ts';
import { useEmbeddedLab, type EmbeddedLab } from './embedded-lab.ts';
import { probe, type ProbeResult } from './pyvmomi-probe.ts';
import { quickSettings } from './quick-settings.ts';

/** a measured fio pass as the guest lists it (not the pre-fill's job, not `fio --version`) */
export const FIO_PASS = /(^|[\s/'"])fio\s+--name=(?!storsweep-prefill)/;
export const isScaleVm = (vm: string) => (LAB_SCALE_VMS as readonly string[]).includes(vm);

export const namedVmsPlaybook = (runtimeSec: number) =>
  [
    'name: vm-count-named',
    'target: lab-vcenter-named-vms',
    'matrix:',
    '  datastore: { kind: [existing] }',
    '  disk: { format: [thin], sizeGb: [1] }',
    '  vm: { count: [1, 2] }',
    '  workload: { profile: [lab-4k-read] }',
    'workloads:',
    '  lab-4k-read: { iometer: "4k 100% read 100% random" }',
    ...quickSettings({ fileSize: '16m', runtimeSec }),
  ].join('\n') + '\n';

export interface NamedVmsLab {
  lab: EmbeddedLab;
  /** each scale VM as pyvmomi reads it now */
  vmStates: () => Promise<Record<string, ProbeResult>>;
  /** the call log since the last reset: nothing done to a VM but disks of ours added and removed */
  expectOnlyOwnDisksTouched: () => Promise<void>;
  /** every scale VM exactly as before the file's first test (pyvmomi), no disk of ours on it */
  expectNamedVmsIntact: () => Promise<void>;
}

export function useNamedVmsLab(prefix: string): NamedVmsLab {
  const lab = useEmbeddedLab(prefix, { vcsim: true });
  let before: Record<string, ProbeResult> | undefined;
  const vmStates = async () => {
    const r = await probe(await lab.endpoint(), LAB_SCALE_VMS.map((vm) => ({ op: 'vm-state', vm })));
    return Object.fromEntries(LAB_SCALE_VMS.map((vm, i) => [vm, r[i]!]));
  };
  beforeAll(async () => {
    before = await vmStates();
    for (const vm of LAB_SCALE_VMS) expect(before[vm], vm).toMatchObject({ ok: true, powerState: 'poweredOn', toolsRunningStatus: 'guestToolsRunning' });
  }, 120_000);
  return {
    lab,
    vmStates,
    expectOnlyOwnDisksTouched: async () => {
      const log = await lab.control.log();
      expect(log.filter((c) => /^(CloneVM_Task|Destroy_Task|PowerOffVM_Task|PowerOnVM_Task|ResetVM_Task|SuspendVM_Task)$/.test(c.method))).toEqual([]);
      for (const c of log.filter((x) => x.method === 'ReconfigVM_Task')) {
        expect(c.devices ?? [], `${c.this}: a reconfiguration beyond one disk of ours`).toHaveLength(1);
        expect(c.devices![0]).toMatch(/^(add|remove) \[LocalDS_0\] ss-r[0-9a-z]+-p[0-9a-f]{12}-vm[12]-disk\.vmdk$/);
      }
    },
    expectNamedVmsIntact: async () => {
      const now = await vmStates();
      expect(now).toEqual(before);
      for (const vm of LAB_SCALE_VMS) expect(JSON.stringify(now[vm]!.devices)).not.toContain('ss-');
    },
  };
}

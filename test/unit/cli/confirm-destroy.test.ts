// `--confirm-destroy` names exactly what the plan's destructive steps destroy, as their planners
// name it (`destroys`): missing names are refused, and so are extra or unknown ones.
import { describe, expect, it } from 'vitest';
import { checkConfirmDestroy, checkResumeConfirmation, destroyedNames } from '../../../src/app/run/confirm-destroy.ts';
import { dryRunLines } from '../../../src/app/run/dry-run.ts';
import { UnsafeOperation } from '../../../src/errors.ts';
import { buildPlan, rawTestTarget } from '../../../src/plan/plan.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import type { Playbook } from '../../../src/config/playbook.ts';
import { planHypervSteps } from '../../../src/providers/hyperv/plan.ts';
import { planEsxiShellSteps } from '../../../src/providers/esxi-shell/plan.ts';
import type { PlannedStep } from '../../../src/contract/provider.ts';

const hyperv = { host: 'hv1', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }], passthroughDisk: 2 };
const NAA = 'naa.6000c2900000000000000000000000a1';
const esxi = { host: 'esx1', vmid: '1', vmfsDevice: NAA, allowedDevices: [NAA] };

function planOf(stepsPerPerm: PlannedStep[][]): RunPlan {
  return {
    version: 1,
    runId: 'r1',
    playbook: 'pb',
    target: 't',
    provider: 'hyperv',
    axes: [],
    baseline: null,
    profiles: {},
    permutations: stepsPerPerm.map((steps, index) => ({ index, permutationId: `p${index}`, axes: {}, workload: 'w', steps, repetitions: 1, estimateSec: 1 })),
    totalEstimateSec: 1,
  };
}

const passthrough = planOf([planHypervSteps({ 'disk.format': 'passthrough' }, hyperv, { base: 'ss-r1-p0' })]);

describe('--confirm-destroy', () => {
  it('Hyper-V pass-through names the host disk by number and serial; "yes" is refused, the exact name accepted', () => {
    expect(destroyedNames(passthrough)).toEqual(['disk2:S4EWNX0R123456']);
    expect(() => checkConfirmDestroy(passthrough, 'yes')).toThrow(UnsafeOperation);
    expect(() => checkConfirmDestroy(passthrough, 'yes')).toThrow(/disk2:S4EWNX0R123456 \(host disk 2, serial\/id S4EWNX0R123456\).*--confirm-destroy disk2:S4EWNX0R123456$/);
    expect(() => checkConfirmDestroy(passthrough, undefined)).toThrow(/destructive step\(s\) that destroy data on disk2:S4EWNX0R123456/);
    expect(() => checkConfirmDestroy(passthrough, 'disk2')).toThrow(UnsafeOperation);
    expect(checkConfirmDestroy(passthrough, 'disk2:S4EWNX0R123456')).toEqual(['disk2:S4EWNX0R123456']);
    expect(checkConfirmDestroy(passthrough, ' disk2:S4EWNX0R123456 ,')).toEqual(['disk2:S4EWNX0R123456']);
  });

  it('an extra or mistyped name is refused even when every required one is there', () => {
    expect(() => checkConfirmDestroy(passthrough, `disk2:S4EWNX0R123456,${NAA}`)).toThrow(new RegExp(`not destroyed by this plan: "${NAA}"`));
    const esx = planOf([planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, esxi, { base: 'ss-r1-p0' })]);
    expect(destroyedNames(esx)).toEqual([NAA]);
    expect(checkConfirmDestroy(esx, NAA)).toEqual([NAA]);
    expect(() => checkConfirmDestroy(esx, `${NAA},naa.6000c2900000000000000000000000a2`)).toThrow(UnsafeOperation);
    // a plan that destroys nothing takes no confirmation
    const safe = planOf([planHypervSteps({ 'disk.format': 'vhdx-fixed', 'volume.sizeGb': 100, 'disk.sizeGb': 1 }, hyperv, { base: 'ss-r1-p0' })]);
    expect(checkConfirmDestroy(safe, undefined)).toEqual([]);
    expect(() => checkConfirmDestroy(safe, NAA)).toThrow(/destroys nothing/);
  });

  it('a destructive step that names nothing is refused, never confirmed by any text', () => {
    const bad = planOf([[{ step: 'x', provider: 'vsphere', operation: 'Format', arguments: {}, destructive: true }]]);
    expect(() => checkConfirmDestroy(bad, 'anything')).toThrow(/names nothing it destroys/);
  });

  it('run --dry-run --json shows what each destructive step destroys', () => {
    const lines = dryRunLines(passthrough).map((l) => JSON.parse(l) as { step: string; destroys?: string[] });
    expect(lines.filter((l) => l.destroys).map((l) => [l.step, l.destroys])).toEqual([
      ['offline', ['disk2:S4EWNX0R123456']],
      ['attach', ['disk2:S4EWNX0R123456']],
      // the guest-disk step brings the same disk online and writable in the guest
      ['guest-disk', ['disk2:S4EWNX0R123456']],
    ]);
  });

  it('resume asks again, for exactly what is left to destroy: not what done permutations destroyed, not the set the run started with', () => {
    const NAA2 = 'naa.6000c2900000000000000000000000a2';
    const esx = (dev: string, p: number) => planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { ...esxi, vmfsDevice: dev, allowedDevices: [dev] }, { base: `ss-r1-p${p}` });
    const safe = planHypervSteps({ 'disk.format': 'vhdx-fixed', 'volume.sizeGb': 100, 'disk.sizeGb': 1 }, hyperv, { base: 'ss-r1-p2' });
    const plan = planOf([esx(NAA, 0), esx(NAA2, 1), safe]);
    const started = [NAA, NAA2];
    const none = () => false;
    // nothing done yet: all of it, even with the start's confirmation recorded
    expect(() => checkResumeConfirmation(plan, none, started, undefined)).toThrow(
      `the rest of this run (2 permutation(s) not done) destroys data on ${NAA}, ${NAA2}; the run was confirmed for ${NAA}, ${NAA2} when it started; confirm again with --confirm-destroy ${NAA},${NAA2}`,
    );
    expect(checkResumeConfirmation(plan, none, started, `${NAA2},${NAA}`)).toEqual([NAA, NAA2]);
    // p0 done: only NAA2 is left; the start's set is not what is left
    const p0done = (id: string) => id === 'p0';
    expect(() => checkResumeConfirmation(plan, p0done, started, `${NAA},${NAA2}`)).toThrow(`(not destroyed by what is left: "${NAA}")`);
    expect(() => checkResumeConfirmation(plan, p0done, started, undefined)).toThrow(`the rest of this run (1 permutation(s) not done) destroys data on ${NAA2}; the run was confirmed for`);
    expect(() => checkResumeConfirmation(plan, p0done, undefined, 'yes')).toThrow(`(not confirmed: ${NAA2}; not destroyed by what is left: "yes")`);
    expect(checkResumeConfirmation(plan, p0done, started, NAA2)).toEqual([NAA2]);
    // only the non-destructive permutation left: no confirmation, and one given is refused
    const destructiveDone = (id: string) => id !== 'p2';
    expect(checkResumeConfirmation(plan, destructiveDone, started, undefined)).toEqual([]);
    expect(() => checkResumeConfirmation(plan, destructiveDone, started, NAA)).toThrow(/what is left of this run destroys nothing, but --confirm-destroy names/);
    // a Hyper-V host disk is named in words too
    expect(() => checkResumeConfirmation(passthrough, none, undefined, undefined)).toThrow(/destroys data on disk2:S4EWNX0R123456 \(host disk 2, serial\/id S4EWNX0R123456\); confirm again with --confirm-destroy disk2:S4EWNX0R123456$/);
  });
});

describe('a raw device as the workload target is destructive', () => {
  it('recognizes guest block devices and diskspd physical drives, not files', () => {
    expect(rawTestTarget('/dev/sdb')).toBe('/dev/sdb');
    expect(rawTestTarget('#1', 'diskspd')).toBe('#1');
    expect(rawTestTarget('/data/storsweep-test.dat')).toBeUndefined();
    expect(rawTestTarget('/dev/shm/test.dat')).toBeUndefined();
    expect(rawTestTarget('T:\\storsweep.dat', 'diskspd')).toBeUndefined();
    expect(rawTestTarget(undefined)).toBeUndefined();
  });

  it('a fio path that hides where it leads counts as a device (validate refuses it first)', () => {
    // fio's cwd over SSH is the login's home: from /root, ../dev/sdz is /dev/sdz
    for (const p of ['../dev/sdz', '/proc/self/root/dev/sdz', '/dev/../dev/nvme0n1', 'dev/sdz', '/sys/block/sdz', '/data//x.dat', '/data/./x.dat']) expect(rawTestTarget(p), p).toBe(p);
    expect(rawTestTarget('/dev/shm')).toBeUndefined();
    expect(rawTestTarget('/device/x.dat')).toBeUndefined();
  });

  it('diskspd partitions (E:), physical drives (#N) and device paths (\\\\.\\…) are devices; file paths are not', () => {
    for (const p of ['E:', 'e:', '#0', '#12', '\\\\.\\PhysicalDrive1', '\\\\.\\E:', '\\\\?\\Volume{0b1c2d3e-0000-0000-0000-000000000000}', '\\??\\PhysicalDrive1']) {
      expect(rawTestTarget(p, 'diskspd'), p).toBe(p);
    }
    for (const p of ['E:\\bench\\t.dat', 'storsweep.dat', '\\\\server\\share\\t.dat']) expect(rawTestTarget(p, 'diskspd'), p).toBeUndefined();
  });

  it('a Hyper-V plan on E: or \\\\.\\PhysicalDrive1 is destructive and names it', () => {
    const pb = { name: 'pb', target: 't', repeat: 1, matrix: { workload: { profile: ['cdm5'] } } } as unknown as Playbook;
    for (const testFile of ['E:', '\\\\.\\PhysicalDrive1']) {
      const plan = buildPlan(pb, 't', { runId: 'r1', provider: 'hyperv', workloadTool: 'diskspd', workloadTarget: { testFile } });
      expect(plan.permutations[0]!.steps.at(-1)).toEqual(expect.objectContaining({ step: 'workload', destructive: true, destroys: [testFile] }));
      expect(() => checkConfirmDestroy(plan, undefined)).toThrow(UnsafeOperation);
      expect(checkConfirmDestroy(plan, testFile)).toEqual([testFile]);
    }
  });

  it('the workload step gets destructive=true and destroys=[target], so --confirm-destroy must name it', () => {
    const pb = { name: 'pb', target: 't', repeat: 1, matrix: { workload: { profile: ['cdm5'] } } } as unknown as Playbook;
    const plan = buildPlan(pb, 't', { runId: 'r1', provider: 'ssh', workloadTarget: { runsOn: 'ssh:g', testFile: '/dev/sdb' } });
    expect(plan.permutations[0]!.steps).toEqual([expect.objectContaining({ step: 'workload', destructive: true, destroys: ['/dev/sdb'] })]);
    expect(() => checkConfirmDestroy(plan, undefined)).toThrow(/destroy data on \/dev\/sdb/);
    expect(checkConfirmDestroy(plan, '/dev/sdb')).toEqual(['/dev/sdb']);
    const hv = buildPlan(pb, 't', { runId: 'r1', provider: 'hyperv', workloadTool: 'diskspd', workloadTarget: { testFile: '#1' } });
    expect(destroyedNames(hv)).toEqual(['#1']);
    const file = buildPlan(pb, 't', { runId: 'r1', provider: 'ssh', workloadTarget: { testFile: '/data/x.dat' } });
    expect(file.permutations[0]!.steps[0]).toMatchObject({ destructive: false });
    expect(file.permutations[0]!.steps[0]!.destroys).toBeUndefined();
  });
});

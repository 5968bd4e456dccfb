// One VMFS version × block size rule (src/providers/vmfs-block-size.ts), as the vSphere API
// reference documents HostVmfsSpec (`blockSize`, `blockSizeMb`, `majorVersion`): VMFS3
// 1/2/4/8 MB, VMFS5 1 MB only, VMFS6 64 KB or 1 MB. The vSphere and ESXi-shell planners ask it, so
// they accept and refuse exactly the same datastore.blockSizeMb values.
import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { planEsxiShellSteps } from '../../../src/providers/esxi-shell/plan.ts';
import { planVsphereSteps } from '../../../src/providers/vsphere/steps.ts';
import { checkVmfsBlockSize, VMFS_BLOCK_SIZES_KB } from '../../../src/providers/vmfs-block-size.ts';

const DEV = 'naa.6000c2900000000000000000000000a1';
const planners = {
  vsphere: (axes: Record<string, string | number>) => planVsphereSteps(axes, { host: 'esx01', vm: 'vm', vmfsDevice: DEV, allowedDevices: [DEV] }, { prefix: 'ss-r1-p1' }),
  'esxi-shell': (axes: Record<string, string | number>) => planEsxiShellSteps(axes, { host: 'esx1', vmid: '1', vmfsDevice: DEV, allowedDevices: [DEV] }, { base: 'ss-r1-p1' }),
};
const accepts = (plan: (a: Record<string, string | number>) => unknown, axes: Record<string, string | number>): boolean => {
  try {
    plan(axes);
    return true;
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgument);
    return false;
  }
};

describe('VMFS block sizes', () => {
  it('the table is the API reference\'s (KiB)', () => {
    expect(VMFS_BLOCK_SIZES_KB).toEqual({ vmfs3: [1024, 2048, 4096, 8192], vmfs5: [1024], vmfs6: [64, 1024] });
  });

  it.each(['vmfs3', 'vmfs5', 'vmfs6'] as const)('%s: both planners take exactly the documented MiB sizes', (kind) => {
    const documented = { vmfs3: [1, 2, 4, 8], vmfs5: [1], vmfs6: [1] }[kind];
    for (const mb of [1, 2, 4, 8]) {
      const axes = { 'datastore.kind': kind, 'datastore.blockSizeMb': mb, 'disk.format': 'thin', 'disk.sizeGb': 4 };
      expect(accepts(planners.vsphere, axes), `vsphere ${kind} ${mb} MiB`).toBe(documented.includes(mb));
      expect(accepts(planners['esxi-shell'], axes), `esxi-shell ${kind} ${mb} MiB`).toBe(documented.includes(mb));
    }
  });

  it('datastore.blockSizeKb is HostVmfsSpec.blockSize: VMFS6 64 or 1024, VMFS5 1024; VMFS3 is told to use blockSizeMb', () => {
    expect(checkVmfsBlockSize('vmfs6', 'datastore.blockSizeKb', 64)).toBe(64);
    expect(checkVmfsBlockSize('vmfs5', 'datastore.blockSizeKb', 1024)).toBe(1024);
    expect(() => checkVmfsBlockSize('vmfs5', 'datastore.blockSizeKb', 64)).toThrow('datastore.blockSizeKb 64 with datastore.kind vmfs5: vmfs5 supports 1024 KiB blocks');
    expect(() => checkVmfsBlockSize('vmfs3', 'datastore.blockSizeKb', 1024)).toThrow('datastore.blockSizeKb 1024 with datastore.kind vmfs3: vmfs3 takes no datastore.blockSizeKb (use datastore.blockSizeMb: 1, 2, 4, 8)');
    expect(() => checkVmfsBlockSize('vmfs5', 'datastore.blockSizeMb', 8)).toThrow('datastore.blockSizeMb 8 with datastore.kind vmfs5: vmfs5 supports 1 MiB blocks (VMFS3: 1, 2, 4 or 8 MiB; VMFS5: 1 MiB; VMFS6: 1 MiB, or 64 KiB as datastore.blockSizeKb (which VMFS5/6 also take as 1024))');
    expect(accepts(planners.vsphere, { 'datastore.kind': 'vmfs6', 'datastore.blockSizeKb': 64, 'disk.format': 'thin', 'disk.sizeGb': 4 })).toBe(true);
    expect(accepts(planners.vsphere, { 'datastore.kind': 'vmfs5', 'datastore.blockSizeKb': 64, 'disk.format': 'thin', 'disk.sizeGb': 4 })).toBe(false);
  });

  it('an existing datastore takes no block size on either provider (it would only repeat the permutation)', () => {
    const axes = { 'datastore.kind': 'existing', 'datastore.blockSizeMb': 1, 'disk.format': 'thin', 'disk.sizeGb': 4 };
    expect(() => planVsphereSteps(axes, { host: 'esx01', vm: 'vm', datastore: 'ds1', allowedDevices: [] }, { prefix: 'ss-r1-p1' })).toThrow(/no block size with datastore.kind existing/);
    expect(() => planEsxiShellSteps(axes, { host: 'esx1', vmid: '1', datastoreVolumePath: '/vmfs/volumes/ds1', allowedDevices: [] }, { base: 'ss-r1-p1' })).toThrow(/no block size with datastore.kind existing/);
  });
});

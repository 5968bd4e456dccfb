import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../../src/errors.ts';
import type { VsphereTargetConfig } from '../../../../src/providers/vsphere/config.ts';
import { GUEST_WINDOWS_DISK_OPERATION, GUEST_WINDOWS_VOLUME_OPERATION, planVsphereSteps } from '../../../../src/providers/vsphere/steps.ts';

const target: VsphereTargetConfig = {
  vcenter: { url: 'https://vc.example/sdk', username: 'bench@vsphere.local', password: 's3cret-pw', thumbprint: 'AA:BB' },
  datacenter: 'DC0',
  host: 'esx01',
  vm: 'bench-vm',
  datastore: 'LocalDS_0',
  vmfsDevice: 'naa.600a0001',
  rdmDevice: 'naa.600a0002',
  allowedDevices: ['naa.600a0001', 'naa.600a0002'],
  nfs: { remoteHost: 'nas.example', remotePath: '/export/bench' },
};
const names = { prefix: 'ss-r1-p7' };

describe('planVsphereSteps', () => {
  it('VMFS3 8 MB + eager-zeroed disk: a destructive datastore step, then the disk on it', () => {
    const steps = planVsphereSteps({ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 8, 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 16 }, target, names);
    expect(steps).toEqual([
      {
        step: 'datastore',
        provider: 'vsphere',
        operation: 'CreateVmfsDatastore',
        arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', name: 'ss-r1-p7-ds', device: 'naa.600a0001', vmfsMajorVersion: 3, blockSizeMb: 8 },
        destructive: true,
        destroys: ['naa.600a0001'],
        creates: { kind: 'datastore', name: 'ss-r1-p7-ds' },
      },
      {
        step: 'disk',
        provider: 'vsphere',
        operation: 'ReconfigVM_Task',
        arguments: {
          host: 'esx01',
          vm: 'bench-vm',
          datacenter: 'DC0',
          deviceChange: 'add+create',
          backing: 'flat',
          format: 'eagerzeroedthick',
          datastore: 'ss-r1-p7-ds',
          fileName: 'ss-r1-p7-disk.vmdk',
          sizeGb: 16,
          sizeBytes: 17179869184,
        },
        destructive: false,
        creates: { kind: 'disk', name: 'ss-r1-p7-disk' },
      },
      // the disk just attached, found in the guest by its WWN; the workload measures it
      {
        step: 'guest-disk',
        provider: 'vsphere',
        operation: 'guest: find disk by WWN',
        arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', disk: 'ss-r1-p7-disk', filesystem: 'raw' },
        destructive: false,
      },
    ]);
  });

  it('never puts a secret into a plan', () => {
    const all = ['vmfs5', 'vmfs6', 'nfs', 'existing'].flatMap((kind) =>
      ['thin', 'rdm-virtual'].filter((f) => !(kind === 'nfs' && f.startsWith('rdm'))).map((f) => planVsphereSteps({ 'datastore.kind': kind, 'disk.format': f, 'disk.sizeGb': 1 }, target, names)),
    );
    const text = JSON.stringify(all);
    expect(text).not.toContain('s3cret-pw');
    expect(text).not.toContain('bench@vsphere.local');
  });

  it('vmfs6 64 KB blocks use blockSizeKb; NFS mounts the share; existing adds only the disk', () => {
    expect(planVsphereSteps({ 'datastore.kind': 'vmfs6', 'datastore.blockSizeKb': 64, 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names)[0]!.arguments).toMatchObject({ vmfsMajorVersion: 6, blockSizeKb: 64 });
    const nfs = planVsphereSteps({ 'datastore.kind': 'nfs', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names);
    expect(nfs[0]).toMatchObject({ operation: 'CreateNasDatastore', destructive: false, arguments: { remoteHost: 'nas.example', remotePath: '/export/bench', name: 'ss-r1-p7-ds' } });
    const existing = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'lazyzeroedthick', 'disk.sizeGb': '4' }, target, names);
    expect(existing.map((s) => s.step)).toEqual(['disk', 'guest-disk']);
    expect(existing[0]!.arguments).toMatchObject({ datastore: 'LocalDS_0', sizeBytes: 4 * 1024 ** 3 });
  });

  it('RDMs: physical and virtual compatibility on the RDM device, destructive, kind rdm', () => {
    const [ds, rdm] = planVsphereSteps({ 'datastore.kind': 'vmfs5', 'disk.format': 'rdm-physical' }, target, names);
    expect(ds!.operation).toBe('CreateVmfsDatastore');
    expect(rdm).toMatchObject({
      operation: 'ReconfigVM_Task',
      destructive: true,
      creates: { kind: 'rdm', name: 'ss-r1-p7-rdm' },
      arguments: { backing: 'rdm', device: 'naa.600a0002', compatibilityMode: 'physicalMode', datastore: 'ss-r1-p7-ds', fileName: 'ss-r1-p7-rdm.vmdk' },
    });
    expect(planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-virtual' }, target, names)[0]!.arguments.compatibilityMode).toBe('virtualMode');
  });

  it('NFS with VAAI-NAS takes thick formats (the provider still reads the backing back)', () => {
    const vaai = { ...target, nfs: { ...target.nfs!, vaaiNas: true } };
    for (const format of ['lazyzeroedthick', 'eagerzeroedthick']) {
      expect(planVsphereSteps({ 'datastore.kind': 'nfs', 'disk.format': format, 'disk.sizeGb': 1 }, vaai, names)[1]!.arguments.format).toBe(format);
    }
  });

  it('disk.controller: a controller step (created only when the VM has none) before the disk, which names the type', () => {
    const steps = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'lsisas' }, target, names);
    expect(steps.map((s) => s.step)).toEqual(['controller', 'disk', 'guest-disk']);
    expect(steps[0]).toEqual({
      step: 'controller',
      provider: 'vsphere',
      operation: 'ReconfigVM_Task',
      arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', deviceChange: 'add', device: 'controller', controller: 'lsisas' },
      destructive: false,
      creates: { kind: 'controller', name: 'ss-r1-p7-ctl' },
    });
    expect(steps[1]!.arguments.controller).toBe('lsisas');
    const rdm = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical', 'disk.controller': 'pvscsi' }, target, names);
    expect(rdm.map((s) => [s.step, s.arguments.controller])).toEqual([['controller', 'pvscsi'], ['disk', 'pvscsi'], ['guest-disk', undefined]]);
    // without the axis: no controller step, the disk's arguments as before
    expect(planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names)[0]!.arguments.controller).toBeUndefined();
  });

  const bad: Array<[Record<string, string | number>, Partial<VsphereTargetConfig>, RegExp]> = [
    [{ 'datastore.kind': 'vmfs4', 'disk.format': 'thin', 'disk.sizeGb': 1 }, {}, /axis datastore.kind = "vmfs4": expected one of vmfs3, vmfs5, vmfs6, nfs, existing/],
    [{ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 3, 'disk.format': 'thin', 'disk.sizeGb': 1 }, {}, /datastore.blockSizeMb = 3: expected one of 1, 2, 4, 8/],
    [{ 'datastore.kind': 'vmfs5', 'datastore.blockSizeKb': 64, 'disk.format': 'thin', 'disk.sizeGb': 1 }, {}, /datastore.blockSizeKb 64 with datastore.kind vmfs5: vmfs5 supports 1024 KiB blocks/],
    [{ 'datastore.kind': 'vmfs5', 'disk.format': 'thick', 'disk.sizeGb': 1 }, {}, /disk.format = "thick"/],
    [{ 'datastore.kind': 'vmfs5', 'disk.format': 'thin' }, {}, /disk.sizeGb = undefined: expected a positive number/],
    [{ 'datastore.kind': 'nfs', 'disk.format': 'rdm-physical' }, {}, /RDM mapping files need VMFS/],
    [{ 'datastore.kind': 'vmfs5', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { vmfsDevice: undefined }, /needs vmfsDevice to create a vmfs5 datastore/],
    [{ 'datastore.kind': 'vmfs5', 'disk.format': 'rdm-virtual' }, { rdmDevice: 'naa.600a0001' }, /an RDM device other than the VMFS device/],
    // NFS without VAAI-NAS: thin disks only
    [{ 'datastore.kind': 'nfs', 'disk.format': 'lazyzeroedthick', 'disk.sizeGb': 1 }, {}, /disk.format = "lazyzeroedthick": expected thin with datastore.kind nfs: an NFS datastore without VAAI-NAS .* has thin disks only/],
    [{ 'datastore.kind': 'nfs', 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 1 }, {}, /disk.format = "eagerzeroedthick": expected thin with datastore.kind nfs/],
    [{ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': 'sata' }, {}, /disk.controller = "sata": expected one of pvscsi, lsilogic, lsisas, buslogic, nvme/],
  ];
  for (const [axes, over, msg] of bad) {
    it(`rejects ${JSON.stringify(axes)} ${JSON.stringify(over)} with a clear message`, () => {
      let err: unknown;
      try {
        planVsphereSteps(axes, { ...target, ...over }, names);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidArgument);
      expect((err as Error).message).toMatch(msg);
    });
  }

  it('a Linux filesystem on an RDM writes the LUN: the filesystem step names the LUN it destroys, as the disk step does; on a VMDK it destroys nothing', () => {
    const linux = { ...target, guestWorkdir: '/var/tmp/ss' };
    const rdm = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-virtual', 'guest.filesystem': 'ext4' }, linux, names);
    expect(rdm.at(-1)).toMatchObject({ step: 'guest-disk', destructive: true, destroys: ['naa.600a0002'], creates: { kind: 'guest-filesystem', name: 'ss-r1-p7-fs' } });
    const vmdk = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'guest.filesystem': 'xfs' }, linux, names).at(-1)!;
    expect(vmdk).toMatchObject({ step: 'guest-disk', destructive: false, creates: { kind: 'guest-filesystem', name: 'ss-r1-p7-fs' } });
    expect(vmdk.destroys).toBeUndefined();
  });

  describe('a Windows guest (guest.os: windows): guest.filesystem as on Hyper-V', () => {
    const win = { ...target, guestOs: 'windows' as const, guestWorkdir: 'C:\\storsweep' };
    const guestStep = (axes: Record<string, string | number>) => planVsphereSteps({ 'datastore.kind': 'existing', 'disk.sizeGb': 1, ...axes }, win, names).at(-1)!;

    it('raw: the guest-disk step finds and onlines the disk, creates nothing', () => {
      expect(guestStep({ 'disk.format': 'thin' })).toEqual({ step: 'guest-disk', provider: 'vsphere', operation: GUEST_WINDOWS_DISK_OPERATION, arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', disk: 'ss-r1-p7-disk', filesystem: 'raw' }, destructive: false });
    });

    it('ntfs-4k, ntfs-64k, refs: a step that creates a guest-volume (teardown clears it), with the file system and allocation unit it formats', () => {
      expect(guestStep({ 'disk.format': 'thin', 'guest.filesystem': 'ntfs-64k' })).toEqual({
        step: 'guest-disk',
        provider: 'vsphere',
        operation: GUEST_WINDOWS_VOLUME_OPERATION,
        arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', disk: 'ss-r1-p7-disk', filesystem: 'ntfs-64k', fileSystem: 'NTFS', allocationUnitBytes: 65536 },
        destructive: false,
        creates: { kind: 'guest-volume', name: 'ss-r1-p7-volume' },
      });
      expect(guestStep({ 'disk.format': 'thin', 'guest.filesystem': 'ntfs-4k' }).arguments).toMatchObject({ fileSystem: 'NTFS', allocationUnitBytes: 4096 });
      expect(guestStep({ 'disk.format': 'thin', 'guest.filesystem': 'refs' }).arguments).toMatchObject({ fileSystem: 'ReFS', allocationUnitBytes: 4096 });
    });

    it('on an RDM the volume step writes the LUN: it names the LUN it destroys, as the disk step does', () => {
      const steps = planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical', 'guest.filesystem': 'ntfs-4k' }, win, names);
      expect(steps.at(-1)).toMatchObject({ operation: GUEST_WINDOWS_VOLUME_OPERATION, destructive: true, destroys: ['naa.600a0002'], creates: { kind: 'guest-volume', name: 'ss-r1-p7-volume' } });
      expect(steps.find((x) => x.step === 'disk')!.destroys).toEqual(['naa.600a0002']);
    });

    it('refuses a Linux filesystem in a Windows guest, and NTFS/ReFS in a Linux guest, naming the allowed values', () => {
      expect(() => guestStep({ 'disk.format': 'thin', 'guest.filesystem': 'ext4' })).toThrow(/guest\.filesystem = "ext4": expected one of raw, ntfs-4k, ntfs-64k, refs/);
      expect(() => planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'guest.filesystem': 'ntfs-64k' }, { ...target, guestWorkdir: '/var/tmp/ss' }, names)).toThrow(/guest\.filesystem = "ntfs-64k": expected one of raw, ext4, xfs/);
    });
  });
});

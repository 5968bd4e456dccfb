import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../../src/errors.ts';
import type { EsxiShellTargetConfig } from '../../../../src/providers/esxi-shell/config.ts';
import { planEsxiShellSteps } from '../../../../src/providers/esxi-shell/plan.ts';
import { createDiskArgv, createRdmArgv, createVmfsArgv } from '../../../../src/providers/esxi-shell/vmkfstools.ts';
import { setptblArgv, VMFS_GPT_GUID } from '../../../../src/providers/esxi-shell/partedutil.ts';
import { diskAddExistingArgv, diskRemoveArgv } from '../../../../src/providers/esxi-shell/vimcmd.ts';
import { filesystemUnmountArgv } from '../../../../src/providers/esxi-shell/esxcli.ts';

const DEV = 'naa.6000c2900000000000000000000000a1';
const RDM = 'naa.6000c2900000000000000000000000b2';
const target: EsxiShellTargetConfig = { host: 'esx1', vmid: '1', datastoreVolumePath: '/vmfs/volumes/datastore1', vmfsDevice: DEV, rdmDevice: RDM, allowedDevices: [DEV, RDM] };
const names = { base: 'ss-r1-p1' };

describe('command builders', () => {
  it('build the documented vmkfstools, partedUtil and vim-cmd argv', () => {
    expect(createVmfsArgv('vmfs3', 8, 'ss-r1-p1-ds', DEV)).toEqual(['vmkfstools', '-C', 'vmfs3', '-b', '8m', '-S', 'ss-r1-p1-ds', `/vmfs/devices/disks/${DEV}:1`]);
    expect(createDiskArgv(10, 'eagerzeroedthick', '/vmfs/volumes/ds/x.vmdk')).toEqual(['vmkfstools', '-c', '10g', '-d', 'eagerzeroedthick', '/vmfs/volumes/ds/x.vmdk']);
    expect(createRdmArgv('physical', RDM, '/vmfs/volumes/ds/r.vmdk')).toEqual(['vmkfstools', '-z', `/vmfs/devices/disks/${RDM}`, '/vmfs/volumes/ds/r.vmdk']);
    expect(setptblArgv(DEV, 'gpt', [{ number: 1, startSector: 2048, endSector: 41943006, type: VMFS_GPT_GUID, attributes: 0 }])).toEqual(['partedUtil', 'setptbl', `/vmfs/devices/disks/${DEV}`, 'gpt', `1 2048 41943006 ${VMFS_GPT_GUID} 0`]);
    expect(diskAddExistingArgv('1', '/vmfs/volumes/ds/x.vmdk', 0, 1)).toEqual(['vim-cmd', 'vmsvc/device.diskaddexisting', '1', '/vmfs/volumes/ds/x.vmdk', '0', '1']);
    expect(diskRemoveArgv(1, 0, 1)).toEqual(['vim-cmd', 'vmsvc/device.diskremove', '1', '0', '1', 'false']);
  });

  it('refuses block sizes the VMFS version does not have, and unit 7', () => {
    expect(() => createVmfsArgv('vmfs5', 8, 'x', DEV)).toThrow(/vmfs5 supports 1 MiB/);
    expect(() => createVmfsArgv('vmfs3', 16, 'x', DEV)).toThrow(InvalidArgument);
    expect(() => diskAddExistingArgv('1', '/vmfs/volumes/ds/x.vmdk', 0, 7)).toThrow(/controller itself/);
  });

  it.each([
    ['device', () => createRdmArgv('physical', 'sda; rm -rf /', '/vmfs/volumes/ds/r.vmdk')],
    ['device $()', () => createRdmArgv('virtual', 'naa.$(touch x)', '/vmfs/volumes/ds/r.vmdk')],
    ['label', () => filesystemUnmountArgv("ds'; reboot; '")],
    ['label newline', () => filesystemUnmountArgv('ds\nreboot')],
    ['path traversal', () => createDiskArgv(1, 'thin', '/vmfs/volumes/ds/../../etc/x.vmdk')],
    ['path backtick', () => createDiskArgv(1, 'thin', '/vmfs/volumes/ds/`id`.vmdk')],
    ['vmid', () => diskAddExistingArgv('1 && halt', '/vmfs/volumes/ds/x.vmdk', 0, 1)],
    ['option as label', () => createVmfsArgv('vmfs6', 1, '-rf', DEV)],
  ])('rejects a hostile %s before building a command', (_what, build) => {
    expect(build).toThrow(InvalidArgument);
  });
});

describe('planEsxiShellSteps', () => {
  it('plans partition → datastore → disk → attach → guest-disk for a new VMFS3 with 8 MiB blocks', () => {
    const steps = planEsxiShellSteps({ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 8, 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 10 }, target, names);
    expect(steps.map((s) => [s.step, s.operation, s.destructive, s.creates?.kind])).toEqual([
      ['partition', 'partedUtil setptbl', true, 'vmfs-partition'],
      ['datastore', 'vmkfstools -C', true, 'datastore'],
      ['disk', 'vmkfstools -c', false, 'disk'],
      ['attach', 'vim-cmd vmsvc/device.diskaddexisting', false, 'disk-attachment'],
      ['guest-disk', 'guest: find disk by WWN', false, undefined],
    ]);
    expect(steps[0]!.arguments).toMatchObject({ device: DEV, label: 'msdos', startSector: 128, type: '251' });
    expect(steps[1]!.arguments).toEqual({ device: DEV, partition: 1, vmfsVersion: 'vmfs3', blockSizeMb: 8, label: 'ss-r1-p1-ds', volumePath: '/vmfs/volumes/ss-r1-p1-ds' });
    expect(steps[2]!.arguments).toEqual({ path: '/vmfs/volumes/ss-r1-p1-ds/ss-r1-p1-disk.vmdk', sizeGb: 10, format: 'eagerzeroedthick' });
    // no unit: the lowest free one is chosen at apply, and the guest finds the disk by its uuid
    expect(steps[3]!.arguments).toEqual({ vmid: '1', path: '/vmfs/volumes/ss-r1-p1-ds/ss-r1-p1-disk.vmdk', bus: 0 });
    expect(steps[4]!.arguments).toEqual({ vmid: '1', path: '/vmfs/volumes/ss-r1-p1-ds/ss-r1-p1-disk.vmdk', by: 'disk uuid', sizeBytes: 10 * 1024 ** 3, filesystem: 'raw' });
    expect(JSON.parse(JSON.stringify(steps))).toEqual(steps);
  });

  it('uses the existing datastore and maps lazyzeroedthick to zeroedthick; RDM steps are destructive', () => {
    const thick = planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'lazyzeroedthick', 'disk.sizeGb': 4 }, target, names);
    expect(thick.map((s) => s.step)).toEqual(['disk', 'attach', 'guest-disk']);
    expect(thick[0]!.arguments).toEqual({ path: '/vmfs/volumes/datastore1/ss-r1-p1-disk.vmdk', sizeGb: 4, format: 'zeroedthick' });
    const rdm = planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'rdm-physical' }, target, names);
    expect(rdm[1]!.arguments.blockSizeMb).toBe(1);
    expect(rdm[2]).toMatchObject({ operation: 'vmkfstools -z', destructive: true, arguments: { device: RDM, compatibilityMode: 'physical' } });
    // a physical RDM is found in the guest by the LUN's NAA id, a virtual one by its mapping's uuid
    expect(rdm[4]!.arguments).toEqual({ vmid: '1', path: '/vmfs/volumes/ss-r1-p1-ds/ss-r1-p1-disk.vmdk', by: 'LUN id', lun: RDM, filesystem: 'raw' });
    expect(planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'rdm-virtual' }, target, names)[4]!.arguments).toMatchObject({ by: 'disk uuid', lun: RDM });
    // the LUN the datastore is made on is not also mapped raw (the workload would overwrite the datastore)
    const same = { ...target, rdmDevice: DEV };
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'rdm-virtual' }, same, names)).toThrow(new InvalidArgument(`axis disk.format = "rdm-virtual": expected an RDM device other than the VMFS device ${DEV} (the datastore holding the mapping file is made on it, and the workload would overwrite it)`, { name: 'disk.format', value: 'rdm-virtual' }));
    expect(planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-virtual' }, same, names)[0]).toMatchObject({ arguments: { device: DEV } });
  });

  it('guest.filesystem ext4/xfs: a guest-filesystem object mounted in a directory of ours under the guest workdir; none without a workdir', () => {
    const steps = planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'guest.filesystem': 'xfs' }, { ...target, guestWorkdir: '/srv/bench' }, names);
    expect(steps.at(-1)).toEqual({ step: 'guest-disk', provider: 'esxi-shell', operation: 'guest: find disk by WWN, partition, mkfs, mount', arguments: { vmid: '1', path: '/vmfs/volumes/datastore1/ss-r1-p1-disk.vmdk', by: 'disk uuid', sizeBytes: 1024 ** 3, filesystem: 'xfs', mountpoint: '/srv/bench/ss-r1-p1-fs' }, destructive: false, creates: { kind: 'guest-filesystem', name: 'ss-r1-p1-fs' } });
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'guest.filesystem': 'ext4' }, target, names)).toThrow(/names none/);
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'guest.filesystem': 'ntfs-4k' }, target, names)).toThrow(/expected one of raw, ext4, xfs/);
  });

  it('a physical RDM of a LUN without an NAA id is refused: the guest could not find it by WWN', () => {
    const t10 = 't10.ATA_____HGST_HDN728080ALE604____________________VJGL71YX____________';
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical' }, { ...target, rdmDevice: t10, allowedDevices: [t10] }, names)).toThrow(/expected an rdmDevice with an NAA id/);
  });

  it('explains missing axes, bad block sizes and missing inventory fields', () => {
    expect(() => planEsxiShellSteps({ 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names)).toThrow(/axis datastore.kind is required/);
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'datastore.blockSizeMb': 4, 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names)).toThrow(/vmfs6 supports 1 MiB/);
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'vmfs5', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { ...target, vmfsDevice: undefined }, names)).toThrow(/needs vmfsDevice/);
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'vmfs9', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, names)).toThrow(/expected one of vmfs3/);
    expect(() => planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { ...target, allowedDevices: ['/dev/sda'] }, names)).toThrow(/allowedDevices\[0\]/);
  });
});

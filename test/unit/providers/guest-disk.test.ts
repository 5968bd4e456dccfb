import { describe, expect, it } from 'vitest';
import { byIdLink, parseBlkidExport, parseLsblkPairs, sfdiskScript, wwnOfDiskUuid, wwnOfLun } from '../../../src/providers/guest-disk.ts';
import { diskUuidEnabled, guestIdentity } from '../../../src/providers/vsphere/provider.ts';

describe('what the guest calls an attached disk', () => {
  it('a VMDK uuid in the API form is the WWN without dashes, lower case', () => {
    expect(wwnOfDiskUuid('6000C29a-bcde-f012-3456-789abcdef012')).toBe('6000c29abcdef0123456789abcdef012');
    expect(byIdLink('/dev/disk/by-id', '6000c29abcdef0123456789abcdef012')).toBe('/dev/disk/by-id/wwn-0x6000c29abcdef0123456789abcdef012');
    for (const bad of [undefined, '', '6000C29a-bcde', 'storsweep-rdm-marker-1', '6000C29a-bcde-f012-3456-789abcdef01g']) expect(wwnOfDiskUuid(bad)).toBeNull();
  });

  it('only an NAA LUN id is a WWN a physical RDM passes through', () => {
    expect(wwnOfLun('naa.600508B1001C3A4F9F2D1C5E8B7A6D02')).toBe('600508b1001c3a4f9f2d1c5e8b7a6d02');
    expect(wwnOfLun('naa.5000c500a1b2c3d4')).toBe('5000c500a1b2c3d4');
    for (const bad of ['eui.0025385b71b07e2f', 't10.ATA_disk', 'mpx.vmhba1:C0:T1:L0', 'naa.60']) expect(wwnOfLun(bad)).toBeNull();
  });

  it('guestIdentity: flat and virtual RDM by uuid, physical RDM by LUN, with the capacity', () => {
    expect(guestIdentity({ key: 2001, capacityInBytes: 1 << 30, backing: { _type: 'VirtualDiskFlatVer2BackingInfo', fileName: '[ds] a.vmdk', uuid: '6000C29a-bcde-f012-3456-789abcdef012' } })).toEqual({ wwn: '6000c29abcdef0123456789abcdef012', sizeBytes: 1 << 30, source: '[ds] a.vmdk' });
    expect(guestIdentity({ key: 2002, capacityInKB: 8 << 20, backing: { _type: 'VirtualDiskRawDiskMappingVer1BackingInfo', fileName: '[ds] r.vmdk', compatibilityMode: 'physicalMode', deviceName: '/vmfs/devices/disks/naa.6000c2900000000000000000000000b2' } })).toEqual({ wwn: '6000c2900000000000000000000000b2', sizeBytes: 8 * 1024 ** 3, source: '[ds] r.vmdk (LUN naa.6000c2900000000000000000000000b2)' });
    // no uuid reported: the guest cannot be asked for it
    expect(guestIdentity({ key: 2003, capacityInBytes: 1 << 30, backing: { _type: 'VirtualDiskFlatVer2BackingInfo', fileName: '[ds] b.vmdk' } })).toBeNull();
  });

  it('disk.EnableUUID: TRUE in any case, the last value set wins', () => {
    expect(diskUuidEnabled([{ key: 'disk.EnableUUID', value: 'TRUE' }])).toBe(true);
    expect(diskUuidEnabled({ key: 'disk.enableuuid', value: 'true' })).toBe(true);
    expect(diskUuidEnabled([{ key: 'disk.EnableUUID', value: 'TRUE' }, { key: 'disk.EnableUUID', value: 'FALSE' }])).toBe(false);
    expect(diskUuidEnabled([{ key: 'govcsim', value: 'TRUE' }])).toBe(false);
    expect(diskUuidEnabled(undefined)).toBe(false);
  });
});

describe('guest output parsers and the partition script', () => {
  it('lsblk -P rows, escapes decoded', () => {
    expect(parseLsblkPairs('NAME="sdb" TYPE="disk" SIZE="1073741824" MOUNTPOINT=""\nNAME="sdb1" TYPE="part" SIZE="1072693248" MOUNTPOINT="/mnt/a\\x20b"\n')).toEqual([
      { NAME: 'sdb', TYPE: 'disk', SIZE: '1073741824', MOUNTPOINT: '' },
      { NAME: 'sdb1', TYPE: 'part', SIZE: '1072693248', MOUNTPOINT: '/mnt/a b' },
    ]);
  });

  it('blkid -p -o export', () => {
    expect(parseBlkidExport('DEVNAME=/dev/loop0\nPTUUID=2782c1f0\nPTTYPE=gpt\n')).toEqual({ DEVNAME: '/dev/loop0', PTUUID: '2782c1f0', PTTYPE: 'gpt' });
  });

  it('sfdisk: GPT with the disk GUID we recorded, one Linux partition; anything but a GUID is refused', () => {
    expect(sfdiskScript('0f9d4b2e-1c3a-4d5e-8f60-718293a4b5c6')).toBe('label: gpt\nlabel-id: 0F9D4B2E-1C3A-4D5E-8F60-718293A4B5C6\n,,L\n');
    expect(() => sfdiskScript('x\nlabel: dos')).toThrow(/not a GUID/);
  });
});

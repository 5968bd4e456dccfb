import { describe, expect, it } from 'vitest';
import { UnsafeOperation } from '../../../../src/errors.ts';
import { lunOf, pickGuestDisk, pickGuestDiskByWwn, sameGuestDisk, type GuestDisk } from '../../../../src/providers/hyperv/guest-disk.ts';

const GiB = 1024 ** 3;
const disk = (n: number, lun: number, size: number, extra: Partial<GuestDisk> = {}): GuestDisk => ({
  Number: n, Location: `Integrated : Adapter 1 : Port 0 : Target 0 : LUN ${lun}`, SerialNumber: null, UniqueId: `6002248000000000000000000000000${n}`, Size: size,
  IsOffline: true, IsReadOnly: true, IsSystem: false, IsBoot: false, PartitionStyle: 'RAW', NumberOfPartitions: 0, ...extra,
});
const expected = { vmName: 'vm', controllerNumber: 0, controllerLocation: 1, sizeBytes: 4 * GiB };

describe('the attached disk in the guest', () => {
  it('reads the LUN from a Hyper-V guest Location, nothing from another kind', () => {
    expect(lunOf('Integrated : Adapter 1 : Port 0 : Target 0 : LUN 2')).toBe(2);
    expect(lunOf('PCIROOT(0)#PCI(0100)#ATA(C01T00L00)')).toBeNull();
    expect(lunOf('Integrated : Adapter 1 : Port 0 : Target 3 : LUN 2')).toBeNull();
    expect(lunOf(null)).toBeNull();
  });

  it('picks the one disk at the LUN with the size, whatever its number', () => {
    const ours = disk(5, 1, 4 * GiB);
    expect(pickGuestDisk('h', [disk(0, 0, 128 * GiB, { IsSystem: true, IsBoot: true, PartitionStyle: 'GPT', NumberOfPartitions: 3 }), disk(1, 2, 4 * GiB), ours], expected)).toBe(ours);
  });

  it('refuses: nothing at the LUN, the wrong size, two candidates, a system disk, partitions, an initialized disk, another serial', () => {
    expect(() => pickGuestDisk('h', [disk(1, 2, 4 * GiB)], expected)).toThrow(/no guest disk reports LUN 1/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 8 * GiB)], expected)).toThrow(/no guest disk at LUN 1 has the attached disk's size 4294967296/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 4 * GiB), disk(2, 1, 4 * GiB)], expected)).toThrow(/guest disks 1, 2 all report LUN 1/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 4 * GiB, { IsSystem: true })], expected)).toThrow(/it is the guest system disk/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 4 * GiB, { PartitionStyle: 'GPT', NumberOfPartitions: 2 })], expected)).toThrow(/carries 2 partition\(s\) this run did not create/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 4 * GiB, { PartitionStyle: 'MBR' })], expected)).toThrow(/it is initialized \(partition style MBR\)/);
    expect(() => pickGuestDisk('h', [disk(1, 1, 4 * GiB, { SerialNumber: 'OTHER' })], { ...expected, hostSerialNumber: 'S4EW' })).toThrow(UnsafeOperation);
    // a serial the guest does not report is no reason to refuse
    expect(pickGuestDisk('h', [disk(1, 1, 4 * GiB)], { ...expected, hostSerialNumber: 'S4EW' }).Number).toBe(1);
  });

  it('same disk: location and both ids as recorded', () => {
    const d = disk(1, 1, 4 * GiB);
    expect(sameGuestDisk(d, { location: d.Location, serialNumber: null, uniqueId: d.UniqueId })).toBe(true);
    expect(sameGuestDisk(d, { location: d.Location, serialNumber: 'X', uniqueId: d.UniqueId })).toBe(false);
    expect(sameGuestDisk({ ...d, Location: 'Integrated : Adapter 1 : Port 0 : Target 0 : LUN 2' }, { location: d.Location, serialNumber: null, uniqueId: d.UniqueId })).toBe(false);
  });
});

// A vSphere Windows guest (guest.via: tools): the disk is found by the WWN the step attached, as
// Get-Disk's SerialNumber or UniqueId (which of the two a VMware disk fills is UNVERIFIED, so either
// is enough), with the provisioned size, and must be blank like any other.
describe('the attached VMware disk in a Windows guest, by its WWN', () => {
  const wwn = '6000c29a0b1c2d3e4f5a6b7c8d9e0f12';
  const vmw = (n: number, size: number, extra: Partial<GuestDisk> = {}): GuestDisk => disk(n, 0, size, { Location: null, UniqueId: null, ...extra });
  const want = { vmName: 'vm', wwn, sizeBytes: 4 * GiB, source: 'the VMDK [ds] vm/ss-x.vmdk' };
  const system = vmw(0, 40 * GiB, { SerialNumber: '6000c2900000000000000000000000aa', IsSystem: true, IsBoot: true, PartitionStyle: 'GPT', NumberOfPartitions: 3, IsOffline: false, IsReadOnly: false });

  it('matches the serial number or the unique id, in any case and with separators, whatever the disk number', () => {
    const bySerial = vmw(3, 4 * GiB, { SerialNumber: wwn.toUpperCase() });
    expect(pickGuestDiskByWwn('h', [system, vmw(1, 4 * GiB, { SerialNumber: '6000c29fffffffffffffffffffffffff' }), bySerial], want)).toBe(bySerial);
    const byUniqueId = vmw(2, 4 * GiB, { UniqueId: wwn.replace(/(.{8})/g, '$1-').slice(0, -1).toUpperCase() });
    expect(pickGuestDiskByWwn('h', [system, byUniqueId], want)).toBe(byUniqueId);
    // a VPD 0x83 unique id that carries the identifier after a prefix
    const prefixed = vmw(4, 4 * GiB, { UniqueId: `3${wwn}` });
    expect(pickGuestDiskByWwn('h', [system, prefixed], want)).toBe(prefixed);
  });

  it('refuses: no disk reports it (naming disk.EnableUUID), two do, the wrong size, the system or boot disk, partitions, an initialized disk', () => {
    expect(() => pickGuestDiskByWwn('h', [system, vmw(1, 4 * GiB)], want)).toThrow(/no guest disk reports the WWN 6000c29a0b1c2d3e4f5a6b7c8d9e0f12 of the VMDK .* \(is disk\.EnableUUID = TRUE on the VM\?\); guest disks: disk 0 .*disk 1/);
    expect(() => pickGuestDiskByWwn('h', [vmw(1, 4 * GiB, { SerialNumber: wwn }), vmw(2, 4 * GiB, { UniqueId: wwn })], want)).toThrow(/guest disks 1, 2 all report the WWN/);
    expect(() => pickGuestDiskByWwn('h', [vmw(1, 8 * GiB, { SerialNumber: wwn })], want)).toThrow(/guest disk 1 reports the WWN .* but has 8589934592 bytes, not the 4294967296 provisioned/);
    expect(() => pickGuestDiskByWwn('h', [vmw(0, 4 * GiB, { SerialNumber: wwn, IsSystem: true })], want)).toThrow(/it is the guest system disk/);
    expect(() => pickGuestDiskByWwn('h', [vmw(0, 4 * GiB, { SerialNumber: wwn, IsBoot: true })], want)).toThrow(/it is the guest boot disk/);
    expect(() => pickGuestDiskByWwn('h', [vmw(1, 4 * GiB, { SerialNumber: wwn, PartitionStyle: 'GPT', NumberOfPartitions: 1 })], want)).toThrow(/carries 1 partition\(s\) this run did not create/);
    expect(() => pickGuestDiskByWwn('h', [vmw(1, 4 * GiB, { SerialNumber: wwn, PartitionStyle: 'MBR' })], want)).toThrow(/it is initialized \(partition style MBR\)/);
    for (const bad of [[], [vmw(1, 4 * GiB, { SerialNumber: wwn, IsSystem: true })]]) expect(() => pickGuestDiskByWwn('h', bad, want)).toThrow(UnsafeOperation);
  });
});

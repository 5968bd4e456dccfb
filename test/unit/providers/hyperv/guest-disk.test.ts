import { describe, expect, it } from 'vitest';
import { UnsafeOperation } from '../../../../src/errors.ts';
import { lunOf, pickGuestDisk, sameGuestDisk, type GuestDisk } from '../../../../src/providers/hyperv/guest-disk.ts';

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

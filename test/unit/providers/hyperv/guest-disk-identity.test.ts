// A Windows guest that shows no disk under the WWN a vSphere step attached: the refusal carries the
// mismatch as fields (the object, the identity expected, each disk of the provisioned size by the
// serial and unique id it reports), which the executor journals and `preflight --json` shows on the
// canary's permutation (identityMismatch), as it does for a Linux guest's by-id links.
import { describe, expect, it } from 'vitest';
import { identityMismatchOf, UnsafeOperation } from '../../../../src/errors.ts';
import { pickGuestDiskByWwn, type GuestDisk } from '../../../../src/providers/hyperv/guest-disk.ts';

const GiB = 1024 ** 3;
const disk = (n: number, size: number, extra: Partial<GuestDisk> = {}): GuestDisk => ({
  Number: n,
  Location: null,
  SerialNumber: null,
  UniqueId: null,
  Size: size,
  IsOffline: true,
  IsReadOnly: true,
  IsSystem: false,
  IsBoot: false,
  PartitionStyle: 'RAW',
  NumberOfPartitions: 0,
  ...extra,
});
const wwn = '6000c29a0b1c2d3e4f5a6b7c8d9e0f12';
const want = { vmName: 'vm', wwn, sizeBytes: 4 * GiB, source: 'the VMDK [ds] vm/ss-x.vmdk' };
const system = disk(0, 4 * GiB, { SerialNumber: '6000c2900000000000000000000000aa', IsSystem: true, IsBoot: true, PartitionStyle: 'GPT', NumberOfPartitions: 3, IsOffline: false, IsReadOnly: false });

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
};

describe('pickGuestDiskByWwn: a disk under another identity, as fields', () => {
  it('names the object, the WWN expected and each non-system disk of that size with its serial, unique id and device', () => {
    const other = disk(2, 4 * GiB, { SerialNumber: '6000C29F-FFFF-FFFF-FFFF-FFFFFFFFFFFF', UniqueId: '6000C29FFFFFFFFFFFFFFFFFFFFFFFFF' });
    const err = thrown(() => pickGuestDiskByWwn('h', [system, disk(1, 8 * GiB, { SerialNumber: 'x' }), other], want));
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect(identityMismatchOf(err)).toEqual({
      object: 'the VMDK [ds] vm/ss-x.vmdk',
      sizeBytes: 4 * GiB,
      expected: { wwn, name: wwn },
      seen: [{ name: '6000C29F-FFFF-FFFF-FFFF-FFFFFFFFFFFF', wwn: '6000c29fffffffffffffffffffffffff', device: '\\\\.\\PhysicalDrive2' }],
    });
  });

  it('carries none for the other refusals (the disk found, but the wrong size)', () => {
    const err = thrown(() => pickGuestDiskByWwn('h', [disk(1, 8 * GiB, { SerialNumber: wwn })], want));
    expect(err).toBeInstanceOf(UnsafeOperation);
    expect(identityMismatchOf(err)).toBeUndefined();
  });
});

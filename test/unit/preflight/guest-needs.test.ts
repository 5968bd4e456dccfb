// The pure parts of preflight's guest checks (issue 29): `df -Pk` read, sizes worded, and which plans
// need disk.EnableUUID. The checks themselves run on the lab: test/integration/preflight-guest-needs.test.ts.
import { describe, expect, it } from 'vitest';
import type { PlannedStep } from '../../../src/contract/provider.ts';
import { parseDfP, sizeText } from '../../../src/preflight/guest-needs.ts';
import { identifiesByUuid } from '../../../src/providers/vsphere/preflight.ts';

const disk = (args: Record<string, unknown>): PlannedStep => ({ step: 'disk', provider: 'vsphere', operation: 'ReconfigVM_Task', arguments: { deviceChange: 'add+create', ...args }, destructive: false });

describe('df -Pk', () => {
  it('reads the free KiB and the mount point, also one with spaces', () => {
    expect(parseDfP('Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/vda        263174212 29360128  77594112      28% /\n')).toEqual({ availKiB: 77594112, mountedOn: '/' });
    expect(parseDfP('Filesystem 1024-blocks Used Available Capacity Mounted on\nmy disk 100 40 60 40% /mnt/a b\n')).toEqual({ availKiB: 60, mountedOn: '/mnt/a b' });
  });

  it('refuses what is not df -P output', () => {
    expect(parseDfP('df: /x: No such file or directory\n')).toBeNull();
    expect(parseDfP('')).toBeNull();
  });
});

describe('sizes', () => {
  it('in the largest binary unit that is at least one', () => {
    expect(sizeText(16 * 1024 ** 2)).toBe('16.0 MiB');
    expect(sizeText(64 * 1024 ** 4)).toBe('64.0 TiB');
    expect(sizeText(1536 * 1024 ** 2)).toBe('1.5 GiB');
    expect(sizeText(2048)).toBe('2.0 KiB');
  });
});

describe('disk.EnableUUID is asked where the run finds a disk by its uuid', () => {
  it('a flat VMDK and a virtual RDM: yes; a physical RDM (the LUN NAA id passes through): no', () => {
    expect(identifiesByUuid([disk({ backing: 'flat', format: 'thin' })])).toBe(true);
    expect(identifiesByUuid([disk({ backing: 'rdm', compatibilityMode: 'virtualMode' })])).toBe(true);
    expect(identifiesByUuid([disk({ backing: 'rdm', compatibilityMode: 'physicalMode' })])).toBe(false);
    expect(identifiesByUuid([disk({ backing: 'rdm', compatibilityMode: 'physicalMode' }), disk({ backing: 'flat', format: 'thin' })])).toBe(true);
    expect(identifiesByUuid([])).toBe(false);
  });
});

// The Hyper-V preflight's pure parts: what a permutation's planned steps put on which volume or disk,
// and the host cmdlets they run (src/providers/hyperv/preflight.ts), from the real planner's steps.
import { describe, expect, it } from 'vitest';
import { placeText } from '../../../../src/contract/preflight.ts';
import { planHypervSteps } from '../../../../src/providers/hyperv/plan.ts';
import { cmdletsNeeded, hypervSpaceNeeds, VHDX_OVERHEAD_BYTES } from '../../../../src/providers/hyperv/preflight.ts';
import type { HypervTargetConfig } from '../../../../src/providers/hyperv/config.ts';

const GiB = 1024 ** 3;
const target: HypervTargetConfig = { host: 'hv', vmName: 'bench-vm', volumes: { '100': 'D:\\bench', '2000': 'E:\\bench' }, allowedDisks: [{ number: 2, serialNumber: 'S4EWNX0R123456' }], passthroughDisk: 2 };
const steps = (axes: Record<string, string | number>) => planHypervSteps(axes, target, { base: 'ss-r1-p1' });
const written = 16 << 20;

describe('what a Hyper-V permutation puts where', () => {
  it('a fixed VHDX takes its whole size and its metadata on the volume of its folder', () => {
    expect(hypervSpaceNeeds(steps({ 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 200, 'volume.sizeGb': 100 }), written)).toEqual([{ place: { kind: 'volume', folder: 'D:\\bench' }, bytes: 200 * GiB + VHDX_OVERHEAD_BYTES, what: '200 GiB fixed VHDX' }]);
  });

  it('a dynamic VHDX may be larger than its volume: it needs what the workload writes', () => {
    expect(hypervSpaceNeeds(steps({ 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4000, 'volume.sizeGb': 2000 }), written)).toEqual([{ place: { kind: 'volume', folder: 'E:\\bench' }, bytes: written + VHDX_OVERHEAD_BYTES, what: '4000 GiB dynamic VHDX' }]);
  });

  it('a pass-through disk must hold what the workload writes; it is named by number and serial', () => {
    const [need] = hypervSpaceNeeds(steps({ 'disk.format': 'passthrough' }), 2 * GiB);
    expect(need).toMatchObject({ place: { kind: 'disk', name: 'disk2:S4EWNX0R123456' }, bytes: 2 * GiB });
    expect(placeText(need!.place)).toBe('host disk disk2:S4EWNX0R123456');
    expect(placeText({ kind: 'volume', folder: 'D:\\bench' })).toBe('volume of D:\\bench');
  });
});

describe('the host cmdlets a plan runs', () => {
  it('a VHDX plan: New-VHD and the drive cmdlets, PowerShell Direct for the guest; no Set-Disk', () => {
    expect(cmdletsNeeded(steps({ 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 4, 'volume.sizeGb': 100 }))).toEqual(['Add-VMHardDiskDrive', 'Get-Disk', 'Get-Item', 'Get-VHD', 'Get-VM', 'Get-VMHardDiskDrive', 'Invoke-Command', 'New-VHD', 'Remove-Item', 'Remove-VMHardDiskDrive']);
  });

  it('a pass-through plan adds Set-Disk and leaves New-VHD out', () => {
    const c = cmdletsNeeded(steps({ 'disk.format': 'passthrough' }));
    expect(c).toContain('Set-Disk');
    expect(c).not.toContain('New-VHD');
  });
});

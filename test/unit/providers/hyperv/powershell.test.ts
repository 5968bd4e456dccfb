import { describe, expect, it } from 'vitest';
import { InvalidArgument, UnsafeOperation } from '../../../../src/errors.ts';
import { checkPassthroughDisk } from '../../../../src/providers/hyperv/passthrough.ts';
import { planHypervSteps } from '../../../../src/providers/hyperv/plan.ts';
import { buildScript, CALL_BODY, encodeCommand, powershellCommandLine } from '../../../../src/providers/hyperv/powershell.ts';
import { newVhdCall } from '../../../../src/providers/hyperv/vhd.ts';

describe('PowerShell encoding', () => {
  it('encodes the script as UTF-16LE base64 behind the fixed powershell.exe options', () => {
    const script = buildScript(CALL_BODY, { calls: [] });
    const line = powershellCommandLine(script);
    expect(line.startsWith('powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ')).toBe(true);
    const b64 = line.split(' ').at(-1)!;
    expect(b64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(b64, 'base64').toString('utf16le')).toBe(script);
    expect(encodeCommand('$a')).toBe(Buffer.from([0x24, 0, 0x61, 0]).toString('base64'));
  });

  it('puts values only in the base64 data blob, never in the script source', () => {
    const evil = "'; Remove-Item -Recurse C:\\ #";
    const script = buildScript(CALL_BODY, { calls: [{ cmdlet: 'Get-Item', params: { LiteralPath: evil } }] });
    expect(script).not.toContain('Remove-Item -Recurse');
    expect(script).toContain("$ErrorActionPreference = 'Stop'");
    const blob = /FromBase64String\('([^']*)'\)/.exec(script)![1]!;
    expect(JSON.parse(Buffer.from(blob, 'base64').toString('utf8')).calls[0].params.LiteralPath).toBe(evil);
  });
});

describe('VHD and pass-through rules', () => {
  it('builds New-VHD parameters with the switch for the type', () => {
    expect(newVhdCall({ path: 'D:\\b\\x.vhdx', sizeBytes: 1024 ** 3, type: 'Dynamic', blockSizeBytes: 1048576 }).params).toEqual({ Path: 'D:\\b\\x.vhdx', SizeBytes: 1024 ** 3, Dynamic: true, BlockSizeBytes: 1048576 });
    expect(() => newVhdCall({ path: 'D:\\b\\x.vhdx', sizeBytes: 1024 ** 3, type: 'Fixed', blockSizeBytes: 3 * 1048576 })).toThrow(/power of two/);
    expect(() => newVhdCall({ path: 'C:\\Windows\\..\\x.vhdx', sizeBytes: 1024 ** 3, type: 'Fixed' })).toThrow(InvalidArgument);
  });

  it('refuses pass-through unless number and serial match and the disk is unused', () => {
    const disk = { Number: 2, SerialNumber: 'S1 ', UniqueId: 'U', IsSystem: false, IsBoot: false, IsOffline: false, NumberOfPartitions: 0, PartitionStyle: 'RAW' };
    expect(() => checkPassthroughDisk('h', [{ number: 2, serialNumber: 'S1' }], 2, disk)).not.toThrow();
    expect(() => checkPassthroughDisk('h', [{ number: 2, serialNumber: 'S2' }], 2, disk)).toThrow(/serial number/);
    expect(() => checkPassthroughDisk('h', [{ number: 3, serialNumber: 'S1' }], 2, disk)).toThrow(/not in allowedDisks/);
    expect(() => checkPassthroughDisk('h', [{ number: 2, uniqueId: 'U' }], 2, { ...disk, IsBoot: true })).toThrow(UnsafeOperation);
  });

  it('plans New-VHD on the volume picked by volume.sizeGb, then the SCSI attach, then the disk found in the guest', () => {
    const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 2 }, { host: 'h', vmName: 'vm', volumes: { '100': 'D:\\bench' } }, { base: 'ss-r-p' });
    expect(steps.map((s) => [s.step, s.operation, s.creates?.kind])).toEqual([['vhdx', 'New-VHD', 'vhdx'], ['attach', 'Add-VMHardDiskDrive', 'disk-attachment'], ['guest-disk', 'Set-Disk (guest)', 'guest-disk']]);
    expect(steps[2]!.arguments).toEqual({ vmName: 'vm', controllerType: 'SCSI', controllerNumber: 0, controllerLocation: 1, path: 'D:\\bench\\ss-r-p-disk.vhdx' });
    expect(steps[0]!.arguments).toEqual({ path: 'D:\\bench\\ss-r-p-disk.vhdx', sizeBytes: 2 * 1024 ** 3, type: 'Fixed' });
    expect(() => planHypervSteps({ 'volume.sizeGb': 500, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 2 }, { host: 'h', vmName: 'vm', volumes: { '100': 'D:\\bench' } }, { base: 'ss-r-p' })).toThrow(/volume.sizeGb 500 has no entry/);
  });
});

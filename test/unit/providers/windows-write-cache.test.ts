// guest.writeCache in the plan (a step after the guest-disk step on a Windows guest, refused on a
// Linux one) and the guest script's answer as the runner reads it.
import { describe, expect, it } from 'vitest';
import { InvalidArgument, ParseError } from '../../../src/errors.ts';
import type { VsphereTargetConfig } from '../../../src/providers/vsphere/config.ts';
import { GUEST_WINDOWS_DISK_OPERATION, planVsphereSteps } from '../../../src/providers/vsphere/steps.ts';
import { GUEST_WRITE_CACHE_OPERATION, writeCacheWanted } from '../../../src/providers/guest-settings-axes.ts';
import { parseDiskCacheState } from '../../../src/providers/windows-guest.ts';
import { TOOLS_GUEST_CACHE_BODY } from '../../../src/providers/windows-write-cache-script.ts';

const target: VsphereTargetConfig = {
  vcenter: { url: 'https://vc.example/sdk', username: 'bench@vsphere.local', password: 's3cret-pw', thumbprint: 'AA:BB' },
  datacenter: 'DC0',
  host: 'esx01',
  vm: 'bench-vm',
  datastore: 'LocalDS_0',
  allowedDevices: [],
};
const win = { ...target, guestOs: 'windows' as const, guestWorkdir: 'C:\\storsweep' };
const names = { prefix: 'ss-r1-p7' };
const axes = { 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 };

describe('guest.writeCache in the plan', () => {
  it('a Windows guest: the write cache step comes right after the guest-disk step and creates a guest-write-cache object', () => {
    const steps = planVsphereSteps({ ...axes, 'guest.writeCache': 'disabled' }, win, names);
    expect(steps.map((s) => s.operation).slice(-2)).toEqual([GUEST_WINDOWS_DISK_OPERATION, GUEST_WRITE_CACHE_OPERATION]);
    expect(steps.at(-1)).toEqual({
      step: 'guest-settings',
      provider: 'vsphere',
      operation: GUEST_WRITE_CACHE_OPERATION,
      arguments: { host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', writeCache: 'disabled' },
      destructive: false,
      creates: { kind: 'guest-write-cache', name: 'ss-r1-p7-guest-write-cache' },
    });
  });

  it('guest.writeCacheFlushing alone: the same step, setting only that', () => {
    expect(planVsphereSteps({ ...axes, 'guest.writeCacheFlushing': 'off' }, win, names).at(-1)!.arguments).toEqual({ host: 'esx01', vm: 'bench-vm', datacenter: 'DC0', flushing: 'off' });
  });

  it('no axis, no step', () => {
    expect(planVsphereSteps(axes, win, names).map((s) => s.operation)).not.toContain(GUEST_WRITE_CACHE_OPERATION);
  });

  it('a Linux guest refuses it, and a value other than enabled or disabled is refused', () => {
    expect(() => planVsphereSteps({ ...axes, 'guest.writeCache': 'enabled' }, target, names)).toThrow(InvalidArgument);
    expect(() => writeCacheWanted({ 'guest.writeCache': 'enabled' }, 'linux')).toThrow(/Windows guest's disk write cache/);
    expect(() => writeCacheWanted({ 'guest.writeCache': 'on' }, 'windows')).toThrow(/expected one of enabled, disabled/);
    expect(writeCacheWanted({ 'guest.writeCache': 'enabled' }, 'windows')).toEqual({ writeCache: 'enabled' });
    expect(() => writeCacheWanted({ 'guest.writeCacheFlushing': 'off' }, 'linux')).toThrow(/guest\.writeCacheFlushing: a Windows guest's/);
    expect(() => writeCacheWanted({ 'guest.writeCacheFlushing': 'disabled' }, 'windows')).toThrow(/expected one of on, off/);
    expect(writeCacheWanted({ 'guest.writeCache': 'disabled', 'guest.writeCacheFlushing': 'off' }, 'windows')).toEqual({ writeCache: 'disabled', flushing: 'off' });
  });
});

describe('the guest script and its answer', () => {
  it('sends the documented control codes, with ParametersSavable false', () => {
    // ntdddisk.h: GET_CACHE_INFORMATION 0x740D4, SET_CACHE_INFORMATION 0x7C0D8 (508120), GET_CACHE_SETTING 0x740E0
    expect(TOOLS_GUEST_CACHE_BODY).toContain('Ioctl(h, 0x740D4,');
    expect(TOOLS_GUEST_CACHE_BODY).toContain('Ioctl(h, 0x7C0D8, info, true)');
    expect(TOOLS_GUEST_CACHE_BODY).toContain('Ioctl(h, 0x740E0,');
    // SET_CACHE_SETTING 0x7C0E4, with Version the structure's size
    expect(TOOLS_GUEST_CACHE_BODY).toContain('Ioctl(h, 0x7C0E4, s, true)');
    expect(TOOLS_GUEST_CACHE_BODY).toContain('s.Version = Marshal.SizeOf(typeof(CacheSetting));');
    expect(0x7c0d8).toBe(508120);
    expect(TOOLS_GUEST_CACHE_BODY).toContain('info.ParametersSavable = false;');
    // the here-string closes at the start of a line, as PowerShell requires
    expect(TOOLS_GUEST_CACHE_BODY).toMatch(/\n'@\n/);
  });

  it('reads ConvertTo-Json of the result object; refuses anything else', () => {
    const text = '{"WriteCacheEnabled":false,"ReadCacheEnabled":true,"ParametersSavable":false,"IsPowerProtected":false,"State":"Normal"}\r\n';
    expect(parseDiskCacheState(text, 'g')).toEqual({ WriteCacheEnabled: false, ReadCacheEnabled: true, ParametersSavable: false, IsPowerProtected: false, State: 'Normal' });
    expect(() => parseDiskCacheState('{"WriteCacheEnabled":"True","ReadCacheEnabled":true,"ParametersSavable":false,"IsPowerProtected":false,"State":"Normal"}', 'g')).toThrow(ParseError);
    expect(() => parseDiskCacheState('{"WriteCacheEnabled":true,"ReadCacheEnabled":true,"ParametersSavable":false,"IsPowerProtected":false,"State":"Odd"}', 'g')).toThrow(ParseError);
    expect(() => parseDiskCacheState('[]', 'g')).toThrow(ParseError);
    expect(() => parseDiskCacheState('', 'g')).toThrow(ParseError);
  });
});

// The Hyper-V provider's environment fingerprint over a real OpenSSH server whose PATH holds the
// strict powershell.exe stand-in: host and guest Windows build (Get-CimInstance Win32_OperatingSystem,
// the guest through PowerShell Direct) and diskspd's version from its usage banner (diskspd -?).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { describeHypervGuest } from '../../src/providers/hyperv/fingerprint.ts';
import { runCalls } from '../../src/providers/hyperv/powershell.ts';
import { createHypervProvider } from '../../src/providers/hyperv/provider.ts';
import { defaultHypervState, GUEST_CREDENTIAL, readPsLog, seedHypervState } from '../../src/lab/harness/windows/state.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

let hv: WindowsStandin;
let stateDir: string;
const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [] };

beforeAll(async () => {
  hv = await startWindowsStandin('ss-hvfp-');
  stateDir = hv.stateDir;
});

afterAll(async () => {
  await hv?.stop();
});

const connect = () => hv.connect();

describe('hyperv fingerprint', () => {
  it('records the host\'s and the guest\'s Windows edition and build and the guest\'s diskspd version', async () => {
    const state = defaultHypervState() as { vms: Record<string, Record<string, unknown>> } & Record<string, unknown>;
    state.hostOs = { Caption: 'Microsoft Windows Server 2019 Datacenter', Version: '10.0.17763', BuildNumber: '17763' };
    state.vms['bench-vm']!.guestOs = { Caption: 'Microsoft Windows Server 2022 Standard', Version: '10.0.20348', BuildNumber: '20348' };
    await seedHypervState(stateDir, state);
    const runner = await connect();
    try {
      const p = createHypervProvider(target, runner);
      expect(await p.describe!()).toEqual({ 'hyperv.host.os': 'Microsoft Windows Server 2019 Datacenter', 'hyperv.host.osBuild': '10.0.17763' });
      const guest = await describeHypervGuest(runner, 'bench-vm', GUEST_CREDENTIAL, 'C:\\Tools\\diskspd.exe');
      expect(guest).toEqual({ 'guest.os': 'Microsoft Windows Server 2022 Standard', 'guest.osBuild': '10.0.20348', 'guest.tool': expect.stringMatching(/^diskspd \d+\.\d+(\.\d+)? \(\d{4}\/\d{1,2}\/\d{1,2}\)$/) });
      const log = await readPsLog(stateDir);
      // the guest's OS through PowerShell Direct, diskspd asked only for its usage banner
      expect(JSON.stringify(log)).toContain('"-?"');
      expect(log.some((e) => e.shape === 'guest-call' && JSON.stringify(e.data).includes('Win32_OperatingSystem'))).toBe(true);
    } finally {
      await runner.close();
    }
  });

  it('the stand-in answers Get-CimInstance only for Win32_OperatingSystem, as WMI does for a class it does not have', async () => {
    await seedHypervState(stateDir);
    const runner = await connect();
    try {
      await expect(runCalls(runner, [{ cmdlet: 'Get-CimInstance', params: { ClassName: 'Win32_NoSuchClass' }, select: ['Caption'] }])).rejects.toThrow(/Invalid class/);
    } finally {
      await runner.close();
    }
  });
});

// The Hyper-V provider's environment fingerprint over a real OpenSSH server whose PATH holds the
// strict powershell.exe stand-in: host and guest Windows build (Get-CimInstance Win32_OperatingSystem,
// the guest through PowerShell Direct) and diskspd's version from its usage banner (diskspd -?).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import type { HypervTargetConfig } from '../../src/providers/hyperv/config.ts';
import { describeHypervGuest } from '../../src/providers/hyperv/fingerprint.ts';
import { runCalls } from '../../src/providers/hyperv/powershell.ts';
import { createHypervProvider } from '../../src/providers/hyperv/provider.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { defaultHypervState, GUEST_CREDENTIAL, readPsLog, seedHypervState, WINDOWS_HARNESS_DIR } from '../../src/lab/harness/windows/state.ts';

let dir: string;
let stateDir: string;
let sshd: SshdHandle;
let keyPath: string;
let knownHosts: string;
const target: HypervTargetConfig = { host: 'hv-standin', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [] };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hvfp-'));
  stateDir = path.join(dir, 'state');
  const key = await ensureKeyPair(path.join(dir, 'client_key'));
  keyPath = key.privateKeyPath;
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], pathPrefix: [WINDOWS_HARNESS_DIR], env: { STORSWEEP_STANDIN_STATE: stateDir } });
  knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
});

afterAll(async () => {
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const connect = () => connectSsh({ host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: keyPath, knownHostsFile: knownHosts });

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

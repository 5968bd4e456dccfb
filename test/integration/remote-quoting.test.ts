// Hostile names against the remote command paths. Each value is either rejected before anything is
// sent (validation), or arrives at the stand-in as ONE literal argument / data string (inert). A
// canary file that any executed injection would create must never appear.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../src/errors.ts';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import { filesystemUnmountArgv } from '../../src/providers/esxi-shell/esxcli.ts';
import { planEsxiShellSteps } from '../../src/providers/esxi-shell/plan.ts';
import { planHypervSteps } from '../../src/providers/hyperv/plan.ts';
import { runCalls, runInGuest } from '../../src/providers/hyperv/powershell.ts';
import type { CommandRunner } from '../../src/ssh/command-runner.ts';
import { shJoin } from '../../src/ssh/quote.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { ESXI_HARNESS_DIR, readCommands, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import { GUEST_CREDENTIAL, readPsLog, seedHypervState, WINDOWS_HARNESS_DIR } from '../../src/lab/harness/windows/state.ts';

let dir: string;
let stateDir: string;
let canary: string;
let sshd: SshdHandle;
let runner: CommandRunner;

const hostile = () => [
  `x; touch ${canary}`,
  `$(touch ${canary})`,
  `\`touch ${canary}\``,
  `'; touch ${canary}; '`,
  `"; touch ${canary}; "`,
  `x' && touch ${canary} #`,
  `'; Remove-Item -Recurse C:\\ #`,
  `$(New-Item ${canary})`,
  `x | touch ${canary}`,
];
const withNewline = () => [`x\ntouch ${canary}`, `x\rtouch ${canary}`];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-quote-'));
  stateDir = path.join(dir, 'state');
  canary = path.join(dir, 'CANARY');
  await seedEsxiState(stateDir);
  await seedHypervState(stateDir);
  const key = await ensureKeyPair(path.join(dir, 'client_key'));
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], pathPrefix: [ESXI_HARNESS_DIR, WINDOWS_HARNESS_DIR], env: { STORSWEEP_STANDIN_STATE: stateDir } });
  const knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
  runner = await connectSsh({ host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: key.privateKeyPath, knownHostsFile: knownHosts });
});

afterAll(async () => {
  await runner?.close();
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('ESXi shell (POSIX sh over SSH)', () => {
  it('provider builders and plans reject every hostile label, device and path', () => {
    for (const v of [...hostile(), ...withNewline()]) {
      expect(() => filesystemUnmountArgv(v)).toThrow(InvalidArgument);
      const target = { host: 'h', vmid: '1', vmfsDevice: v, allowedDevices: [] };
      expect(() => planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, { base: 'ss-r-p' })).toThrow(InvalidArgument);
      expect(() => planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { ...target, vmfsDevice: undefined, datastoreVolumePath: '/vmfs/volumes/ds1' }, { base: v })).toThrow(InvalidArgument);
    }
  });

  it('a hostile value that gets past validation is still one inert argument at the remote tool', async () => {
    for (const v of hostile()) {
      const r = await runner.run(shJoin(['esxcli', 'storage', 'filesystem', 'unmount', '-l', v]));
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('No volume with label');
    }
    const logged = (await readCommands(stateDir)).map((c) => c.argv);
    expect(logged).toEqual(hostile().map((v) => ['storage', 'filesystem', 'unmount', '-l', v]));
    expect(existsSync(canary)).toBe(false);
  });

  it('newlines are refused by the quoting layer itself', () => {
    for (const v of withNewline()) expect(() => shJoin(['esxcli', v])).toThrow(/newline/);
  });
});

describe('PowerShell (-EncodedCommand with a JSON data blob)', () => {
  it('hyperv plans reject hostile VM names, volume folders and owned names', () => {
    for (const v of [...hostile(), ...withNewline()]) {
      const target = { host: 'h', vmName: 'vm', volumes: { '100': 'D:\\bench' } };
      expect(() => planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 1 }, { ...target, vmName: v }, { base: 'ss-r-p' })).toThrow(InvalidArgument);
      expect(() => planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 1 }, { ...target, volumes: { '100': v } }, { base: 'ss-r-p' })).toThrow(InvalidArgument);
      expect(() => planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-fixed', 'disk.sizeGb': 1 }, target, { base: v })).toThrow(InvalidArgument);
    }
  });

  it('hostile strings travel as data: the cmdlet receives them literally and nothing runs', async () => {
    await seedHypervState(stateDir);
    for (const v of [...hostile(), ...withNewline()]) {
      expect(await runCalls(runner, [{ cmdlet: 'Get-Item', params: { LiteralPath: v, ErrorAction: 'SilentlyContinue' }, select: ['FullName'] }])).toEqual([]);
    }
    const guest = await runInGuest(runner, 'bench-vm', GUEST_CREDENTIAL, 'diskspd.exe', ['-Rxml', ...hostile()]);
    expect(guest.exitCode).toBe(1);
    const log = await readPsLog(stateDir);
    expect(log.slice(0, -1).map((l) => l.data.calls![0]!.params.LiteralPath)).toEqual([...hostile(), ...withNewline()]);
    expect(log.at(-1)!.data.argv).toEqual(['-Rxml', ...hostile()]);
    expect(existsSync(canary)).toBe(false);
  });
});

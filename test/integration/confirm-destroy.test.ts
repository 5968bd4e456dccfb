// `--confirm-destroy` through the CLI, on a Hyper-V pass-through plan (issue 11, items 3 and 8):
// the confirmation must name exactly what the destructive steps destroy — the host disk by number
// and serial, and the raw guest drive (diskspd `#1`) the workload writes to (a pass-through disk is
// blank in the guest: a physical drive is the only target it has). The refusals happen before
// anything connects; the accepted run gets as far as connecting (to a closed port).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from './helpers/cli.ts';

let dir: string;
const inventory = (guestTestPath: string) =>
  [
    'sshHosts:',
    '  hv:',
    '    host: 127.0.0.1',
    '    port: 9', // discard: nothing listens, the connection is refused at once
    '    user: admin',
    '    password: ${env:SS_TEST_HV_PW}',
    '    knownHostsFile: ./known_hosts',
    'targets:',
    '  hv-pt:',
    '    provider: hyperv',
    '    sshHost: hv',
    '    vmName: bench-vm',
    '    volumes:',
    `      "100": 'D:\\bench'`,
    '    allowedDisks:',
    '      - { number: 2, serialNumber: "S4EWNX0R123456" }',
    '    passthroughDisk: 2',
    '    guestCredential:',
    '      username: admin',
    '      password: ${env:SS_TEST_HV_PW}',
    `    guestTestPath: '${guestTestPath}'`,
    '',
  ].join('\n');
const playbook = ['name: pt', 'target: hv-pt', 'matrix:', '  disk:', '    format: [passthrough]', '  workload:', '    profile: [cdm5]', 'repeat: 1', ''].join('\n');
const env = { SS_TEST_HV_PW: 'not-a-real-password' };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-confirm-'));
  await fs.writeFile(path.join(dir, 'known_hosts'), '');
  await fs.writeFile(path.join(dir, 'pb.yaml'), playbook);
  await fs.writeFile(path.join(dir, 'file.yaml'), inventory('T:\\storsweep.dat'));
  await fs.writeFile(path.join(dir, 'raw.yaml'), inventory('#1'));
  await fs.writeFile(path.join(dir, 'partition.yaml'), inventory('E:'));
  await fs.writeFile(path.join(dir, 'device-path.yaml'), inventory('\\\\.\\PhysicalDrive1'));
  await fs.writeFile(path.join(dir, 'ssh-pb.yaml'), playbook.replace('target: hv-pt', 'target: guest').replace(/ {2}disk:\n {4}format: \[passthrough\]\n/, ''));
});
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const run = (inv: string, ...extra: string[]) => runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, inv), '--out', path.join(dir, 'runs'), '--no-report', ...extra], { cwd: dir, env });

describe('run --confirm-destroy on a Hyper-V pass-through plan', () => {
  it('"yes" is refused, naming the disk by number and serial and the guest drive; an extra name is refused; the exact names are accepted', async () => {
    const yes = await run('raw.yaml', '--confirm-destroy', 'yes');
    expect(yes.code).toBe(1);
    expect(yes.stderr).toContain('refused: this plan has 3 destructive step(s) that destroy data on #1, disk2:S4EWNX0R123456 (host disk 2, serial/id S4EWNX0R123456)');
    expect(yes.stderr).toContain('not destroyed by this plan: "yes"');
    expect(yes.stderr).toMatch(/--confirm-destroy #1,disk2:S4EWNX0R123456\n$/);
    expect(stackTraceLines(yes.stderr)).toEqual([]);
    const extra = await run('raw.yaml', '--confirm-destroy', '#1,disk2:S4EWNX0R123456,disk3:S4EWNX0R123456');
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain('not destroyed by this plan: "disk3:S4EWNX0R123456"');
    // nothing was started for a refused run
    await expect(fs.readdir(path.join(dir, 'runs'))).rejects.toThrow(/ENOENT/);
    const exact = await run('raw.yaml', '--confirm-destroy', '#1,disk2:S4EWNX0R123456');
    expect(exact.stderr).not.toContain('refused');
    expect(exact.stderr).toContain('ECONNREFUSED');
  });

  it('a workload on a raw guest drive (#1) must be named too; --dry-run shows every name', async () => {
    const dry = await run('raw.yaml', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^DESTRUCTIVE \(destroys #1\) \S+ workload: hyperv diskspd /m);
    expect(dry.stdout).toContain('destroys data on #1, disk2:S4EWNX0R123456 (confirm with --confirm-destroy #1,disk2:S4EWNX0R123456)');
    const diskOnly = await run('raw.yaml', '--confirm-destroy', 'disk2:S4EWNX0R123456');
    expect(diskOnly.code).toBe(1);
    expect(diskOnly.stderr).toContain('(not confirmed: #1)');
    const device = await run('device-path.yaml', '--dry-run');
    expect(device.stdout).toContain('destroys data on \\\\.\\PhysicalDrive1, disk2:S4EWNX0R123456');
  });

  it('pass-through hands the guest a blank disk: a test file (T:\\storsweep.dat) or a partition (E:) cannot be on it, and every command refuses it at the passthrough value and at the inventory guestTestPath', { timeout: 120_000 }, async () => {
    const runDirs = async () => (await fs.readdir(path.join(dir, 'runs')).catch(() => [])).length;
    const before = await runDirs();
    for (const inv of ['file.yaml', 'partition.yaml']) {
      for (const r of await Promise.all([runCli(['validate', path.join(dir, 'pb.yaml'), '-i', path.join(dir, inv)], { cwd: dir, env }), run(inv, '--dry-run'), run(inv, '--confirm-destroy', 'disk2:S4EWNX0R123456')])) {
        expect(r.code, inv).toBe(2);
        expect(r.stderr, inv).toMatch(/pb\.yaml:5:14: matrix\.disk\.format\[0\]: target "hv-pt" \(hyperv\) cannot build disk\.format=passthrough: hv: disk\.format passthrough measures the raw host disk disk2:S4EWNX0R123456, which reaches the guest blank \(no partition, no volume; storsweep does not partition or format it in the guest.*\), but the inventory's guestTestPath "(T:\\\\storsweep\.dat|E:)" is not a physical drive/);
        // and at the inventory's guestTestPath, where the fix goes
        expect(r.stderr, inv).toMatch(new RegExp(`${inv.replace('.', '\\.')}:\\d+:20: targets\\.hv-pt\\.guestTestPath: target "hv-pt" \\(hyperv\\): hv: disk\\.format passthrough measures`));
      }
    }
    // nothing was started
    expect(await runDirs()).toBe(before);
  });

  it('validate refuses a Linux test file that hides a device (relative, /proc) at its line', async () => {
    for (const [testFile, why] of [
      ['../dev/sdz', 'must be an absolute path'],
      ['/proc/self/root/dev/sdz', 'must not be under /proc'],
    ]) {
      const inv = ['sshHosts:', '  g:', '    host: 127.0.0.1', '    user: root', '    password: ${env:SS_TEST_HV_PW}', '    knownHostsFile: ./known_hosts', 'targets:', '  guest:', '    provider: ssh', '    sshHost: g', '    workdir: /tmp/bench', `    testFile: '${testFile}'`, ''];
      await fs.writeFile(path.join(dir, 'ssh.yaml'), inv.join('\n'));
      const r = await runCli(['validate', path.join(dir, 'ssh-pb.yaml'), '-i', path.join(dir, 'ssh.yaml')], { cwd: dir, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`ssh.yaml:12:15: targets.guest.testFile: ${why}`);
      const dry = await runCli(['run', path.join(dir, 'ssh-pb.yaml'), '-i', path.join(dir, 'ssh.yaml'), '--dry-run'], { cwd: dir, env });
      expect(dry.code).toBe(2);
    }
  });
});

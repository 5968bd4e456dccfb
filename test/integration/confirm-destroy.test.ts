// `--confirm-destroy` through the CLI, on a Hyper-V pass-through plan (issue 11, items 3 and 8):
// the confirmation must name exactly what the destructive steps destroy — the host disk by number
// and serial. The workload measures the disk the guest-disk step found in the guest (issue 14), not
// a drive named in the inventory, so no guest drive (`#1`) is named. The refusals happen before
// anything connects; the accepted run gets as far as connecting (to a closed port).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';

let dir: string;
const inventory = (extra: string[] = []) =>
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
    ...extra,
    '',
  ].join('\n');
const playbook = ['name: pt', 'target: hv-pt', 'matrix:', '  disk:', '    format: [passthrough]', '  workload:', '    profile: [cdm5]', 'repeat: 1', ''].join('\n');
const env = { SS_TEST_HV_PW: 'not-a-real-password' };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-confirm-'));
  await fs.writeFile(path.join(dir, 'known_hosts'), '');
  await fs.writeFile(path.join(dir, 'pb.yaml'), playbook);
  await fs.writeFile(path.join(dir, 'pt.yaml'), inventory());
  // inventories written for storsweep before the guest-disk lookup
  await fs.writeFile(path.join(dir, 'old-raw.yaml'), inventory(["    guestTestPath: '#1'"]));
  await fs.writeFile(path.join(dir, 'old-file.yaml'), inventory(["    guestTestPath: 'T:\\storsweep.dat'"]));
  await fs.writeFile(path.join(dir, 'ssh-pb.yaml'), playbook.replace('target: hv-pt', 'target: guest').replace(/ {2}disk:\n {4}format: \[passthrough\]\n/, ''));
});
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const run = (inv: string, ...extra: string[]) => runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, inv), '--out', path.join(dir, 'runs'), '--no-report', ...extra], { cwd: dir, env });

describe('run --confirm-destroy on a Hyper-V pass-through plan', () => {
  it('"yes" is refused, naming the disk by number and serial; a guest drive (#1) is not part of the plan and is refused as extra; the exact name is accepted', async () => {
    const [yes, extra] = await Promise.all([run('pt.yaml', '--confirm-destroy', 'yes'), run('pt.yaml', '--confirm-destroy', '#1,disk2:S4EWNX0R123456')]);
    expect(yes.code).toBe(1);
    expect(yes.stderr).toContain('refused: this plan has 3 destructive step(s) that destroy data on disk2:S4EWNX0R123456 (host disk 2, serial/id S4EWNX0R123456)');
    expect(yes.stderr).toContain('not destroyed by this plan: "yes"');
    expect(yes.stderr).toMatch(/--confirm-destroy disk2:S4EWNX0R123456\n$/);
    expect(stackTraceLines(yes.stderr)).toEqual([]);
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain('not destroyed by this plan: "#1"');
    // nothing was started for a refused run
    await expect(fs.readdir(path.join(dir, 'runs'))).rejects.toThrow(/ENOENT/);
    const exact = await run('pt.yaml', '--confirm-destroy', 'disk2:S4EWNX0R123456');
    expect(exact.stderr).not.toContain('refused');
    expect(exact.stderr).toContain('ECONNREFUSED');
  });

  it('--dry-run: the offline, attach and guest-disk steps name the host disk; the workload step destroys nothing of its own', async () => {
    const dry = await run('pt.yaml', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^DESTRUCTIVE \(destroys disk2:S4EWNX0R123456\) \S+ guest-disk: hyperv Set-Disk \(guest\)/m);
    expect(dry.stdout).not.toMatch(/^DESTRUCTIVE .* workload: /m);
    expect(dry.stdout).toContain('destroys data on disk2:S4EWNX0R123456 (confirm with --confirm-destroy disk2:S4EWNX0R123456)');
  });

  it('an inventory that still names guestTestPath is refused at that line by validate, run --dry-run and run (it could name another disk); nothing is started', { timeout: 120_000 }, async () => {
    const runDirs = async () => (await fs.readdir(path.join(dir, 'runs')).catch(() => [])).length;
    const before = await runDirs();
    for (const inv of ['old-raw.yaml', 'old-file.yaml']) {
      for (const r of await Promise.all([runCli(['validate', path.join(dir, 'pb.yaml'), '-i', path.join(dir, inv)], { cwd: dir, env }), run(inv, '--dry-run'), run(inv, '--confirm-destroy', 'disk2:S4EWNX0R123456')])) {
        expect(r.code, inv).toBe(2);
        expect(r.stderr, inv).toMatch(new RegExp(`${inv.replace('.', '\\.')}:21:20: targets\\.hv-pt\\.guestTestPath: guestTestPath is no longer used: storsweep finds the disk it attached in the guest by its SCSI location \\(scsiLocation\\) and size`));
        expect(r.stderr, inv).toContain('Remove guestTestPath (and any --confirm-destroy naming it)');
      }
    }
    expect(await runDirs()).toBe(before);
  });

  it('validate refuses a Linux test file that hides a device (relative, /proc) at its line', async () => {
    const cases = [
      ['ssh-relative.yaml', '../dev/sdz', 'must be an absolute path'],
      ['ssh-proc.yaml', '/proc/self/root/dev/sdz', 'must not be under /proc'],
    ] as const;
    // each its own inventory, validate and run --dry-run: all at once
    const checked = cases.map(async ([name, testFile, why]) => {
      const inv = ['sshHosts:', '  g:', '    host: 127.0.0.1', '    user: root', '    password: ${env:SS_TEST_HV_PW}', '    knownHostsFile: ./known_hosts', 'targets:', '  guest:', '    provider: ssh', '    sshHost: g', '    workdir: /tmp/bench', `    testFile: '${testFile}'`, ''];
      await fs.writeFile(path.join(dir, name), inv.join('\n'));
      const [r, dry] = await Promise.all([
        runCli(['validate', path.join(dir, 'ssh-pb.yaml'), '-i', path.join(dir, name)], { cwd: dir, env }),
        runCli(['run', path.join(dir, 'ssh-pb.yaml'), '-i', path.join(dir, name), '--dry-run'], { cwd: dir, env }),
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${name}:12:15: targets.guest.testFile: ${why}`);
      expect(dry.code).toBe(2);
    });
    await Promise.all(checked);
  });
});

// preflight's VM and host-metric checks both ways on the lab (issue 29): VMware Tools stopped, a VM
// without disk.EnableUUID, a host that offers no µs latency counters (the 5.5 profile).
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { labPaths, TOOLS_LINUX_VM } from '../../src/lab/lab.ts';
import { listVcsimLuns } from '../../src/lab/vsphere-inventory.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { useEmbeddedLab } from '../helpers/embedded-lab.ts';

interface Report {
  targets: Array<{ target: string; checks: Array<{ check: string; status: string; detail: string; remedy?: string }> }>;
}
const SET_VM_OPTION = new URL('../harness/pyvmomi/set_vm_option.py', import.meta.url).pathname;

const lab = useEmbeddedLab('ss-pfvm-', { vcsim: true, listLuns: (info) => listVcsimLuns(info) });

const preflight = async (playbook: string) => {
  const r = await runCli(['preflight', path.join(REPO_ROOT, 'playbooks', playbook), '-i', labPaths(lab.root).inventory, '--json', '--no-canary', '-o', path.join(lab.root, 'runs')], { cwd: lab.root });
  return { code: r.code, checks: (JSON.parse(r.stdout) as Report).targets[0]!.checks };
};
const setVmOption = async (vm: string, key: string, value: string) => {
  const password = (await fs.readFile(labPaths(lab.root).vcsimPassword, 'utf8')).trim();
  await new Promise<void>((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [SET_VM_OPTION], { timeout: 60_000 }, (err, _out, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve()));
    p.stdin!.end(JSON.stringify({ url: lab.state.vcsim!.url, username: lab.state.vcsim!.username, password, certFile: lab.state.vcsim!.certFile, vm, key, value }));
  });
};

describe('VMware Tools', () => {
  it('running: ✓ with its version; stopped: ✗ for a guest reached through them, and the guest unreachable', async () => {
    const on = await preflight('linux-guest-tools.yaml');
    expect(on.code).toBe(0);
    expect(on.checks.find((c) => c.check === 'VMware Tools')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^running, version \d+/) });
    await lab.control.guestTools(TOOLS_LINUX_VM, false);
    onTestFinished(() => lab.control.guestTools(TOOLS_LINUX_VM, true));
    const off = await preflight('linux-guest-tools.yaml');
    expect(off.code).toBe(1);
    expect(off.checks.find((c) => c.check === 'VMware Tools')).toMatchObject({ status: 'fail', detail: 'not running (guestToolsNotRunning)' });
    expect(off.checks.find((c) => c.check === 'guest reachable')).toMatchObject({ status: 'fail', detail: expect.stringContaining('GuestOperationsUnavailable') });
  });
});

describe('disk.EnableUUID', () => {
  it('FALSE on the VM: ✗ saying the guest would get no wwn-0x link, exit 1', async () => {
    await setVmOption('DC0_H0_VM0', 'disk.EnableUUID', 'FALSE');
    onTestFinished(() => setVmOption('DC0_H0_VM0', 'disk.EnableUUID', 'TRUE'));
    const r = await preflight('vmfs6-block-size.yaml');
    expect(r.code).toBe(1);
    expect(r.checks.find((c) => c.check === 'disk.EnableUUID')).toMatchObject({ status: 'fail', detail: expect.stringContaining('"FALSE" on the VM: the guest gets no wwn-0x link'), remedy: expect.stringContaining('disk.EnableUUID = TRUE') });
  });
});

describe('host metrics', () => {
  it('µs counters offered: ✓; a host that offers only whole-ms latency (the 5.5 profile): ! with what it means', async () => {
    expect((await preflight('vmfs6-block-size.yaml')).checks.find((c) => c.check === 'host metrics')).toMatchObject({ status: 'ok', detail: expect.stringContaining('µs latency counters') });
    await lab.control.version('5.5');
    onTestFinished(async () => void (await lab.control.version('8.0')));
    const r = await preflight('vmfs6-block-size.yaml');
    expect(r.checks.find((c) => c.check === 'host metrics')).toMatchObject({ status: 'warn', detail: expect.stringContaining('only whole-ms latency counters'), remedy: expect.stringContaining('under 1 ms') });
    // and the inventory's stated release no longer matches the host's
    expect(r.checks.find((c) => c.check === 'version')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/runs ESXi 5\.5.*inventory says 8\.0/) });
  });
});

// disk.EnableUUID = "1" turns the option on as "TRUE" does (the form the Kubernetes vSphere Cloud
// Provider docs set: `govc vm.change -e="disk.enableUUID=1"`, kubernetes/website PR #2989). On the
// vSphere lab the run's check accepts it and the harness gives the guest the disk's wwn-0x link, so
// the disk is found and measured; "0" is off, refused before anything is attached. The ESXi
// stand-in links a disk of a VM whose .vmx says "1".
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultEsxiState, ESXI_HARNESS_DIR, releaseEsxiGuestDisks, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import type { ResultRecord } from '../../src/results/record.ts';
import { runCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { readRun, runDirOf, useVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

const SET_VM_OPTION = new URL('../harness/pyvmomi/set_vm_option.py', import.meta.url).pathname;

/** an advanced VM option set by pyvmomi, as an administrator would; its value read back */
function setVmOption(l: VsphereLab, vm: string, key: string, value: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [SET_VM_OPTION], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`set_vm_option.py: ${stderr || err.message}`)) : resolve((JSON.parse(stdout) as { value: string | null }).value)));
    p.stdin!.end(JSON.stringify({ url: l.sim.url, username: l.sim.username, password: l.password, certFile: l.sim.certFile, vm, key, value }));
  });
}

describe('vSphere: disk.EnableUUID = 1', () => {
  const lab = useVsphereLab({ version: '8.0' });

  it('"1": the disk is found by its wwn-0x link and measured; "0": refused before anything is attached', async () => {
    expect(await setVmOption(lab, 'DC0_H0_VM0', 'disk.EnableUUID', '1')).toBe('1');
    const pb = await lab.writePlaybook('uuid1.yaml', diskPlaybook({ name: 'uuid1', target: 'lab-vcenter', format: 'thin' }));
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('uuid1'), '--no-report', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const recs = readRun(runDirOf(r), (db) => (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((x) => JSON.parse(x.record) as ResultRecord));
    expect(recs.length).toBeGreaterThan(0);
    for (const rec of recs) expect(String(rec.metadata?.deviceWwn)).toMatch(/^6000c29[0-9a-f]{25}$/);
    expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });

    expect(await setVmOption(lab, 'DC0_H0_VM0', 'disk.EnableUUID', '0')).toBe('0');
    const off = await runCli(['run', pb, '-i', lab.inventory, '--out', await lab.newRunsDir('uuid0'), '--no-report', '--json']);
    expect(off.code).toBe(1);
    expect(off.stdout + off.stderr).toMatch(/does not have disk\.EnableUUID = TRUE/);
    expect(await lab.leftovers()).toEqual({ datastores: [], disks: [], files: [] });
  }, 180_000);
});

describe('ESXi stand-in: a VM whose .vmx says disk.EnableUUID = "1"', () => {
  let dir: string;
  let stateDir: string;
  afterAll(async () => {
    if (stateDir) await releaseEsxiGuestDisks(stateDir);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets a wwn-0x link for the disk attached; "0" gets none', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-uuid1-esxi-'));
    stateDir = path.join(dir, 'state');
    const byIdDir = path.join(dir, 'guest-disks', 'by-id');
    const esxi = (tool: string, args: string[]) => execFileSync(path.join(ESXI_HARNESS_DIR, tool), args, { encoding: 'utf8', env: { ...process.env, STORSWEEP_STANDIN_STATE: stateDir } });
    const file = '/vmfs/volumes/datastore1/bench-vm/uuid1.vmdk';
    for (const [value, linked] of [['1', true], ['0', false]] as const) {
      const state = defaultEsxiState('8.0', { guestDisks: path.join(dir, 'guest-disks') }) as { vms: Record<string, Record<string, unknown>> };
      state.vms['1']!.extraConfig = { 'disk.EnableUUID': value };
      await seedEsxiState(stateDir, state);
      esxi('vmkfstools', ['-c', '64m', '-d', 'thin', file]);
      const hex = /^UUID is (.*)$/.exec(esxi('vmkfstools', ['-J', 'getuuid', file]).trim())![1]!.replace(/[\s-]/g, '').toLowerCase();
      esxi('vim-cmd', ['vmsvc/device.diskaddexisting', '1', file, '0', '1']);
      expect(fs.existsSync(byIdDir) ? fs.readdirSync(byIdDir) : [], value).toEqual(linked ? [`wwn-0x${hex}`] : []);
      esxi('vim-cmd', ['vmsvc/device.diskremove', '1', '0', '1', 'true']);
    }
  });
});

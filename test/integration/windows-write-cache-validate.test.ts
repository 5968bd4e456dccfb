// `validate` refuses guest.writeCache where the guest could never take it, at the value's
// file:line:col: on a Linux guest (its settings are guest.scheduler and guest.queueDepth), and a
// value that is not enabled or disabled, naming the allowed values. On a Windows guest the shipped
// playbook validates and plans the write cache step after the guest-disk step (torn down before
// it: the guest's own value is set back while the disk is attached).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { writeLabInventory } from '../helpers/lab-inventory-file.ts';

let lab: Awaited<ReturnType<typeof writeLabInventory>>;
beforeAll(async () => {
  lab = await writeLabInventory();
});
afterAll(async () => lab?.remove());

function playbook(target: string, guest: string[]): string {
  return ['name: wc', `target: ${target}`, 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin]', '    sizeGb: [1]', '  guest:', ...guest, '  workload:', '    profile: [cdm8-default]', ''].join('\n');
}

describe('guest.writeCache in validate', () => {
  it('refuses both Windows axes on a Linux guest at each value', async () => {
    const pb = path.join(lab.dir, 'linux.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter', ['    writeCache: [enabled, disabled]', '    writeCacheFlushing: [off]']));
    const r = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/linux\.yaml:10:18: .*Linux guest.*guest\.writeCache is a Windows guest's disk write cache policy/);
    expect(r.stderr).toMatch(/linux\.yaml:10:27: .*Linux guest/);
    expect(r.stderr).toMatch(/linux\.yaml:11:26: .*Linux guest.*guest\.writeCacheFlushing/);
  });

  it('refuses a value other than enabled or disabled, naming both', async () => {
    const pb = path.join(lab.dir, 'bad.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter-tools-windows', ['    writeCache: [enabled, off]', '    writeCacheFlushing: [on, disabled]']));
    const r = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/bad\.yaml:10:27: .*guest\.writeCache.*enabled, disabled/);
    expect(r.stderr).toMatch(/bad\.yaml:11:30: .*guest\.writeCacheFlushing.*on, off/);
  });

  it('the Linux settings stay refused on a Windows guest', async () => {
    const pb = path.join(lab.dir, 'win.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter-tools-windows', ['    writeCache: [enabled]', '    scheduler: [none]']));
    const r = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/win\.yaml:11:17: .*Windows guest.*guest\.scheduler/);
    expect(r.stderr).not.toMatch(/win\.yaml:10:/);
  });

  it('the shipped playbook validates and plans the write cache step after the guest-disk step', async () => {
    const pb = path.resolve('playbooks/windows-write-cache.yaml');
    const v = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(v.code, v.stderr).toBe(0);
    const p = await runCli(['run', pb, '-i', lab.inventory, '--dry-run', '--json']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/"step":"guest-disk"[\s\S]*"step":"guest-settings","provider":"vsphere","operation":"guest: set the disk write cache policy \(IOCTL_DISK_SET_CACHE_INFORMATION, IOCTL_DISK_SET_CACHE_SETTING\)"[\s\S]*"writeCache":"disabled"/);
  });
});

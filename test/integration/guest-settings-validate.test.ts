// `validate` refuses a guest setting the guest could never take, at the value's file:line:col with
// the allowed values: a scheduler name no blk-mq kernel has, a depth outside the axis's range, and
// either axis on a Windows guest. The shipped playbook validates and plans a settings step after the
// guest-disk step (torn down before it: the settings are restored while the disk is attached).
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
  return ['name: gs', `target: ${target}`, 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin]', '    sizeGb: [1]', '  guest:', ...guest, '  workload:', '    profile: [cdm8-default]', ''].join('\n');
}

describe('guest.scheduler and guest.queueDepth in validate', () => {
  it('refuses a scheduler no kernel offers and a depth out of range at file:line:col, naming what is allowed', async () => {
    const pb = path.join(lab.dir, 'bad.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter', ['    scheduler: [none, cfq]']));
    const r = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/bad\.yaml:10:23: .*guest\.scheduler.*none, mq-deadline, kyber, bfq; got "cfq"/);
    const deep = path.join(lab.dir, 'deep.yaml');
    await fs.writeFile(deep, playbook('lab-vcenter', ['    queueDepth: [32, 5000]']));
    const d = await runCli(['validate', deep, '-i', lab.inventory]);
    expect(d.code).not.toBe(0);
    expect(d.stderr).toMatch(/deep\.yaml:10:22: .*guest\.queueDepth.*1 to 1024/);
  });

  it('refuses both axes on a Windows guest at each value', async () => {
    const pb = path.join(lab.dir, 'win.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter-tools-windows', ['    scheduler: [mq-deadline]', '    queueDepth: [32]']));
    const r = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/win\.yaml:10:17: .*Windows guest.*guest\.scheduler is a Linux guest's sysfs setting/);
    expect(r.stderr).toMatch(/win\.yaml:11:18: .*Windows guest.*guest\.queueDepth/);
  });

  it('the shipped playbook validates and plans the settings step after the guest-disk step', async () => {
    const pb = path.resolve('playbooks/guest-queue-depth.yaml');
    const v = await runCli(['validate', pb, '-i', lab.inventory]);
    expect(v.code, v.stderr).toBe(0);
    const p = await runCli(['run', pb, '-i', lab.inventory, '--dry-run', '--json']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/"step":"guest-disk"[\s\S]*"step":"guest-settings"[\s\S]*"scheduler":"mq-deadline","queueDepth":4/);
  });
});

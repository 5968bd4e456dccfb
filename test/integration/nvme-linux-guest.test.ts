// disk.controller: nvme with a Linux guest: the guest would wait for a wwn-0x… link that udev never
// makes for an NVMe namespace (systemd rules.d/60-persistent-storage.rules: nvme-<wwid> and
// nvme-<model>_<serial> only), so validate, plan and run --dry-run refuse the pairing at the value's
// file:line:col; a Windows guest (found by serial, not by udev) and SCSI controllers stay allowed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { writeLabInventory } from '../helpers/lab-inventory-file.ts';

let lab: Awaited<ReturnType<typeof writeLabInventory>>;
beforeAll(async () => {
  lab = await writeLabInventory();
});
afterAll(async () => {
  await lab?.remove();
});

const playbook = (target: string, controllers: string) =>
  [
    'name: nvme-linux',
    `target: ${target}`,
    'matrix:',
    '  datastore:',
    '    kind: [existing]',
    '  disk:',
    '    format: [thin]',
    '    sizeGb: [1]',
    `    controller: ${controllers}`,
    '  workload:',
    '    profile: [quick]',
    '',
  ].join('\n');

describe('disk.controller nvme with a Linux guest', () => {
  it('validate, plan and run --dry-run refuse it at the value, naming udev’s rule', async () => {
    const pb = path.join(lab.dir, 'nvme-linux.yaml');
    await fs.writeFile(pb, playbook('lab-vcenter', '[pvscsi, nvme]'));
    const [validate, plan, dry] = await Promise.all([runCli(['validate', pb, '-i', lab.inventory]), runCli(['plan', pb, '-i', lab.inventory]), runCli(['run', pb, '-i', lab.inventory, '--dry-run'])]);
    for (const r of [validate, plan, dry]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    // line 9 `    controller: [pvscsi, nvme]`: "nvme" starts at column 26
    expect(validate.stderr).toContain(`${pb}:9:26: matrix.disk.controller[1]: "nvme" with target "lab-vcenter"'s Linux guest`);
    expect(validate.stderr).toMatch(/udev gives an NVMe namespace no wwn- link \(only nvme-eui\.<id> and nvme-<model>_<serial>/);
    expect(validate.stderr).not.toMatch(/controller\[0\]/);
    expect(plan.stderr).toBe(validate.stderr);
    expect(dry.stderr).toBe(validate.stderr);
  });

  it('SCSI controllers with a Linux guest, and nvme with a Windows guest, validate', async () => {
    const scsi = path.join(lab.dir, 'scsi-linux.yaml');
    await fs.writeFile(scsi, playbook('lab-vcenter', '[pvscsi, lsisas]'));
    const win = path.join(lab.dir, 'nvme-windows.yaml');
    await fs.writeFile(win, playbook('lab-vcenter-tools-windows', '[nvme]'));
    const [a, b] = await Promise.all([runCli(['validate', scsi, '-i', lab.inventory]), runCli(['validate', win, '-i', lab.inventory])]);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
  });
});

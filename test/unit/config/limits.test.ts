// Numbers with ranges and provider strings, refused by `validate` at file:line:col with the allowed
// range or pattern — before `run` would have created anything. Fixtures live in test/fixtures/config.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCompatibility, loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { inventorySchema } from '../../../src/config/inventory.ts';
import { playbookSchema } from '../../../src/config/playbook.ts';
import { MAX_TIMER_MS, MAX_TIMER_SEC } from '../../../src/limits.ts';
import { checkEsxi } from '../../../src/providers/esxi-shell/validate.ts';
import { checkHyperv } from '../../../src/providers/hyperv/validate.ts';
import { diagnosticsOf } from '../../helpers/config-errors.ts';

const DIR = 'test/fixtures/config';
const f = (name: string) => path.join(DIR, name);

const playbook = (name: string) => diagnosticsOf(() => loadPlaybook(f(name)));
const inventory = (name: string) => diagnosticsOf(() => loadInventory(f(name), {}));
const HV_ENV = { HV_GUEST_PASSWORD: 'a-long-enough-secret' };
const against = (pbName: string, invName: string) => diagnosticsOf(() => checkCompatibility(loadPlaybook(f(pbName)), loadInventory(f(invName), HV_ENV)));

describe('numbers in a playbook', () => {
  it('Node timer limit: 2147483 s is the largest whole-second timeout a timer holds', () => {
    expect(MAX_TIMER_SEC).toBe(2147483);
    expect(MAX_TIMER_SEC * 1000).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect((MAX_TIMER_SEC + 1) * 1000).toBeGreaterThan(MAX_TIMER_MS);
  });

  it('timeouts: stepSec 0 and workloadSlackSec 3000000 (which fired fio\'s timer after 1 ms) are refused with the range', () => {
    const F = f('pb-timeouts-range.yaml');
    expect(playbook('pb-timeouts-range.yaml')).toEqual([
      `${F}:7:12: timeouts.stepSec: expected whole seconds from 1 to 2147483 (Node's timer limit); got 0`,
      `${F}:8:21: timeouts.workloadSlackSec: expected whole seconds from 1 to 86400 (a day per pass at most); got 3000000`,
    ]);
  });

  it('absurd sizes, durations and counts: each one at its line with the allowed range', () => {
    const F = f('pb-absurd-numbers.yaml');
    expect(playbook('pb-absurd-numbers.yaml')).toEqual([
      `${F}:6:19: matrix.disk.sizeGb[1]: expected GiB above 0 and at most 65536 (64 TiB is the largest VHDX); got 1000000000`,
      `${F}:7:22: matrix.disk.blockSizeBytes[0]: expected a VHDX block size: a power of two from 1048576 (1 MiB) to 268435456 (256 MiB)`,
      `${F}:11:13: settings.fileSize: expected a size from 1m to 64t (1048576 to 70368744177664 bytes; 64 TiB is the largest VHDX); got 1000000000000000`,
      `${F}:12:15: settings.runtimeSec: expected whole seconds from 1 to 86400 (a day per pass at most); got 1e+300`,
      `${F}:13:12: settings.rampSec: expected whole seconds from 0 to 86400 (a day per pass at most); got -1`,
      `${F}:14:11: settings.passes: expected a number of passes from 1 to 100; got 1000000`,
      `${F}:15:16: settings.intervalSec: expected seconds from 0 to 86400 (a day at most); got 90000`,
      `${F}:16:9: repeat: expected a number of repetitions from 1 to 1000; got 5000`,
    ]);
  });

  it('custom workloads: fio iodepth 65536 / numjobs 100000 and diskspd -t100000 are refused with the tools\' limits', () => {
    const F = f('pb-absurd-workloads.yaml');
    expect(playbook('pb-absurd-workloads.yaml')).toEqual([
      `${F}:8:43: workloads.big-iodepth.fio.iodepth: fio option iodepth="65536": expected a whole number from 1 to 32768 (io_uring's limit of entries)`,
      `${F}:10:43: workloads.big-numjobs.fio.numjobs: fio option numjobs="100000": expected a whole number from 1 to 4096 (fio's maximum number of jobs)`,
      `${F}:12:5: workloads.big-diskspd: diskspd parameter -t100000="-t100000": expected threads from 1 to 4096`,
    ]);
  });

  it('edges: the largest and smallest allowed values pass, one beyond fails', () => {
    const base = { name: 'e', target: 't', matrix: { workload: { profile: ['cdm8-default'] } } };
    const ok = (extra: object) => playbookSchema.safeParse({ ...base, ...extra }).success;
    expect(ok({ timeouts: { stepSec: 2147483, workloadSlackSec: 86400 } })).toBe(true);
    expect(ok({ timeouts: { stepSec: 2147484 } })).toBe(false);
    expect(ok({ timeouts: { stepSec: 1.5 } })).toBe(false);
    expect(ok({ timeouts: { stepSec: 'abc' } })).toBe(false);
    expect(ok({ timeouts: { stepSec: Infinity } })).toBe(false);
    expect(playbookSchema.safeParse({ ...base, timeouts: { stepSec: 'abc' } }).error?.issues[0]?.message).toBe(`expected whole seconds from 1 to 2147483 (Node's timer limit); got "abc"`);
    expect(ok({ timeouts: { workloadSlackSec: 86401 } })).toBe(false);
    expect(ok({ settings: { fileSize: '64t', runtimeSec: 86400, rampSec: 0, passes: 100, intervalSec: 0.5 } })).toBe(true);
    expect(ok({ settings: { fileSize: '65t' } })).toBe(false);
    expect(ok({ settings: { fileSize: '512k' } })).toBe(false);
    expect(ok({ settings: { runtimeSec: 0 } })).toBe(false);
    expect(ok({ settings: { runtimeSec: 2.5 } })).toBe(false);
    expect(ok({ matrix: { disk: { format: ['vhdx-dynamic'], blockSizeBytes: [1048576, 268435456] }, workload: { profile: ['cdm8-default'] } } })).toBe(true);
    expect(ok({ matrix: { disk: { format: ['vhdx-dynamic'], blockSizeBytes: [3 * 1048576] }, workload: { profile: ['cdm8-default'] } } })).toBe(false);
  });
});

describe('numbers in an inventory', () => {
  it('concurrency, port, disk number and SCSI slots: each with its range', () => {
    const F = f('inv-numbers-range.yaml');
    expect(inventory('inv-numbers-range.yaml')).toEqual([
      `${F}:4:20: vcenters.vc.maxConcurrent: expected a number of steps from 1 to 64 (a sanity cap); got 1000`,
      `${F}:8:11: sshHosts.hv.port: expected a TCP port from 1 to 65535; got 0`,
      `${F}:18:19: targets.hv.allowedDisks[0].number: expected a Get-Disk number from 0 to 4096; got 5000`,
      `${F}:19:21: targets.hv.scsiController: expected a SCSI controller number from 0 to 3; got 4`,
      `${F}:20:19: targets.hv.scsiLocation: expected a SCSI location from 0 to 63; got 64`,
    ]);
  });
});

describe('what a target\'s planner refuses, validate refuses at the playbook\'s line', () => {
  it('disk.sizeGb: esxi-shell wants whole GiB up to 62 TiB (vmkfstools), Hyper-V whole GiB', () => {
    expect(against('pb-disk-size-esxi.yaml', 'inv-disk-size-targets.yaml')).toEqual([
      `${f('pb-disk-size-esxi.yaml')}:6:17: matrix.disk.sizeGb[1]: target "esx" (esxi-shell) needs disk.sizeGb in whole GiB up to 63488 (62 TiB, the largest VMDK); got 1.5`,
      `${f('pb-disk-size-esxi.yaml')}:6:22: matrix.disk.sizeGb[2]: target "esx" (esxi-shell) needs disk.sizeGb in whole GiB up to 63488 (62 TiB, the largest VMDK); got 64000`,
    ]);
    expect(against('pb-disk-size-hyperv.yaml', 'inv-disk-size-targets.yaml')).toEqual([
      `${f('pb-disk-size-hyperv.yaml')}:8:17: matrix.disk.sizeGb[1]: target "hv" (hyperv) needs disk.sizeGb in whole GiB; got 1.5`,
    ]);
  });

  it('a Hyper-V passthroughDisk that allowedDisks does not list', () => {
    expect(diagnosticsOf(() => loadInventory(f('inv-passthrough-not-allowed.yaml'), HV_ENV))).toEqual([
      `${f('inv-passthrough-not-allowed.yaml')}:14:22: targets.hv.passthroughDisk: disk 3 is not listed in allowedDisks (have: 2); a disk is taken offline only when the inventory allows it by number and serial`,
    ]);
  });
});

describe('provider strings: validate refuses what the providers refuse at run time', () => {
  it('Hyper-V vmName with a wildcard', () => {
    expect(inventory('inv-hyperv-vmname.yaml')).toEqual([
      `${f('inv-hyperv-vmname.yaml')}:11:13: targets.hv.vmName: expected a VM name of letters, digits, space, ".", "_" and "-" (max 100, starting with a letter or digit; no wildcards)`,
    ]);
  });

  it('Hyper-V diskspdPath that is not diskspd.exe', () => {
    expect(inventory('inv-hyperv-diskspd-path.yaml')).toEqual([
      `${f('inv-hyperv-diskspd-path.yaml')}:13:18: targets.hv.diskspdPath: expected diskspd.exe or an absolute path to it like C:\\Tools\\diskspd.exe`,
    ]);
  });

  it('Hyper-V volume folder with "..", a serial with an OSC escape', () => {
    const F = f('inv-hyperv-strings.yaml');
    expect(inventory('inv-hyperv-strings.yaml')).toEqual([
      `${F}:12:23: targets.hv.volumes.100: expected a drive-rooted folder like D:\\bench of letters, digits, space, ".", "_" and "-" (no "..")`,
      `${F}:14:36: targets.hv.allowedDisks[0].serialNumber: expected printable ASCII, max 128 characters`,
    ]);
  });

  it('ESXi vmid that is a name, not vim-cmd\'s numeric id', () => {
    expect(inventory('inv-esxi-vmid.yaml')).toEqual([`${f('inv-esxi-vmid.yaml')}:11:11: targets.esx.vmid: expected a numeric VM id as vim-cmd vmsvc/getallvms prints it`]);
  });

  it('a newline in workdir, a C1 control (CSI) in testFile', () => {
    const F = f('inv-workdir-newline.yaml');
    expect(inventory('inv-workdir-newline.yaml')).toEqual([
      `${F}:11:14: targets.guest.workdir: must not contain a control character (newline, tab, escape, …)`,
      `${F}:15:15: targets.local.testFile: must not contain a control character (newline, tab, escape, …)`,
    ]);
  });

  it('a control character in a datastore name (esxi-shell label rule; vsphere no control characters)', () => {
    const F = f('inv-datastore-control.yaml');
    expect(inventory('inv-datastore-control.yaml')).toEqual([
      `${F}:15:16: targets.esx.datastore: expected a datastore label of letters, digits, ".", "_" and "-" (max 80, starting with a letter or digit), or a datastore path /vmfs/volumes/<datastore>`,
      `${F}:23:16: targets.vc.datastore: must not contain a control character (newline, tab, escape, …)`,
    ]);
  });

  it('one predicate: every value the schema accepts, the provider check accepts, and the other way round', () => {
    const hv = (vmName: string) =>
      inventorySchema().safeParse({
        sshHosts: {},
        targets: { t: { provider: 'hyperv', sshHost: 'h', vmName, guestCredential: { username: 'u', password: '${env:X}' } } },
      }).success;
    for (const name of ['bench-vm', 'Bench VM 2', 'vm*', 'vm?', '', ' vm', 'a'.repeat(101), 'vm\n']) {
      let runtime = true;
      try {
        checkHyperv('vmName', name);
      } catch {
        runtime = false;
      }
      expect(hv(name), JSON.stringify(name)).toBe(runtime);
    }
    const esx = (vmid: unknown) =>
      inventorySchema().safeParse({ sshHosts: {}, targets: { t: { provider: 'esxi-shell', sshHost: 'h', vmid, guest: { workdir: '/w' } } } }).success;
    for (const vmid of [1, 42, '7', 0, -1, 1.5, 'vm', '01', 1e10]) {
      let runtime = true;
      try {
        checkEsxi('vmid', vmid);
      } catch {
        runtime = false;
      }
      expect(esx(vmid), JSON.stringify(vmid)).toBe(runtime);
    }
  });
});

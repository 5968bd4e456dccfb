// A thick disk must fit in its datastore; a thin one may overcommit (issue 29). Both lab hosts refuse
// as a real one does: the ESXi stand-in's `vmkfstools -c` and the vcsim harness's ReconfigVM_Task /
// CreateVirtualDisk_Task. Checked on the host's state afterwards: no file is left behind.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLANK_DEV, ESXI_HARNESS_DIR, readEsxiState, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { probe } from '../helpers/pyvmomi-probe.ts';

const GiB = 1024 ** 3;

describe('ESXi stand-in: vmkfstools -c on a 20 GiB VMFS6', () => {
  let dir: string;
  const tool = (name: string, ...argv: string[]) => {
    const r = spawnSync(path.join(ESXI_HARNESS_DIR, name), argv, { env: { ...process.env, STORSWEEP_STANDIN_STATE: dir }, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-thick-'));
    await seedEsxiState(dir);
    const dev = `/vmfs/devices/disks/${BLANK_DEV}`;
    expect(tool('partedUtil', 'mklabel', dev, 'gpt').code).toBe(0);
    const end = String(20480 * 2048 - 34);
    expect(tool('partedUtil', 'setptbl', dev, 'gpt', `1 2048 ${end} AA31E02A400F11DB9590000C2911D1B8 0`).code).toBe(0);
    expect(tool('vmkfstools', '-C', 'vmfs6', '-S', 'small', `${dev}:1`).code).toBe(0);
  });
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('refuses a 4000 GB eagerzeroedthick or zeroedthick disk, with the real message, and creates no file', async () => {
    for (const fmt of ['eagerzeroedthick', 'zeroedthick']) {
      const r = tool('vmkfstools', '-c', '4000g', '-d', fmt, `/vmfs/volumes/small/${fmt}.vmdk`);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Failed to create virtual disk: There is not enough space on the file system for the selected operation (13).');
    }
    const files = Object.keys((await readEsxiState(dir)).files);
    expect(files.filter((f) => f.startsWith('/vmfs/volumes/small/'))).toEqual([]);
  });

  it('lets a thin disk overcommit, and counts thick disks already there', async () => {
    expect(tool('vmkfstools', '-c', '4000g', '-d', 'thin', '/vmfs/volumes/small/thin.vmdk').code).toBe(0);
    expect(tool('vmkfstools', '-c', '12g', '-d', 'eagerzeroedthick', '/vmfs/volumes/small/a.vmdk').code).toBe(0);
    // 12 GiB of 20 are taken: a second 12 GiB thick disk no longer fits, a 4 GiB one does
    expect(tool('vmkfstools', '-c', '12g', '-d', 'zeroedthick', '/vmfs/volumes/small/b.vmdk').code).not.toBe(0);
    expect(tool('vmkfstools', '-c', '4g', '-d', 'zeroedthick', '/vmfs/volumes/small/c.vmdk').code).toBe(0);
    const files = Object.keys((await readEsxiState(dir)).files).filter((f) => f.startsWith('/vmfs/volumes/small/')).sort();
    expect(files).toEqual(['/vmfs/volumes/small/a.vmdk', '/vmfs/volumes/small/c.vmdk', '/vmfs/volumes/small/thin.vmdk']);
  });
});

describe('vcsim harness: thick disks on an 8 GiB VMFS6', () => {
  let vc: VcsimHandle;
  const host = 'DC0_H0';
  const vm = 'DC0_H0_VM0';
  beforeAll(async () => {
    vc = await startVcsim({ username: 'user', password: 'lab-Secret1' });
    const [luns] = await probe(vc, [{ op: 'luns', host }]);
    const lun = (luns?.available as Array<{ canonicalName: string; capacityBytes: number }>).find((l) => l.capacityBytes === 8 * GiB);
    const [ds] = await probe(vc, [{ op: 'create-vmfs', host, disk: lun?.canonicalName, name: 'small', major: 6 }]);
    expect(ds).toMatchObject({ ok: true });
  });
  afterAll(async () => {
    await vc?.stop();
  });

  const disksOn = async (ds: string) => {
    const [r] = await probe(vc, [{ op: 'vm-disks', vm }]);
    return (r?.disks as Array<{ fileName: string }>).filter((d) => d.fileName.startsWith(`[${ds}]`)).map((d) => d.fileName);
  };

  it('fails a ReconfigVM_Task adding a 10 GiB eager-zeroed or lazy thick disk with NoDiskSpace; the VM gets no disk', async () => {
    const res = await probe(vc, [
      { op: 'add-disk', vm, unit: 5, fileName: '[small] big-eager.vmdk', eager: true, capacityKB: 10 * 1024 * 1024 },
      { op: 'add-disk', vm, unit: 5, fileName: '[small] big-lazy.vmdk', capacityKB: 10 * 1024 * 1024 },
    ]);
    expect(res).toEqual([expect.objectContaining({ ok: false, fault: 'NoDiskSpace' }), expect.objectContaining({ ok: false, fault: 'NoDiskSpace' })]);
    expect(await disksOn('small')).toEqual([]);
  });

  it('adds a 10 GiB thin disk (overcommit), then a 4 GiB thick one that fits', async () => {
    const res = await probe(vc, [
      { op: 'add-disk', vm, unit: 5, fileName: '[small] thin.vmdk', thin: true, capacityKB: 10 * 1024 * 1024 },
      { op: 'add-disk', vm, unit: 6, fileName: '[small] fits.vmdk', eager: true, capacityKB: 4 * 1024 * 1024 },
      { op: 'add-disk', vm, unit: 8, fileName: '[small] no-room.vmdk', eager: true, capacityKB: 4 * 1024 * 1024 },
    ]);
    expect(res.map((r) => r.fault ?? 'ok')).toEqual(['ok', 'ok', 'NoDiskSpace']);
    expect((await disksOn('small')).sort()).toEqual(['[small] fits.vmdk', '[small] thin.vmdk']);
  });

  it('fails a CreateVirtualDisk_Task of a thick disk larger than the free space, creates a thin one', async () => {
    const res = await probe(vc, [
      { op: 'create-vdisk', datacenter: 'DC0', name: '[small] vdm-eager.vmdk', diskType: 'eagerZeroedThick', capacityKB: 10 * 1024 * 1024 },
      { op: 'create-vdisk', datacenter: 'DC0', name: '[small] vdm-thin.vmdk', diskType: 'thin', capacityKB: 10 * 1024 * 1024 },
    ]);
    expect(res.map((r) => r.fault ?? 'ok')).toEqual(['NoDiskSpace', 'ok']);
    expect(res[0]?.message).toContain("Insufficient disk space on datastore 'small'");
  });
});

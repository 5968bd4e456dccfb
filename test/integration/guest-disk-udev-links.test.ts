// The lab guest's by-id links follow udev's rules per controller type (systemd
// rules.d/60-persistent-storage.rules): a disk on a SCSI controller gets wwn-0x<WWN>
// (ID_WWN_WITH_EXTENSION), a disk on a virtual NVMe controller is an NVMe namespace and gets
// nvme-eui.<id> from its wwid, never a wwn- link. Both stand-ins: the vcsim harness
// (guestdisks.go) and the ESXi stand-in's vim-cmd (guest_disks.py). Read back from the directory
// the guest lists disks in, and from the loop devices the links lead to.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../src/providers/vsphere/steps.ts';
import { defaultEsxiState, ESXI_HARNESS_DIR, releaseEsxiGuestDisks, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import { pyvmomi } from '../helpers/pyvmomi-verify.ts';
import { simTarget, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

const ctx = (permutationId: string): ProviderContext => ({ runId: 'udev', permutationId, axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined });
const hexOf = (uuid: string) => uuid.replace(/[\s-]/g, '').toLowerCase();
const isLoop = (link: string) => /^\/dev\/loop\d+$/.test(fs.readlinkSync(link));

describe('vcsim harness: the link a disk gets depends on its controller', () => {
  let lab: VsphereLab;
  beforeAll(async () => {
    lab = await startVsphereLab({ version: '8.0' });
  });
  afterAll(async () => {
    await lab?.stop();
  });

  /** Applies the permutation's controller and disk steps, hands the disk's backing uuid to `inspect`, tears down. */
  async function attach(controller: string, prefix: string, inspect: (uuidHex: string) => void): Promise<void> {
    const t = simTarget(lab.sim, lab.luns);
    const provider = createVsphereProvider(t);
    const created: Array<CreatedObject | null> = [];
    try {
      for (const s of planVsphereSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'disk.controller': controller }, t, { prefix }).filter((x) => x.step !== 'guest-disk')) created.push(await provider.apply(s, ctx(prefix)));
      const disk = created.find((o) => o?.kind === 'disk')!;
      const seen = (await pyvmomi(lab.sim, { vm: 'DC0_H0_VM0' })).disks!.find((d) => d.key === Number(disk.id))!;
      expect(seen.controllerType).toBe(controller === 'nvme' ? 'VirtualNVMEController' : 'ParaVirtualSCSIController');
      expect(seen.uuid).toMatch(/^6000C29/i);
      inspect(hexOf(seen.uuid!));
    } finally {
      for (const o of [...created].reverse()) if (o) await provider.destroy(o, ctx(prefix));
      await provider.close();
    }
    expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
  }

  it('PVSCSI: wwn-0x<uuid hex>, as udev names a SCSI disk that answers VPD 0x83', async () => {
    await attach('pvscsi', 'ss-udev-scsi', (hex) => {
      expect(fs.readdirSync(lab.byIdDir)).toEqual([`wwn-0x${hex}`]);
      expect(isLoop(path.join(lab.byIdDir, `wwn-0x${hex}`))).toBe(true);
    });
  });

  it('NVMe: nvme-eui.<id> and no wwn- link, as udev names an NVMe namespace', async () => {
    await attach('nvme', 'ss-udev-nvme', (hex) => {
      const links = fs.readdirSync(lab.byIdDir);
      expect(links).toEqual([`nvme-eui.${hex}`]);
      expect(links.filter((l) => l.startsWith('wwn-'))).toEqual([]);
      expect(isLoop(path.join(lab.byIdDir, `nvme-eui.${hex}`))).toBe(true);
    });
  });
});

describe('ESXi stand-in: vim-cmd diskaddexisting on a SCSI bus and on an NVMe bus', () => {
  let dir: string;
  let stateDir: string;
  let byIdDir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-udev-esxi-'));
    stateDir = path.join(dir, 'state');
    const guestDisks = path.join(dir, 'guest-disks');
    byIdDir = path.join(guestDisks, 'by-id');
    const state = defaultEsxiState('8.0', { guestDisks }) as { vms: Record<string, Record<string, unknown>> };
    // the VM has a virtual NVMe controller on bus 1 besides its SCSI controller on bus 0
    state.vms['1']!.controllers = { '1': 'nvme' };
    await seedEsxiState(stateDir, state);
  });
  afterAll(async () => {
    if (stateDir) await releaseEsxiGuestDisks(stateDir);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const esxi = (tool: string, args: string[]) => execFileSync(path.join(ESXI_HARNESS_DIR, tool), args, { encoding: 'utf8', env: { ...process.env, STORSWEEP_STANDIN_STATE: stateDir } });

  it('bus 0 (SCSI) links wwn-0x…, bus 1 (NVMe) links nvme-eui.…; removing each takes its link away', () => {
    const scsi = '/vmfs/volumes/datastore1/bench-vm/udev-scsi.vmdk';
    const nvme = '/vmfs/volumes/datastore1/bench-vm/udev-nvme.vmdk';
    for (const f of [scsi, nvme]) esxi('vmkfstools', ['-c', '64m', '-d', 'thin', f]);
    const uuid = (f: string) => hexOf(/^UUID is (.*)$/.exec(esxi('vmkfstools', ['-J', 'getuuid', f]).trim())![1]!);
    esxi('vim-cmd', ['vmsvc/device.diskaddexisting', '1', scsi, '0', '1']);
    esxi('vim-cmd', ['vmsvc/device.diskaddexisting', '1', nvme, '1', '0']);
    expect(fs.readdirSync(byIdDir).sort()).toEqual([`nvme-eui.${uuid(nvme)}`, `wwn-0x${uuid(scsi)}`]);
    for (const l of fs.readdirSync(byIdDir)) expect(isLoop(path.join(byIdDir, l))).toBe(true);
    // an NVMe controller has namespaces 0–14 and no reserved unit 7
    expect(() => esxi('vim-cmd', ['vmsvc/device.diskaddexisting', '1', scsi, '1', '15'])).toThrow(/Invalid controller 1 \/ unit 15/);
    esxi('vim-cmd', ['vmsvc/device.diskremove', '1', '1', '0', 'true']);
    esxi('vim-cmd', ['vmsvc/device.diskremove', '1', '0', '1', 'true']);
    expect(fs.readdirSync(byIdDir)).toEqual([]);
  });
});

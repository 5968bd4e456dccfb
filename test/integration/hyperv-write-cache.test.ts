// guest.writeCache and guest.writeCacheFlushing in a Hyper-V guest (issue 32 item 3): the same step
// as on vSphere, through PowerShell Direct, on the lab (`labUp`: real OpenSSH, the powershell.exe
// stand-in whose guest disks answer the cache script as disk.sys would: disk_cache.py). Checked in
// the stand-in's own state: the guest device and disk.sys's stored values while the passes run,
// and the stored values of the slot after teardown (the guest's own again).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHypervState, readPsLog } from '../../src/lab/harness/windows/state.ts';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { sampleUntilStopped } from '../helpers/wait.ts';

const PLAYBOOK = [
  'name: hyperv-write-cache',
  'target: lab-hyperv',
  'matrix:',
  '  volume:',
  '    sizeGb: [100]',
  '  disk:',
  '    format: [vhdx-fixed]',
  '    sizeGb: [8]',
  '  guest:',
  '    writeCache: [disabled]',
  '    writeCacheFlushing: [off]',
  '  workload:',
  '    profile: ["4k 0% read 100% random"]',
  'settings:',
  '  fileSize: 16m',
  '  runtimeSec: 1',
  '  passes: 1',
  '  warmupPass: false',
  '  intervalSec: 0',
  'repeat: 1',
  '',
].join('\n');

interface VmState {
  drives: Record<string, { Path?: string }>;
  diskParameters?: Record<string, { UserWriteCacheSetting?: number; CacheIsPowerProtected?: number }>;
}

let root: string;
let lab: LabState;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-hvwc-'));
  lab = await labUp(root, { vcsim: false });
}, 300_000);
afterAll(async () => {
  if (lab) await stopPid(lab.ssh.pid);
  if (root) await fs.rm(root, { recursive: true, force: true });
});

describe('guest.writeCache on lab-hyperv', () => {
  it('sets both in the guest before the passes, records them, and sets the guest own values back at teardown', async () => {
    const pb = path.join(root, 'hv-wc.yaml');
    await fs.writeFile(pb, PLAYBOOK);
    const seen = new Set<string>();
    const sampling = sampleUntilStopped(async () => {
      const st = (await readHypervState(lab.standinState).catch(() => null)) as unknown as { vms: Record<string, VmState>; files: Record<string, { cache?: { WCE: boolean } }> } | null;
      const vm = st?.vms['bench-vm'];
      for (const [slot, d] of Object.entries(vm?.drives ?? {})) {
        const wce = d.Path ? st!.files[d.Path]?.cache?.WCE : undefined;
        const p = vm!.diskParameters?.[slot];
        if (wce !== undefined) seen.add(`${slot} wce=${wce} stored=${p?.UserWriteCacheSetting} powerProtected=${p?.CacheIsPowerProtected}`);
      }
    }, { intervalMs: 100 });
    const r = await runCli(['run', pb, '-i', labPaths(root).inventory, '--json'], { cwd: root, timeoutMs: 300_000 });
    await sampling.stop();
    expect(r.code, r.stderr).toBe(0);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const runDir = path.resolve(root, (JSON.parse(r.stdout.trim().split('\n').pop()!) as { runDir: string }).runDir);
    const recs = (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { metadata: Record<string, unknown> });
    expect(recs).toHaveLength(1);
    expect(recs[0]!.metadata).toMatchObject({ guestDisk: 1, guestWriteCache: 'disabled', guestWriteCacheBefore: 'enabled', guestWriteCacheFlushing: 'off', guestWriteCacheFlushingBefore: 'on' });
    // while the disk was measured, the guest's device had its write cache off, and disk.sys kept both values for the slot
    expect(seen).toContain('SCSI:0:1 wce=false stored=0 powerProtected=1');
    // sent over PowerShell Direct (the guest-cache script shape), never as a storage cmdlet
    expect((await readPsLog(lab.standinState)).filter((l) => l.shape === 'guest-cache').length).toBeGreaterThanOrEqual(3);
    // teardown set the guest's own values back before the drive left: the slot's next disk starts as the guest had it
    const after = (await readHypervState(lab.standinState)) as unknown as { vms: Record<string, VmState> };
    expect(after.vms['bench-vm']!.diskParameters?.['SCSI:0:1']).toEqual({ UserWriteCacheSetting: 1, CacheIsPowerProtected: 0 });
    expect(Object.keys(after.vms['bench-vm']!.drives)).toEqual(['SCSI:0:0']);
  }, 360_000);
});

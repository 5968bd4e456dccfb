// Room for diskspd's test file in a Windows guest on vSphere (VMware Tools guest operations), the
// other way into a Windows guest than windows-volume-room.test.ts's Hyper-V: the shipped playbook with
// a 2 GiB test file on its 1 GiB disks. `run` asks the volume it formatted (Get-Volume
// SizeRemaining) and refuses before diskspd creates the file — the reason is ours, naming the
// volume, the need and the free bytes, not diskspd's ERROR_DISK_FULL — and tears down what it made:
// the guest's own disk state (the stand-in's state file) shows no volume afterwards.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { labPaths, TOOLS_WINDOWS_VM } from '../../src/lab/lab.ts';
import { VOLUME_MARGIN_BYTES } from '../../src/providers/windows-volume-room.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { runLabPlaybook, useEmbeddedLab } from '../helpers/embedded-lab.ts';

const isRoot = process.getuid?.() === 0;
const GiB = 1024 ** 3;
const lab = useEmbeddedLab('ss-vsroom-', { vcsim: true });

interface GuestState {
  media: Record<string, { partitions: Array<{ volume?: unknown }> }>;
}

describe.skipIf(!isRoot)('run on lab-vcenter-tools-windows: a test file larger than its volume', () => {
  it('is refused before diskspd creates it, naming the volume, the need and the free bytes; every permutation fails so; no volume is left in the guest', async () => {
    const { cli, runDir } = await runLabPlaybook(lab.root, path.join(REPO_ROOT, 'playbooks', 'windows-guest-tools-allocation-unit.yaml'), { extra: ['--set', 'settings.fileSize=2g'] });
    expect(cli.code).toBe(1);
    const status = JSON.parse((await runCli(['status', runDir, '--json'], { cwd: lab.root })).stdout) as { permutations: Array<{ status: string; reason: string | null }>; leftovers: unknown[] };
    expect(status.permutations.length).toBeGreaterThan(0);
    const need = 2 * GiB + VOLUME_MARGIN_BYTES;
    for (const p of status.permutations) {
      expect(p.status).toBe('failed');
      expect(p.reason).toMatch(new RegExp(`the test file [D-Z]:\\\\storsweep\\.dat needs 2\\.1 GiB \\(${need} bytes: settings\\.fileSize plus 64\\.0 MiB for the file system\\) on [D-Z]:, which has \\d+\\.\\d MiB free \\(\\d+ bytes, Get-Volume SizeRemaining\\); nothing was created`));
      expect(p.reason).not.toContain('error code: 112');
    }
    expect(status.leftovers).toEqual([]);
    const st = JSON.parse(await fs.readFile(path.join(labPaths(lab.root).toolsGuests, TOOLS_WINDOWS_VM, 'windows-guest.json'), 'utf8')) as GuestState;
    expect(Object.values(st.media).flatMap((m) => m.partitions.filter((x) => x.volume))).toEqual([]);
  }, 360_000);
});

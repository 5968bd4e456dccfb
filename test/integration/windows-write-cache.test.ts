// guest.writeCache in a Windows guest on vSphere (issue 32 item 3): playbooks/windows-write-cache.yaml
// on the lab (`labUp`: the vcsim harness with guest operations, the Windows stand-ins as the guest,
// whose disk.sys model is src/lab/harness/windows/disk_cache.py). Checked from outside our code:
// the guest's own disk state (the stand-in's state file) while the passes run, and with the
// disk's detach held at the harness's gate (so the disk is still in the guest) after teardown's
// restore; also after a kill -9 right after the setting was applied, by `cleanup` from the ledger.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { labPaths, TOOLS_WINDOWS_VM } from '../../src/lab/lab.ts';
import type { ResultRecord } from '../../src/results/record.ts';
import { REPO_ROOT, runCli, startCli, stackTraceLines } from '../helpers/cli.ts';
import { heldCalls } from '../helpers/vcsim-log.ts';
import { useEmbeddedLab } from '../helpers/embedded-lab.ts';
import { journalHas, readRun, runCliWhen, runDirOf } from '../helpers/vsphere-lab.ts';
import { sampleUntilStopped, waitFor } from '../helpers/wait.ts';

const isRoot = process.getuid?.() === 0;
const SHIPPED = path.join(REPO_ROOT, 'playbooks', 'windows-write-cache.yaml');

interface Medium {
  serial: string;
  cache?: { WCE: boolean };
}
interface GuestState {
  vm: { guestDisks: Record<string, string>; diskParameters?: Record<string, { UserWriteCacheSetting?: number; CacheIsPowerProtected?: number }> };
  media: Record<string, Medium>;
}

const lab = useEmbeddedLab('ss-wincache-', { vcsim: true });

/** The Windows guest's disks as the stand-in keeps them (what the write cache IOCTLs answer from). */
async function guestState(): Promise<GuestState> {
  return JSON.parse(await fs.readFile(path.join(labPaths(lab.root).toolsGuests, TOOLS_WINDOWS_VM, 'windows-guest.json'), 'utf8')) as GuestState;
}

interface Seen {
  /** the device's WCE bit */
  wce: boolean | undefined;
  /** disk.sys's stored values for the disk's slot: UserWriteCacheSetting, CacheIsPowerProtected (flushing off) */
  stored: number | undefined;
  powerProtected: number | undefined;
}

/** The write cache the guest's device shows for the disk with serial `wwn`, and what disk.sys stored for its slot. */
async function cacheOf(wwn: string): Promise<Seen> {
  const st = await guestState();
  const slot = Object.keys(st.media).find((s) => st.media[s]!.serial === wwn);
  const p = slot ? st.vm.diskParameters?.[slot] : undefined;
  return { wce: slot ? st.media[slot]!.cache?.WCE : undefined, stored: p?.UserWriteCacheSetting, powerProtected: p?.CacheIsPowerProtected };
}

const records = (runDir: string) => readRun(runDir, (db) => (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord));

/** The shipped playbook with one value of guest.writeCache, and flushing off. */
async function onePermutation(name: string, value: string): Promise<string> {
  const text = (await fs.readFile(SHIPPED, 'utf8')).replace('writeCache: [enabled, disabled]', `writeCache: [${value}]\n    writeCacheFlushing: [off]`).replace(/^baseline:\n( {2}.*\n)+/m, '');
  const file = path.join(lab.root, `${name}.yaml`);
  await fs.writeFile(file, text);
  return file;
}

/** `cleanup runDir` with the disk's detach held: the guest's write cache read while the disk is still attached. */
async function cleanupReadingCache(runDir: string, wwn: string): Promise<Seen & { code: number | null }> {
  await lab.control.hold('ReconfigVM_Task');
  const cli = startCli(['cleanup', runDir], { cwd: lab.root });
  let seen: Seen;
  try {
    await waitFor(async () => heldCalls(await lab.control.log(), 'ReconfigVM_Task').length > 0, { what: 'the detach held at the harness', timeoutMs: 120_000 });
    seen = await cacheOf(wwn);
  } finally {
    await lab.control.release('ReconfigVM_Task');
  }
  const r = await cli.done;
  return { ...seen, code: r.code };
}

describe.skipIf(!isRoot)('playbooks/windows-write-cache.yaml on lab-vcenter-tools-windows', () => {
  it('applies each value before the passes (the guest shows it while they run), reads it back into every record, and restores it', async () => {
    const seen = new Set<string>();
    const sampling = sampleUntilStopped(async () => {
      const st = await guestState().catch(() => null);
      for (const m of Object.values(st?.media ?? {})) if (m.cache) seen.add(`${m.serial} ${m.cache.WCE ? 'enabled' : 'disabled'}`);
    }, { intervalMs: 100 });
    const r = await runCli(['run', SHIPPED, '-i', labPaths(lab.root).inventory, '--json'], { cwd: lab.root, timeoutMs: 300_000 });
    await sampling.stop();
    expect(r.code, r.stderr).toBe(0);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const recs = records(path.resolve(lab.root, runDirOf(r)));
    expect(recs).toHaveLength(4);
    for (const rec of recs) {
      expect(rec.tool.name).toBe('diskspd');
      // the lab disk's own value (the stand-in's VMware disk reports its write cache enabled)
      expect(rec.metadata).toMatchObject({ guestWriteCache: rec.axes['guest.writeCache'], guestWriteCacheBefore: 'enabled', guestWriteCacheFlushing: 'on', guestWriteCacheFlushingBefore: 'on', deviceWwn: expect.stringMatching(/^6000c29[0-9a-f]{25}$/) });
    }
    const disabled = recs.find((x) => x.axes['guest.writeCache'] === 'disabled')!;
    // the guest's device had its write cache off while that disk was measured
    expect(seen).toContain(`${String(disabled.metadata!.deviceWwn)} disabled`);
    // what disk.sys keeps for every slot the run used is the guest's own value again
    const st = await guestState();
    const stored = Object.values(st.vm.diskParameters ?? {}).map((p) => p.UserWriteCacheSetting);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.every((v) => v === 1)).toBe(true);
  }, 360_000);

  it('restores the guest own values before the disk is detached (read with the detach held)', async () => {
    const pb = await onePermutation('kept', 'disabled');
    const r = await runCli(['run', pb, '-i', labPaths(lab.root).inventory, '--json', '--no-report', '--keep'], { cwd: lab.root, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = path.resolve(lab.root, runDirOf(r));
    const wwn = String(records(runDir)[0]!.metadata!.deviceWwn);
    expect(records(runDir)[0]!.metadata).toMatchObject({ guestWriteCache: 'disabled', guestWriteCacheFlushing: 'off', guestWriteCacheFlushingBefore: 'on' });
    // --keep: still set as the record says, and disk.sys keeps both for the slot
    expect(await cacheOf(wwn)).toEqual({ wce: false, stored: 0, powerProtected: 1 });
    const seen = await cleanupReadingCache(runDir, wwn);
    expect(seen).toEqual({ wce: true, stored: 1, powerProtected: 0, code: 0 });
  }, 360_000);

  it('after a kill -9 with the setting applied, cleanup restores it from the ledger', async () => {
    const pb = await onePermutation('killed', 'disabled');
    const runsDir = path.join(lab.root, 'runs-killed');
    const r = await runCliWhen(['run', pb, '-i', labPaths(lab.root).inventory, '--out', runsDir, '--json', '--no-report'], { runsDir }, (d) => journalHas(d, 'guest-write-cache:%', 'created') >= 1, (pid) => void process.kill(pid, 'SIGKILL'));
    expect(r.fired).toBe(true);
    expect(r.code).toBeNull();
    const runDir = r.runDir!;
    const recorded = readRun(runDir, (db) => db.prepare("SELECT data FROM ledger WHERE kind = 'guest-write-cache'").get() as { data: string });
    const data = JSON.parse(recorded.data) as { diskId: string; original: { writeCache: string; flushing: string } };
    expect(data.original).toEqual({ writeCache: 'enabled', flushing: 'on' });
    // killed with the settings applied: nothing restored them yet
    expect(await cacheOf(data.diskId)).toEqual({ wce: false, stored: 0, powerProtected: 1 });
    const seen = await cleanupReadingCache(runDir, data.diskId);
    expect(seen).toEqual({ wce: true, stored: 1, powerProtected: 0, code: 0 });
  }, 360_000);
});

// playbooks/guest-queue-depth.yaml on the Linux lab guest (lab-vcenter: this machine, its disks
// loop devices the vcsim harness attaches): each permutation's scheduler and queue depth are set in
// the guest's sysfs, read back into every record, and restored before the disk is detached. The
// restore is read from sysfs by the test itself while the detach (ReconfigVM_Task) is held at the
// harness's gate, so the loop device still exists; also after a kill -9 right after the original
// values were recorded, by `cleanup` from the ledger alone.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultRecord } from '../../src/results/record.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { heldCalls } from '../helpers/vcsim-log.ts';
import { journalHas, ledgerRows, readRun, runCliWhen, runDirOf, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';
import { waitFor } from '../helpers/wait.ts';

let lab: VsphereLab;
const SHIPPED = path.resolve('playbooks/guest-queue-depth.yaml');

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
}, 120_000);
afterAll(async () => lab?.stop());

const records = (runDir: string) => readRun(runDir, (db) => (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as ResultRecord));
const sysfs = (device: string, attr: string) => fs.readFileSync(`/sys/block/${path.basename(device)}/${attr}`, 'utf8').trim();
const active = (device: string) => /\[([^\]]+)\]/.exec(sysfs(device, 'queue/scheduler'))?.[1];

/** The one permutation's playbook (scheduler, depth) on lab-vcenter, from the shipped one. */
async function onePermutation(name: string, scheduler: string, depth: number): Promise<string> {
  const text = fs.readFileSync(SHIPPED, 'utf8').replace('scheduler: [none, mq-deadline]', `scheduler: [${scheduler}]`).replace('queueDepth: [4, 64]', `queueDepth: [${depth}]`).replace(/^baseline:\n( {2}.*\n)+/m, '');
  return lab.writePlaybook(`${name}.yaml`, text);
}

/** `cleanup runDir` with the disk's detach held: sysfs of `device` read while it is still attached. */
async function cleanupReadingSysfs(runDir: string, device: string): Promise<{ scheduler: string | undefined; depth: string; code: number | null }> {
  await lab.sim.control.hold('ReconfigVM_Task');
  const cli = startCli(['cleanup', runDir]);
  let seen: { scheduler: string | undefined; depth: string };
  try {
    await waitFor(async () => heldCalls(await lab.sim.control.log(), 'ReconfigVM_Task').length > 0, { what: 'the detach held at the harness' });
    seen = { scheduler: active(device), depth: sysfs(device, 'queue/nr_requests') };
  } finally {
    await lab.sim.control.release('ReconfigVM_Task');
  }
  const r = await cli.done;
  return { ...seen, code: r.code };
}

describe('playbooks/guest-queue-depth.yaml on the Linux lab guest', () => {
  it('runs every permutation with its settings read back into the records, and restores them', async () => {
    const runsDir = await lab.newRunsDir('gqd');
    const r = await runCli(['run', SHIPPED, '-i', lab.inventory, '--out', runsDir, '--json'], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const recs = records(runDir);
    expect(recs).toHaveLength(8);
    for (const rec of recs) {
      expect(rec.metadata).toMatchObject({ guestScheduler: rec.axes['guest.scheduler'], guestQueueDepth: rec.axes['guest.queueDepth'], guestQueueDepthAttribute: 'queue/nr_requests' });
      expect(String(rec.metadata!.device)).toMatch(/^\/dev\/loop\d+$/);
    }
    const settings = ledgerRows(runDir).filter((l) => l.kind === 'guest-settings');
    expect(settings).toHaveLength(4);
    expect(settings.every((l) => l.state === 'removed')).toBe(true);
    // the report opens with the effect: the comparison against the baseline (none, 64)
    const report = fs.readFileSync(path.join(runDir, 'report.md'), 'utf8');
    const opening = report.slice(0, report.indexOf('## Run'));
    expect(opening).toMatch(/^- scheduler mq-deadline vs none: /m);
    expect(opening).toMatch(/^- queueDepth 4 vs 64: /m);
  }, 300_000);

  it('restores the guest own values before the disk is detached (sysfs read with the detach held)', async () => {
    const pb = await onePermutation('kept', 'kyber', 32);
    const runsDir = await lab.newRunsDir('kept');
    const r = await runCli(['run', pb, '-i', lab.inventory, '--out', runsDir, '--json', '--no-report', '--keep']);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    const rec = records(runDir)[0]!;
    const device = String(rec.metadata!.device);
    // --keep: still set as the record says
    expect(active(device)).toBe('kyber');
    expect(sysfs(device, 'queue/nr_requests')).toBe('32');
    const seen = await cleanupReadingSysfs(runDir, device);
    expect(seen.code).toBe(0);
    expect(seen).toMatchObject({ scheduler: rec.metadata!.guestSchedulerBefore, depth: String(rec.metadata!.guestQueueDepthBefore) });
    expect(rec.metadata!.guestSchedulerBefore).not.toBe('kyber');
  }, 180_000);

  it('after a kill -9 with the settings applied (the pass under way), cleanup restores them from the ledger', async () => {
    const pb = await onePermutation('killed', 'mq-deadline', 16);
    const runsDir = await lab.newRunsDir('killed');
    const r = await runCliWhen(['run', pb, '-i', lab.inventory, '--out', runsDir, '--json', '--no-report'], { runsDir }, (d) => journalHas(d, 'guest-settings:%', 'created') >= 1, (pid) => void process.kill(pid, 'SIGKILL'));
    expect(r.fired).toBe(true);
    expect(r.code).toBeNull();
    const runDir = r.runDir!;
    const found = readRun(runDir, (db) => db.prepare("SELECT detail AS data FROM journal WHERE step = 'measure' AND event = 'found' ORDER BY seq LIMIT 1").get() as { data: string });
    const device = (JSON.parse(found.data) as { device: string }).device;
    const recorded = readRun(runDir, (db) => db.prepare("SELECT data FROM ledger WHERE kind = 'guest-settings'").get() as { data: string });
    const original = (JSON.parse(recorded.data) as { original: { scheduler: string; queueDepth: number } }).original;
    // killed with the settings applied: nothing restored them yet
    expect(active(device)).toBe('mq-deadline');
    expect(sysfs(device, 'queue/nr_requests')).toBe('16');
    // what the guest had is not what the run set (a loop device keeps its settings after a detach: a clean lab gives none/128)
    expect(original).not.toEqual({ scheduler: 'mq-deadline', queueDepth: 16 });
    const seen = await cleanupReadingSysfs(runDir, device);
    expect(seen.code).toBe(0);
    expect(seen).toMatchObject({ scheduler: original.scheduler, depth: String(original.queueDepth) });
  }, 180_000);
});

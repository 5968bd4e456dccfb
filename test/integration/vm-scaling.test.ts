// playbooks/vm-scaling.yaml on the lab (issue 32, vm.count [1, 2, 4]): every VM a full clone of the
// lab's Linux guest VM, made, measured and destroyed by the run. Asserted from outside our code:
// the harness's call log (one CloneVM_Task and one Destroy_Task per clone, each clone's guest
// running programs through guest operations), pyvmomi's listing of the inventory afterwards (no VM
// of the run left), the lab guest accounts (each clone had one of its own, none left), and the
// records: per pass and test N member records (VMs 1..N, their own names and disks) and one
// aggregate, every member's measured window overlapping every other's. A run killed with -9 while
// the 4-VM permutation measures, then `run --resume`, leaves no clone behind either.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { labPaths, TOOLS_LINUX_VM } from '../../src/lab/lab.ts';
import { Browser, CHROMIUM, openPage } from '../helpers/chromium.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { useEmbeddedLab } from '../helpers/embedded-lab.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { readRun, runCliWhen } from '../helpers/vsphere-lab.ts';

interface Rec {
  permutationId: string;
  axes: Record<string, unknown>;
  test: { id: string };
  iops: number | null;
  metadata: Record<string, unknown>;
  vm?: { role: string; count: number; index?: number; name?: string; startedAt?: string; endedAt?: string; startSkewMs?: number };
}

const PLAYBOOK = path.join(REPO_ROOT, 'playbooks', 'vm-scaling.yaml');
// a measured fio pass as the guest lists it (not the pre-fill's job, not `fio --version`)
const FIO_PASS = /(^|[\s/'"])fio\s+--name=(?!storsweep-prefill)/;
// the lab guests are local users: the helper's root is readable by all, their directories under it reachable
const lab = useEmbeddedLab('ss-vmscale-', { vcsim: true });

const records = async (runDir: string): Promise<Rec[]> =>
  (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
/** the VMs the inventory has now, by pyvmomi */
const vmsNow = async (): Promise<string[]> => {
  const r = await probeOne(await lab.endpoint(), { op: 'about' });
  return r.vms as string[];
};
/** local accounts the harness made for lab guests of clones of this lab (their comment names the clone and the lab's guest root) */
const cloneAccounts = async (): Promise<string[]> =>
  (await fs.readFile('/etc/passwd', 'utf8')).split('\n').filter((l) => l.includes('storsweep vcsim lab guest ss-') && l.includes(lab.root)).map((l) => l.split(':')[0]!);

describe('playbooks/vm-scaling.yaml on the lab', () => {
  let runDir: string;
  let code: number | null;
  let out: string;
  let recs: Rec[];
  let cloned: string[];
  let destroyed: string[];
  let guestOpsOn: Set<string>;
  beforeAll(async () => {
    await lab.control.reset();
    const cli = await runCli(['run', PLAYBOOK, '-i', labPaths(lab.root).inventory, '--json', '--no-report'], { cwd: lab.root, timeoutMs: 600_000 });
    code = cli.code;
    out = cli.stdout + cli.stderr;
    runDir = path.resolve(lab.root, (JSON.parse(cli.stdout.trim().split('\n').pop() ?? '{}') as { runDir?: string }).runDir ?? '');
    recs = await records(runDir);
    const log = await lab.control.log();
    cloned = log.filter((c) => c.method === 'CloneVM_Task').map((c) => c.vm!);
    destroyed = log.filter((c) => c.method === 'Destroy_Task').map((c) => c.vm!);
    guestOpsOn = new Set((await lab.control.guestOps()).calls.filter((c) => c.method === 'StartProgramInGuest').map((c) => c.vm));
  }, 660_000);

  it('succeeds', () => {
    expect(code, out).toBe(0);
  });

  it('clones the target\'s VM 1 + 2 + 4 times, each under the run\'s owned name, and destroys every clone (harness call log)', () => {
    expect(cloned).toHaveLength(7);
    expect(new Set(cloned).size).toBe(7);
    for (const name of cloned) expect(name).toMatch(/^ss-r[0-9a-z]+-p[0-9a-f]{12}-vm[1-4]$/);
    expect([...destroyed].sort()).toEqual([...cloned].sort());
  });

  it('ran programs in every clone\'s own guest through guest operations, and never measured the target\'s own VM', () => {
    for (const name of cloned) expect(guestOpsOn.has(name), name).toBe(true);
    const measuredVms = new Set(recs.filter((r) => r.vm?.role === 'member').map((r) => r.vm!.name));
    expect(measuredVms.has(TOOLS_LINUX_VM)).toBe(false);
    expect([...measuredVms].sort()).toEqual([...cloned].sort());
  });

  it('leaves no clone in the inventory (pyvmomi) and no clone guest account on the lab machine', async () => {
    const vms = await vmsNow();
    expect(vms).toContain(TOOLS_LINUX_VM);
    expect(vms.filter((v) => v.startsWith('ss-'))).toEqual([]);
    expect(await cloneAccounts()).toEqual([]);
  });

  it('records N members and one aggregate per pass and test, the members each their own VM and disk', () => {
    const byPerm = new Map<number, Rec[]>();
    for (const r of recs) byPerm.set(r.axes['vm.count'] as number, [...(byPerm.get(r.axes['vm.count'] as number) ?? []), r]);
    expect([...byPerm.keys()].sort()).toEqual([1, 2, 4]);
    for (const [n, rs] of byPerm) {
      const members = rs.filter((r) => r.vm?.role === 'member');
      const aggregates = rs.filter((r) => r.vm?.role === 'aggregate');
      expect(members.map((m) => m.vm!.index).sort()).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(new Set(members.map((m) => m.vm!.name)).size).toBe(n);
      expect(new Set(members.map((m) => m.metadata.deviceWwn ?? m.metadata.device)).size).toBe(n);
      for (const m of members) expect(m.vm!.count).toBe(n);
      expect(aggregates).toHaveLength(1);
      expect(aggregates[0]!.vm).toMatchObject({ count: n });
      expect(typeof aggregates[0]!.vm!.startSkewMs).toBe('number');
      expect(aggregates[0]!.iops).toBeCloseTo(members.reduce((s, m) => s + (m.iops ?? 0), 0), 6);
    }
  });

  it('measures every VM over the same window: each member\'s window overlaps every other\'s', () => {
    for (const n of [2, 4]) {
      const members = recs.filter((r) => r.vm?.role === 'member' && r.vm.count === n);
      const latestStart = Math.max(...members.map((m) => Date.parse(m.vm!.startedAt!)));
      const earliestEnd = Math.min(...members.map((m) => Date.parse(m.vm!.endedAt!)));
      expect(latestStart, `vm.count ${n}: a VM started after another had ended`).toBeLessThan(earliestEnd);
    }
  });

  it('reports from those records (the report reads member and aggregate records alike)', async () => {
    const r = await runCli(['report', runDir], { cwd: lab.root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('vm.count');
  });

  // the acceptance's "scaling chart in the HTML report (checked in headless Chromium)", on this run's own records
  it.skipIf(!existsSync(CHROMIUM))('its HTML report opens with the scaling section, its charts drawn in headless Chromium', async () => {
    const file = path.join(lab.root, 'vm-report.html');
    const r = await runCli(['report', runDir, '--format', 'html', '--output', file], { cwd: lab.root });
    expect(r.code, r.stderr).toBe(0);
    const browser = Browser.launch(path.join(lab.root, 'chromium-profile'));
    try {
      const page = await openPage(browser, file, { width: 1280, height: 900, mobile: false });
      const f = await page.evaluate<{ first: string | null; charts: number; drawn: number; points: number }>(`JSON.stringify({
        first: document.querySelector('main section')?.id ?? null,
        charts: document.querySelectorAll('#vm-scaling svg.line-chart').length,
        drawn: [...document.querySelectorAll('#vm-scaling svg.line-chart polyline.line')].filter((l) => l.getBoundingClientRect().width > 0).length,
        points: document.querySelectorAll('#vm-scaling svg.line-chart g.s0 circle.point').length,
      })`);
      await page.close();
      expect(page.problems).toEqual([]);
      expect(f.first).toBe('vm-scaling');
      // two charts (throughput, latency) per curve; each curve has the counts 1, 2 and 4
      expect(f.charts).toBeGreaterThanOrEqual(2);
      expect(f.charts % 2).toBe(0);
      expect(f.drawn).toBeGreaterThanOrEqual(f.charts);
      expect(f.points).toBe((f.charts / 2) * 2 * 3);
    } finally {
      await browser.close();
    }
  });

  it('stores each member under a key of its own beside the aggregate', () => {
    const keys = readRun(runDir, (db) => (db.prepare('SELECT test_id FROM results').all() as Array<{ test_id: string }>).map((r) => r.test_id));
    expect(keys.filter((k) => /@vm\d+$/.test(k))).toHaveLength(1 + 2 + 4);
    expect(keys.filter((k) => !k.includes('@vm'))).toHaveLength(3);
  });
});

const isClone = (vm: string) => vm.startsWith('ss-');

/**
 * The shipped playbook with vm.count 4 alone (its baseline too: a baseline must be a value of the
 * axis, and `--set` takes no baseline). The 1-VM permutation the killed runs used to do first
 * asserted nothing and cost a clone, a disk and a 12 s pass per run.
 */
async function fourVmPlaybook(): Promise<string> {
  const text = await fs.readFile(PLAYBOOK, 'utf8');
  const four = text.replace('    count: [1, 2, 4]\n', '    count: [4]\n').replace('  vm.count: 1\n', '  vm.count: 4\n');
  expect(four.match(/count: \[?4\]?\n/g), 'the shipped playbook\'s vm.count lines moved').toHaveLength(2);
  const file = path.join(lab.root, 'vm-scaling-4.yaml');
  await fs.writeFile(file, four);
  return file;
}

/** Runs the playbook on 4 VMs (12-second passes) and SIGKILLs it while fio measures in all four clones. */
async function killedWhileFourMeasure(runsDir: string): Promise<{ runDir: string; killedAt: number; left: string[] }> {
  await lab.control.reset();
  // passes long enough that the killed run's fio outlives the next command's start
  const args = ['run', await fourVmPlaybook(), '-i', labPaths(lab.root).inventory, '--out', runsDir, '--json', '--no-report', '--set', 'settings.runtimeSec=12'];
  let measuring = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const running = await lab.control.guestProcesses().catch(() => []);
      measuring = new Set(running.filter((p) => isClone(p.vm) && FIO_PASS.test(p.cmdLine)).map((p) => p.vm)).size;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let accountsAtKill: Array<{ vm: string; account: string; uid: number }> = [];
  let killedAt = 0;
  const killed = await runCliWhen(args, { runsDir }, () => measuring >= 4, async (pid) => {
    process.kill(pid, 'SIGKILL');
    killedAt = Date.now();
    accountsAtKill = (await lab.control.guestOps()).accounts;
  });
  polling = false;
  await poll;
  expect(killed.fired, `fio never ran in the 4 clones at once: ${killed.stdout}${killed.stderr}`).toBe(true);
  expect(killed.code).toBeNull();
  const left = (await vmsNow()).filter(isClone);
  expect(left).toHaveLength(4);
  // each clone had a guest account of its own: four uids, none the source guest's
  const cloneAccountsAtKill = accountsAtKill.filter((a) => isClone(a.vm));
  const source = accountsAtKill.find((a) => a.vm === TOOLS_LINUX_VM)!;
  expect(cloneAccountsAtKill.map((a) => a.vm).sort()).toEqual([...left].sort());
  expect(new Set([source.uid, ...cloneAccountsAtKill.map((a) => a.uid)]).size).toBe(5);
  return { runDir: killed.runDir!, killedAt, left };
}

/** Each killed clone: its fio stopped through its own guest before its disk went, then the clone destroyed; nothing of any clone left. */
async function expectClonesGoneSafely(killedAt: number, left: readonly string[]): Promise<void> {
  const log = await lab.control.log();
  const { processes, calls } = await lab.control.guestOps();
  for (const vm of left) {
    expect(log.some((c) => c.method === 'Destroy_Task' && c.vm === vm), `${vm} was never destroyed`).toBe(true);
    const removed = log.find((c) => c.method === 'ReconfigVM_Task' && c.start > killedAt && (c.devices ?? []).some((d) => d.startsWith('remove ') && d.includes(`${vm}-disk.vmdk`)));
    expect(removed, `${vm}'s disk was never removed`).toBeDefined();
    // something ran in that clone's own guest before the disk went: the stop (the lab's guests share
    // one process table, so another guest's stop could end the fio too; a real guest's could not)
    expect(calls.some((c) => c.vm === vm && c.method === 'StartProgramInGuest' && Date.parse(c.time) > killedAt && Date.parse(c.time) < removed!.start), `nothing ran in ${vm}'s guest before its disk was removed`).toBe(true);
    // no disk was detached under the killed run's fio (a redo makes clones of the same names: only the killed run's)
    const fio = processes.filter((p) => p.vm === vm && !p.child && FIO_PASS.test(p.cmdLine) && Date.parse(p.startTime) < killedAt);
    expect(fio.length, `no fio pass ran in ${vm}`).toBeGreaterThan(0);
    for (const p of fio) expect(p.endTime && Date.parse(p.endTime), `${vm}: fio (pid ${p.pid}) still ran when its disk was removed`).toBeLessThan(removed!.start);
  }
  expect((await vmsNow()).filter(isClone)).toEqual([]);
  expect(await cloneAccounts()).toEqual([]);
  expect((await lab.control.guestProcesses()).filter((p) => isClone(p.vm))).toEqual([]);
}

describe('kill -9 during the 4-VM permutation', () => {
  it('then run --resume: the fio left in each clone\'s guest stopped before its disk goes, no clone left (call log, guest processes, pyvmomi)', async () => {
    const k = await killedWhileFourMeasure(path.join(lab.root, 'killed-resume'));
    const resumed = await runCli(['run', '--resume', k.runDir, '--json', '--no-report'], { cwd: lab.root, timeoutMs: 600_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    await expectClonesGoneSafely(k.killedAt, k.left);
  }, 900_000);

  it('then cleanup: the same, and nothing measured again', async () => {
    const k = await killedWhileFourMeasure(path.join(lab.root, 'killed-cleanup'));
    const cleaned = await runCli(['cleanup', k.runDir], { cwd: lab.root, timeoutMs: 600_000 });
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    await expectClonesGoneSafely(k.killedAt, k.left);
    expect((await lab.control.log()).filter((c) => c.method === 'CloneVM_Task' && c.start > k.killedAt)).toEqual([]);
  }, 900_000);
});

// The life of a vSphere sweep beyond the happy path: Ctrl-C mid-permutation (teardown, exit 130,
// status, resume), `storsweep cleanup` after a kill -9 (exactly our objects, idempotent, decoys
// untouched), one vCenter session per run with logout, and no secret in any file of a run dir.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { CLI, REPO_ROOT, runCli } from '../helpers/cli.ts';
import { journalHas, ledgerRows, NOTHING_LEFT, permutationStatuses, resultKeys, runCliKilledAt, runCliWhen, runDirIn, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let threePerms: string;
let twoPerms: string;
let onePerm: string;

beforeAll(async () => {
  lab = await startVsphereLab();
  threePerms = await lab.writePlaybook('three.yaml', sweepPlaybook({ name: 'life', blockSizesMb: [1, 2, 4], formats: ['thin'], repeat: 1 }));
  twoPerms = await lab.writePlaybook('two.yaml', sweepPlaybook({ name: 'life', blockSizesMb: [1, 2], formats: ['thin'], repeat: 1 }));
  onePerm = await lab.writePlaybook('one.yaml', sweepPlaybook({ name: 'keep', blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
});

afterAll(async () => {
  await lab?.stop();
});

beforeEach(async () => {
  await lab.sim.control.reset();
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('SIGINT mid-permutation', { timeout: 180_000 }, () => {
  it('tears down, exits 130, status shows the interrupted permutation, --resume completes with one session each', async () => {
    const runsDir = await lab.newRunsDir('sigint');
    // Interrupt once the second permutation's disk exists: in the middle of that permutation.
    const r = await runCliWhen(['run', threePerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'disk:%', 'created') >= 2, (pid) => void process.kill(pid, 'SIGINT'));
    expect(r.fired).toBe(true);
    expect(r.code).toBe(130);
    const runDir = runDirIn(runsDir)!;
    const [first, second, third] = permutationStatuses(runDir);
    expect([first!.status, second!.status, third!.status]).toEqual(['done', 'running', 'pending']);
    // the interrupted permutation's objects were removed before exiting
    expect(ledgerRows(runDir).filter((l) => l.permutationId === second!.permutationId).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:removed', 'disk:removed']);
    // one session, logged out even when interrupted (read before pyvmomi logs in itself)
    let calls = await lab.sim.control.calls();
    expect(calls.Login).toBe(1);
    expect(calls.Logout).toBeGreaterThanOrEqual(1);
    // status first, then a resume without --confirm-destroy (refused before it changes anything):
    // run at once, the resume could hold the run's lock while status reads it ("in use now … running now")
    const [st, left] = await Promise.all([runCli(['status', runDir]), lab.leftovers()]);
    const unconfirmed = await runCli(['run', '--resume', runDir, '--no-report', '--json']);
    expect(left).toEqual(NOTHING_LEFT);
    expect(st.stdout).toContain('done 1, failed 0, pending 2 of 3');
    expect(st.stdout).toMatch(new RegExp(`running\\s+${second!.permutationId} .*interrupted mid-permutation; resume redoes it`));

    // what is left still formats the LUN: the resume asks for --confirm-destroy again, naming it
    expect(unconfirmed.code).toBe(1); // refused like a new run without it
    expect(unconfirmed.stderr).toContain(`refused: the rest of this run (2 permutation(s) not done) destroys data on ${lab.vmfsDevice}; the run was confirmed for ${lab.vmfsDevice} when it started; confirm again with --confirm-destroy ${lab.vmfsDevice}\n`);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'running', 'pending']);

    await lab.sim.control.reset();
    const resumed = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    // the progress and its estimate count only what is left
    expect(resumed.stderr).toMatch(/run \S+: 2 of 3 permutations left \(1 already done\), estimated /);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done', 'done']);
    expect(resultKeys(runDir).map((k) => k.split('/')[0]).sort()).toEqual([first!.permutationId, second!.permutationId, third!.permutationId].sort());
    calls = await lab.sim.control.calls();
    expect(calls.Login).toBe(1);
    expect(calls.Logout).toBe(1);
    // permutations run one at a time: each disk is created and detached in turn on the one VM
    expect(calls.ReconfigVM_Task).toBe(4);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe('nobody reading the output any more', { timeout: 180_000 }, () => {
  it('`run … 2>&1 | head -3`: the closed pipe stops the printing, not the run; every permutation done and torn down', async () => {
    const runsDir = await lab.newRunsDir('pipe');
    // one permutation: the pipe closes at the run's fourth line, long before its disk is torn down
    const cmd = [process.execPath, CLI, 'run', onePerm, ...lab.runArgs(runsDir)].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile('bash', ['-c', `set -o pipefail; ${cmd} 2>&1 | head -3`], { cwd: REPO_ROOT, env: { ...process.env, CI: '1', NO_COLOR: '1' }, timeout: 170_000 }, (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout }));
    });
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    expect(r.code).toBe(0);
    const runDir = runDirIn(runsDir)!;
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done']);
    expect(resultKeys(runDir)).toHaveLength(1);
    expect(ledgerRows(runDir).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:removed', 'disk:removed']);
    // the log says so, before the permutation measured and was torn down: the run went on after it
    const log = fs.readFileSync(path.join(runDir, 'log.jsonl'), 'utf8').trim().split('\n');
    const closed = log.findIndex((l) => /(stdout|stderr) was closed \(EPIPE\): printing stops, the run goes on/.test(l));
    expect(closed).toBeGreaterThanOrEqual(0);
    expect(closed).toBeLessThan(log.findIndex((l) => l.includes('"type":"permutation-end"')));
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('SIGHUP (the terminal closed) mid-permutation: like SIGTERM, teardown then exit 130', async () => {
    const runsDir = await lab.newRunsDir('sighup');
    const r = await runCliWhen(['run', threePerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'disk:%', 'created') >= 1, (pid) => void process.kill(pid, 'SIGHUP'));
    expect(r.fired).toBe(true);
    expect(r.code).toBe(130);
    const runDir = runDirIn(runsDir)!;
    expect(permutationStatuses(runDir)[0]!.status).toBe('running');
    expect(ledgerRows(runDir).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:removed', 'disk:removed']);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe("`storsweep cleanup` with the run's retry policy", { timeout: 180_000 }, () => {
  it('a run with --retries 0 --keep: its cleanup does not retry a busy detach either (the default would); a later cleanup removes it', async () => {
    const runsDir = await lab.newRunsDir('keep-retries');
    const r = await runCli(['run', onePerm, ...lab.runArgs(runsDir), '--keep', '--retries', '0']);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(ledgerRows(runDir).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:kept', 'disk:kept']);
    await lab.sim.control.fault({ method: 'ReconfigVM_Task', fault: 'TaskInProgress', message: 'injected: busy', asTask: true, count: 1 });
    const c = await runCli(['cleanup', runDir]);
    expect(c.code).toBe(1);
    expect(c.stdout).not.toMatch(/retrying removal/);
    expect(c.stdout).toMatch(/could not remove disk ss-\S+: .*TaskInProgress|could not remove disk ss-\S+: .*busy/);
    expect(ledgerRows(runDir).find((l) => l.kind === 'disk')!.state).toBe('remove-failed');
    const again = await runCli(['cleanup', runDir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe('storsweep cleanup after kill -9', { timeout: 180_000 }, () => {
  it('removes exactly what the run left, says so, is idempotent, and never touches a look-alike of another run', async () => {
    const runsDir = await lab.newRunsDir('cleanup');
    const ledgerCreated = (d: string) => journalHas(d, 'disk:%', 'created');
    // kill as soon as the first permutation's disk exists (its datastore too)
    const r = await runCliWhen(['run', threePerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => ledgerCreated(d) >= 1, (pid) => void process.kill(pid, 'SIGKILL'));
    expect(r.code).toBeNull();
    const runDir = runDirIn(runsDir)!;
    const live = ledgerRows(runDir).filter((l) => l.state === 'created' || l.state === 'intent');
    expect(live.map((l) => l.kind)).toEqual(['datastore', 'disk']);
    const [ds, disk] = live;
    const left = await lab.leftovers();
    expect(left.datastores).toEqual([ds!.name]);
    expect(left.disks.map((d) => d.fileName)).toEqual([`[${ds!.name}] ${disk!.name}.vmdk`]);

    // Decoys named like ours (same permutation id) but from another run.
    const permId = ds!.permutationId;
    const decoyDs = `ss-decoyrun00000-${permId}-ds`;
    const decoyDisk = `ss-decoyrun00000-${permId}-disk`;
    const c = await lab.connect();
    const host = await c.findHost('DC0_H0');
    const vm = await c.findVm('DC0_H0_VM0');
    const dsRef = await c.createVmfsDatastore(host, { deviceCanonicalName: lab.luns[1]!, vmfsMajorVersion: 5, name: decoyDs, allowedDevices: [lab.luns[1]!] });
    const attached = await c.createDisk(vm, { datastore: 'LocalDS_0', fileName: `${decoyDisk}.vmdk`, sizeBytes: 1 << 30, format: 'thin' });
    try {
      const cleaned = await runCli(['cleanup', runDir]);
      expect(cleaned.code, cleaned.stderr).toBe(0);
      // The killed run's fio may still be running on the guest: cleanup stops it first and says so.
      const lines = cleaned.stdout.trim().split('\n');
      const stops = lines.filter((l) => l.startsWith('stopped fio'));
      for (const l of stops) expect(l).toMatch(/^stopped fio left running on lab-vcenter \(pids [\d, ]+, SIG(TERM|KILL)\)$/);
      expect(lines).toEqual([...stops, `removed: disk ${disk!.name}`, `removed: datastore ${ds!.name}`]);
      // only the decoys remain
      const after = await lab.leftovers();
      expect(after.datastores).toEqual([decoyDs]);
      expect(after.disks).toEqual([{ vm: 'DC0_H0_VM0', fileName: `[LocalDS_0] ${decoyDisk}.vmdk` }]);
      // the datastore browser sees the decoy's file, and no file of ours
      expect(after.files.length).toBeGreaterThan(0);
      expect(after.files.filter((f) => !f.includes('decoyrun00000'))).toEqual([]);
      expect(ledgerRows(runDir).map((l) => l.state)).toEqual(['removed', 'removed']);

      const again = await runCli(['cleanup', runDir]);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe('nothing to clean up\n');
      expect((await lab.leftovers()).datastores).toEqual([decoyDs]);
    } finally {
      await c.detachDisk(vm, attached.key, { deleteFile: true });
      await c.removeDatastore(host, dsRef);
      await c.logout();
    }
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe('storsweep cleanup while the killed run\'s fio may still run', { timeout: 180_000 }, () => {
  it('the guest cannot tell whether it still runs: the disk and datastore stay (rows open, exit 1); once it can, cleanup stops it and removes them', async () => {
    const runsDir = await lab.newRunsDir('held');
    const r = await runCliWhen(['run', threePerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'disk:%', 'created') >= 1, (pid) => void process.kill(pid, 'SIGKILL'));
    expect(r.code).toBeNull();
    const runDir = runDirIn(runsDir)!;
    const [ds, disk] = ledgerRows(runDir).filter((l) => l.state === 'created');
    // The guest (this machine here) has a grep without -z, like a BusyBox build without it: the
    // stopper cannot read process environments, so it cannot tell whether the fio still runs.
    const bin = path.join(lab.dir, 'grep-without-z');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'grep'), '#!/bin/sh\nfor a in "$@"; do case $a in -*z*) echo "grep: unrecognized option: z" >&2; exit 2;; esac; done\nexec /usr/bin/grep "$@"\n', { mode: 0o755 });

    const held = await runCli(['cleanup', runDir], { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    expect(held.code).toBe(1);
    const lines = held.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^could not confirm that no fio of this run is left running on lab-vcenter: cannot read process environments here \(\/proc\/PID\/environ, grep -z\): nothing signalled$/);
    expect(lines.slice(1)).toEqual([`left in place: disk ${disk!.name}: ${lines[0]}`, `left in place: datastore ${ds!.name}: ${lines[0]}`]);
    // vCenter still has both: nothing was detached or deleted under a fio that may be writing
    const left = await lab.leftovers();
    expect(left.datastores).toEqual([ds!.name]);
    expect(left.disks.map((d) => d.fileName)).toEqual([`[${ds!.name}] ${disk!.name}.vmdk`]);
    expect(ledgerRows(runDir).map((l) => l.state)).toEqual(['remove-failed', 'remove-failed']);

    const cleaned = await runCli(['cleanup', runDir]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(`removed: disk ${disk!.name}\nremoved: datastore ${ds!.name}\n`);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

describe('secrets', { timeout: 180_000 }, () => {
  it('the vCenter password appears in no file of any run directory (database, WAL, log, raw, plan)', async () => {
    // one more run with a retry and a failure, so that error texts land in the log and database
    await lab.sim.control.drop({ method: 'CreateVmfsDatastore', when: 'before', count: 1 });
    await lab.sim.control.fault({ method: 'ReconfigVM_Task', fault: 'FileAlreadyExists', message: 'injected', asTask: true, count: 1 });
    const runsDir = await lab.newRunsDir('secrets');
    // two permutations: the first fails (its disk's create), the second measures (raw pass files)
    const r = await runCliKilledAt(['run', twoPerms, ...lab.runArgs(runsDir)], { runsDir }, 1e9);
    expect(r.code).toBe(1);
    const files = filesUnder(path.join(lab.dir, 'runs'));
    const names = files.map((f) => path.basename(f));
    expect(names).toEqual(expect.arrayContaining(['run.sqlite', 'log.jsonl', 'plan.json', 'results.jsonl']));
    expect(names.some((n) => n.endsWith('.json') && n.includes('pass'))).toBe(true);
    const runDir = runDirOf(r);
    const runId = runDir.split('-').pop()!;
    // positive control: the files are read and do hold run data
    expect(fs.readFileSync(path.join(runDir, 'run.sqlite')).includes(Buffer.from(runId)) || fs.readFileSync(`${path.join(runDir, 'run.sqlite')}-wal`).includes(Buffer.from(runId))).toBe(true);
    const leaking = files.filter((f) => fs.readFileSync(f).includes(Buffer.from(lab.password)));
    expect(leaking).toEqual([]);
  });
});

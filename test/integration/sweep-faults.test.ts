// Fault injection on a vSphere sweep (vcsim harness + fio over a real sshd): each fault ends with
// the right permutation failed or retried, every result that could be measured kept, and nothing
// named ss-… left in the lab (pyvmomi).
import { execFileSync } from 'node:child_process';
import fs, { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { descendantPids, startLabGuest, type LabGuest } from '../helpers/lab-guest.ts';
import { journalHas, ledgerRows, NOTHING_LEFT, permutationStatuses, resultKeys, runCliWhen, runDirIn, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';
import { runInProcess } from '../helpers/run-in-process.ts';
import { runExitCode } from '../../src/cli/commands/run.ts';
import { taskAwaited } from '../helpers/vcsim-log.ts';
import { waitFor } from '../helpers/wait.ts';

let guest: LabGuest;
let lab: VsphereLab;
let twoPerms: string;

beforeAll(async () => {
  guest = await startLabGuest();
  lab = await startVsphereLab({ sshGuest: guest });
  // VMFS3 1 MB and 2 MB, thin disk, one repetition: two permutations.
  twoPerms = await lab.writePlaybook('two.yaml', sweepPlaybook({ name: 'faults', blockSizesMb: [1, 2], formats: ['thin'], repeat: 1 }));
});

afterAll(async () => {
  await lab?.stop();
  await guest?.stop();
});

beforeEach(async () => {
  await lab.sim.control.reset();
});

const log = (runDir: string) => fs.readFileSync(path.join(runDir, 'log.jsonl'), 'utf8');
/** the executor gave up on a step and waits for its call to settle (run/executor.ts) */
const stepGaveUp = (runDir: string) => existsSync(path.join(runDir, 'log.jsonl')) && log(runDir).includes('for the call to settle before teardown');

// Generous limits: under a full parallel suite a CLI run takes several times longer than alone.
describe('vSphere faults during a sweep', { timeout: 180_000 }, () => {
  it('session expired mid-sweep: logs in again once, every permutation done', async () => {
    const runsDir = await lab.newRunsDir('session');
    const r = await runCliWhen(['run', twoPerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'permutation', 'done') >= 1, async () => {
      expect(await lab.sim.control.expireSessions()).toBeGreaterThanOrEqual(1);
    });
    expect(r.fired).toBe(true);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    expect(resultKeys(runDir)).toHaveLength(2);
    const calls = await lab.sim.control.calls();
    // one login at the start, one after the expiry; nothing failed
    expect(calls.Login).toBe(2);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('session expired while a task is awaited: the wait goes on with a new property collector, no second create', async () => {
    // the first disk's task runs until the sessions have expired under its wait
    await lab.sim.control.hold('ReconfigVM_Task', { task: true });
    try {
      const runsDir = await lab.newRunsDir('session-task');
      let expired = 0;
      const r = await runCliWhen(['run', twoPerms, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'disk:%', 'intent') >= 1, async () => {
        let released = { tasks: 0 };
        try {
          await waitFor(async () => taskAwaited(await lab.sim.control.log(), 'ReconfigVM_Task'), { what: 'the disk task awaited by a long poll' });
          expired = await lab.sim.control.expireSessions();
        } finally {
          released = await lab.sim.control.release('ReconfigVM_Task');
        }
        expect(released.tasks).toBe(1);
      });
      expect(expired).toBeGreaterThanOrEqual(1);
      expect(r.fired).toBe(true);
      expect(r.code, r.stderr).toBe(0);
      const runDir = runDirOf(r);
      expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
      expect((await lab.sim.control.calls()).ReconfigVM_Task).toBe(4);
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    } finally {
      await lab.sim.control.release('ReconfigVM_Task');
    }
  });

  it('task fault on ReconfigVM_Task: that permutation failed with the fault name, its datastore removed, the other done', async () => {
    await lab.sim.control.fault({ method: 'ReconfigVM_Task', fault: 'FileAlreadyExists', message: 'injected: file exists', asTask: true, count: 1 });
    const r = await runCli(['run', twoPerms, ...lab.runArgs(await lab.newRunsDir('task-fault'))]);
    expect(r.code).toBe(1);
    const runDir = runDirOf(r);
    const [first, second] = permutationStatuses(runDir);
    expect(first!.status).toBe('failed');
    expect(first!.reason).toContain('FileAlreadyExists');
    expect(second!.status).toBe('done');
    expect(resultKeys(runDir).map((k) => k.split('/')[0])).toEqual([second!.permutationId]);
    const ledger = ledgerRows(runDir).filter((l) => l.permutationId === first!.permutationId);
    expect(ledger.map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:removed', 'disk:absent']);
    const st = await runCli(['status', runDir]);
    expect(st.stdout).toContain('done 1, failed 1, pending 0 of 2');
    expect(st.stdout).toMatch(new RegExp(`failed\\s+${first!.permutationId} .*FileAlreadyExists`));
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it.each(['CreateVmfsDatastore', 'ReconfigVM_Task'])('connection dropped after %s ran: looked up before reissuing, no duplicate', async (method) => {
    await lab.sim.control.drop({ method, when: 'after', count: 1 });
    const r = await runCli(['run', twoPerms, ...lab.runArgs(await lab.newRunsDir(`drop-${method}`))]);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    expect(resultKeys(runDir)).toHaveLength(2);
    const calls = await lab.sim.control.calls();
    // one create per permutation (the dropped one was found, not reissued); ReconfigVM also detaches
    expect(calls[method]).toBe(method === 'ReconfigVM_Task' ? 4 : 2);
    expect(log(runDir)).toMatch(/retrying (datastore|disk) \(attempt 2\)/);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('SSH connection to the guest dropped mid-benchmark: the test is retried on a new connection, nothing lost', async () => {
    const pb = await lab.writePlaybook('ssh-drop.yaml', sweepPlaybook({ name: 'ssh-drop', blockSizesMb: [1, 2], formats: ['thin'], repeat: 1, runtimeSec: 2 }));
    const runsDir = await lab.newRunsDir('ssh-drop');
    const fioUnderSshd = () => descendantPids(guest.sshd.pid).some((p) => {
      try {
        // a measuring fio, not the `fio --version` of the run's environment fingerprint
        return fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'fio' && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--runtime=');
      } catch {
        return false;
      }
    });
    const r = await runCliWhen(['run', pb, ...lab.runArgs(runsDir)], { runsDir }, fioUnderSshd, () => {
      // Kill the session processes (the connection drops), not the listening sshd.
      for (const p of descendantPids(guest.sshd.pid)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    });
    expect(r.fired).toBe(true);
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done']);
    expect(resultKeys(runDir)).toHaveLength(2);
    expect(log(runDir)).toMatch(/retrying rnd-4k-q1t1-read .*(SSH|connection)/);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('a hung create fails its step after the playbook\'s timeouts.stepSec; the object it creates late is still torn down', async () => {
    const pb = await lab.writePlaybook('hang.yaml', sweepPlaybook({ name: 'hang', blockSizesMb: [1], formats: ['thin'], repeat: 1, extra: ['timeouts:', '  stepSec: 1'] }));
    // The create itself hangs (sent, then held by the server until the step gave up): it completes
    // after that, and teardown waits for it to settle and removes what it made.
    await lab.sim.control.hold('CreateVmfsDatastore');
    try {
      const runsDir = await lab.newRunsDir('hang');
      const r = await runCliWhen(['run', pb, ...lab.runArgs(runsDir)], { runsDir }, stepGaveUp, async () => {
        expect((await lab.sim.control.release('CreateVmfsDatastore')).calls).toBe(1);
      });
      expect(r.fired).toBe(true);
      expect(r.code).toBe(1);
      const runDir = runDirOf(r);
      const [only] = permutationStatuses(runDir);
      expect(only!.status).toBe('failed');
      expect(only!.reason).toContain('timed out after 1000 ms');
      expect(ledgerRows(runDir).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:removed']);
      expect((await lab.sim.control.calls()).CreateVmfsDatastore).toBe(1);
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    } finally {
      await lab.sim.control.release('CreateVmfsDatastore');
    }
  });

  it('a create still running after the grace period: teardown keeps it live (never absent), status names it, cleanup that finds nothing keeps it open', async () => {
    // 4 s: the reads before the create fit in it even on a loaded machine, so the create is sent
    const pb = await lab.writePlaybook('late.yaml', sweepPlaybook({ name: 'late', blockSizesMb: [1], formats: ['thin'], repeat: 1, extra: ['timeouts:', '  stepSec: 4'] }));
    // held by the server past the executor's grace (after the 4 s step timeout), then failed: when
    // teardown looks, nothing is there, and nothing may conclude that nothing will be. The create is
    // let go once teardown gave up on it. The run is `run`'s use case in this process with a grace of
    // 1 s (ExecuteOptions.orphanGraceMs; the product's is the step timeout, at least 60 s), so the
    // test does not wait a minute out; status and cleanup are the CLI's.
    await lab.sim.control.hold('CreateVmfsDatastore');
    await lab.sim.control.fault({ method: 'CreateVmfsDatastore', fault: 'HostConfigFault', message: 'injected: failed late', count: 1 });
    try {
      const runsDir = await lab.newRunsDir('late');
      const gaveUp = (d: string) => existsSync(path.join(d, 'log.jsonl')) && log(d).includes('may appear later') && ledgerRows(d)[0]?.state === 'remove-failed';
      const running = runInProcess(pb, { env: process.env, inventory: lab.inventory, out: runsDir, confirmDestroy: lab.vmfsDevice, report: false, orphanGraceMs: 1000 });
      let ended = false;
      void running.then(
        () => (ended = true),
        () => (ended = true),
      );
      // (ended: the run is over, whatever the ledger says; the assertions below tell)
      await waitFor(() => ended || gaveUp(runDirIn(runsDir) ?? runsDir), { what: 'teardown giving up on the late create', timeoutMs: 120_000 });
      expect((await lab.sim.control.release('CreateVmfsDatastore')).calls).toBe(1);
      const { outcome, notes } = await running;
      expect(runExitCode(outcome), notes).toBe(1);
      const runDir = outcome.runDir;
      expect(notes + log(runDir)).toMatch(/timed out; waiting up to 1 s for the call to settle before teardown/);
      expect(log(runDir)).toMatch(/may appear later: it stays in the ledger, and `storsweep cleanup` looks for it again/);
      const [row] = ledgerRows(runDir);
      expect(row).toMatchObject({ kind: 'datastore', state: 'remove-failed', error: 'create may still complete; run storsweep cleanup' });
      expect((await runCli(['status', runDir])).stdout).toContain(row!.name);
      const c = await runCli(['cleanup', runDir]);
      expect(c.code).toBe(1);
      expect(c.stdout).toMatch(/not found yet, but its create was still running when the run gave up on it at \S+ and may still complete; run storsweep cleanup again after \S+/);
      expect(ledgerRows(runDir)[0]!.state).toBe('remove-failed');
      // the create, held until then, failed: nothing was made
      expect((await lab.sim.control.log()).filter((e) => e.method === 'CreateVmfsDatastore').map((e) => [e.held, e.end > 0])).toEqual([[true, true]]);
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    } finally {
      await lab.sim.control.release('CreateVmfsDatastore');
    }
  });

  it('a read before the create hangs past timeouts.stepSec: the step gives up and the create is never sent afterwards', async () => {
    const pb = await lab.writePlaybook('hang-read.yaml', sweepPlaybook({ name: 'hang-read', blockSizesMb: [1], formats: ['thin'], repeat: 1, extra: ['timeouts:', '  stepSec: 1'] }));
    // held until the run has given up on its step and ended it (the CLI exits once the read returns)
    await lab.sim.control.hold('QueryVmfsDatastoreCreateOptions');
    try {
      const runsDir = await lab.newRunsDir('hang-read');
      const runEnded = (d: string) => existsSync(path.join(d, 'log.jsonl')) && log(d).includes('"type":"run-end"');
      const r = await runCliWhen(['run', pb, ...lab.runArgs(runsDir)], { runsDir }, runEnded, async () => {
        expect((await lab.sim.control.release('QueryVmfsDatastoreCreateOptions')).calls).toBe(1);
      });
      expect(r.fired).toBe(true);
      expect(r.code).toBe(1);
      const runDir = runDirOf(r);
      expect(permutationStatuses(runDir)[0]!.reason).toContain('timed out after 1000 ms');
      // the run waited for the held read to return (settling the timed-out call) before its
      // teardown: the provider's send after that was refused at ctx.sent
      expect((await lab.sim.control.calls()).CreateVmfsDatastore ?? 0).toBe(0);
      expect(ledgerRows(runDir).map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:not-sent']);
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    } finally {
      await lab.sim.control.release('QueryVmfsDatastoreCreateOptions');
    }
  });

  it.skipIf(process.getuid?.() !== 0)('disk full in the run directory: a clear failure, committed records kept, lab cleaned', async () => {
    const mnt = path.join(lab.dir, 'tiny');
    fs.mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
    try {
      const pb = await lab.writePlaybook('full.yaml', sweepPlaybook({ name: 'full', blockSizesMb: [1, 2, 4], formats: ['thin'], repeat: 1 }));
      const runsDir = path.join(mnt, 'runs');
      const r = await runCliWhen(['run', pb, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'permutation', 'done') >= 1, () => {
        // Fill the file system: every later write of the run hits ENOSPC.
        const fd = fs.openSync(path.join(mnt, 'filler'), 'w');
        const chunk = Buffer.alloc(64 * 1024, 1);
        try {
          for (;;) fs.writeSync(fd, chunk);
        } catch {
          /* full */
        } finally {
          fs.closeSync(fd);
        }
      });
      expect(r.fired).toBe(true);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/no space left|ENOSPC|SQLITE_FULL|disk is full/i);
      fs.rmSync(path.join(mnt, 'filler'));
      const runDir = fs.readdirSync(runsDir).map((d) => path.join(runsDir, d))[0]!;
      const statuses = permutationStatuses(runDir);
      expect(statuses[0]!.status).toBe('done');
      expect(resultKeys(runDir).filter((k) => k.startsWith(statuses[0]!.permutationId))).toHaveLength(1);
      expect(statuses.slice(1).map((s) => s.status)).not.toContain('done');
      expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
      // With space again, resume finishes the run.
      const resumed = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done', 'done', 'done']);
      expect(resultKeys(runDir)).toHaveLength(3);
    } finally {
      execFileSync('umount', ['-l', mnt]);
    }
  });
});

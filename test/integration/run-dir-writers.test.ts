// One writer per run directory, and a resume that measures the rest of a run the same way
// (issue 11, items 4 and 6), on the vcsim lab with fio on this machine. `cleanup` during a live run
// is refused and the simulator still holds the run's datastore and disk; two `run --resume` at once:
// one is refused; kill -9 of the holder: the next resume takes over. A resume whose inventory (test
// file, ioengine) or playbook differ from the run's is refused naming each difference, before
// anything is touched. fio waits at a gate the test opens (test/helpers/fio-gate.ts): each run is
// live — lock held, disk attached, fio started — for exactly as long as the test acts on it, however
// slowly the machine runs the CLIs it starts meanwhile.
import fs from 'node:fs/promises';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { fioGate, type FioGate } from '../helpers/fio-gate.ts';
import { waitFor } from '../helpers/wait.ts';
import { journalHas, journalSeq, ledgerRows, NOTHING_LEFT, permutationStatuses, resultKeys, runCliWhen, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let gate: FioGate;

beforeAll(async () => {
  lab = await startVsphereLab();
  gate = fioGate(`${lab.dir}/fio-gate`);
});

afterAll(async () => {
  await lab?.stop();
});

const holderText = (pid: number, command: string) => new RegExp(`in use by pid ${pid} on host ${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(storsweep ${command.replace(/-/g, '\\-')}, since \\d{4}-\\d\\d-\\d\\dT`);

describe('one writer per run directory', { timeout: 180_000 }, () => {
  it('cleanup during a live run is refused with the holder named; the run keeps its disk and datastore and completes', async () => {
    // fio waits at the gate until `cleanup` and `status` have had their say
    gate.close();
    const pb = await lab.writePlaybook('live.yaml', sweepPlaybook({ name: 'live', blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
    const runsDir = await lab.newRunsDir('live');
    let cleanup: Awaited<ReturnType<typeof runCli>> | null = null;
    let during: Awaited<ReturnType<VsphereLab['leftovers']>> | null = null;
    let liveLedger: Array<{ kind: string; name: string; state: string }> = [];
    const r = await runCliWhen(
      ['run', pb, ...lab.runArgs(runsDir)],
      { runsDir },
      (d) => journalHas(d, 'disk:%', 'created') >= 1,
      async (pid, runDir) => {
        try {
          // the run is measuring on the disk: its fio has started (and waits at the gate)
          await waitFor(() => gate.held().length === 1, { what: "the run's fio at the gate" });
          cleanup = await runCli(['cleanup', runDir]);
          expect(cleanup.stderr).toMatch(holderText(pid, 'run'));
          // read while the run still holds its objects
          liveLedger = ledgerRows(runDir);
          during = await lab.leftovers();
          // status only reads: it works during the run and says the run is live
          const st = await runCli(['status', runDir]);
          expect(st.code).toBe(0);
          expect(st.stdout).toMatch(new RegExp(`^in use now by pid ${pid} on host .* \\(storsweep run, since `, 'm'));
          expect(st.stdout).toMatch(/running +p[0-9a-f]+ .*\(running now\)/);
        } finally {
          gate.open();
        }
      },
      { env: gate.env },
    );
    expect(r.fired).toBe(true);
    expect(cleanup!.code, cleanup!.stderr).toBe(2);
    expect(cleanup!.stdout).toBe('');
    // the simulator still had the run's datastore and disk after the refused cleanup
    const [ds, disk] = liveLedger;
    expect(liveLedger.map((l) => `${l.kind}:${l.state}`)).toEqual(['datastore:created', 'disk:created']);
    expect(during!.datastores).toEqual([ds!.name]);
    expect(during!.disks.map((d) => d.fileName)).toEqual([`[${ds!.name}] ${disk!.name}.vmdk`]);
    // and the run measured on it and tore it down itself
    expect(r.code, r.stderr).toBe(0);
    expect(permutationStatuses(r.runDir!).map((p) => p.status)).toEqual(['done']);
    expect(resultKeys(r.runDir!)).toHaveLength(1);
    expect(ledgerRows(r.runDir!).map((l) => l.state)).toEqual(['removed', 'removed']);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    // the lock went with the run: cleanup and status work again
    expect((await runCli(['cleanup', r.runDir!])).stdout).toBe('nothing to clean up\n');
    expect((await runCli(['status', r.runDir!])).stdout).not.toContain('in use');
  });

  it('deleting run.lock during a live run frees nothing: cleanup is still refused and status names the run; a symlinked run.lock is refused, never followed', async () => {
    gate.close();
    const pb = await lab.writePlaybook('rmlock.yaml', sweepPlaybook({ name: 'rmlock', blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
    const runsDir = await lab.newRunsDir('rmlock');
    let cleanup: Awaited<ReturnType<typeof runCli>> | null = null;
    let status: Awaited<ReturnType<typeof runCli>> | null = null;
    let during: Awaited<ReturnType<VsphereLab['leftovers']>> | null = null;
    const r = await runCliWhen(
      ['run', pb, ...lab.runArgs(runsDir)],
      { runsDir },
      (d) => journalHas(d, 'disk:%', 'created') >= 1,
      async (pid, runDir) => {
        try {
          // (the run keeps the deleted file open, so its inode is not reused while the run lives; a
          // file that reuses it later is locked under another pid: run-lock.ts replacedLockHolder)
          await fs.rm(`${runDir}/run.lock`);
          cleanup = await runCli(['cleanup', runDir]);
          expect(cleanup.stderr).toMatch(holderText(pid, 'run'));
          during = await lab.leftovers();
          status = await runCli(['status', runDir]);
          expect(status.stdout).toMatch(new RegExp(`^in use now by pid ${pid} on host .* \\(storsweep run, since `, 'm'));
        } finally {
          gate.open();
        }
      },
      { env: gate.env },
    );
    expect(r.fired).toBe(true);
    expect(cleanup!.code, cleanup!.stderr).toBe(2);
    expect(cleanup!.stderr).toContain('run.lock was deleted or replaced while held');
    expect(cleanup!.stdout).toBe('');
    // the simulator still had the run's datastore and disk after the refused cleanup, and the run
    // measured on them and tore them down itself
    expect(during!.datastores).toHaveLength(1);
    expect(during!.disks).toHaveLength(1);
    expect(r.code, r.stderr).toBe(0);
    expect(permutationStatuses(r.runDir!).map((p) => p.status)).toEqual(['done']);
    expect(ledgerRows(r.runDir!).map((l) => l.state)).toEqual(['removed', 'removed']);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);

    // The user replaced report.md: resuming the finished run measures nothing more, warns that
    // report.md is not ours (naming it), leaves it, still writes report.html, and succeeds.
    await fs.writeFile(`${r.runDir!}/report.md`, '# my notes on this run\n');
    const again = await runCli(['run', '--resume', r.runDir!, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`warning: ${r.runDir!}/report.md was not written: it exists and is not a report storsweep wrote, so it was left as it is`);
    expect(again.stderr).toContain(`report: ${r.runDir!}/report.html\n`);
    expect(await fs.readFile(`${r.runDir!}/report.md`, 'utf8')).toBe('# my notes on this run\n');
    expect(await fs.readFile(`${r.runDir!}/report.html`, 'utf8')).toContain('<meta name="generator" content="storsweep">');

    // run.lock replaced by a symlink: to an empty file elsewhere, to a file that is not a database
    const empty = `${lab.dir}/rmlock-empty`;
    const notes = `${lab.dir}/rmlock-notes.txt`;
    await fs.writeFile(empty, '');
    await fs.writeFile(notes, 'my notes\n');
    for (const target of [empty, notes]) {
      await fs.rm(`${r.runDir!}/run.lock`, { force: true });
      await fs.symlink(target, `${r.runDir!}/run.lock`);
      const c = await runCli(['cleanup', r.runDir!]);
      expect(c.code, c.stderr).toBe(2);
      expect(c.stderr).toContain(`${r.runDir!}/run.lock is a symbolic link (to ${JSON.stringify(target)}), not the lock file storsweep creates there; nothing was changed`);
      expect(c.stderr).not.toMatch(/SqliteError|not a database/);
    }
    expect(await fs.readFile(empty, 'utf8')).toBe('');
    expect(await fs.readFile(notes, 'utf8')).toBe('my notes\n');
  });

  it('resume: an edited inventory or another playbook is refused before anything is touched; of two resumes one is refused; after kill -9 of the holder the next resume takes over', async () => {
    // fio held at the gate until the second resume has been refused
    gate.close();
    const pb = await lab.writePlaybook('resume.yaml', sweepPlaybook({ name: 'resume', blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
    const runsDir = await lab.newRunsDir('resume');
    // kill -9 as soon as the permutation's disk exists: a run with live objects to resume
    const first = await runCliWhen(['run', pb, ...lab.runArgs(runsDir)], { runsDir }, (d) => journalHas(d, 'disk:%', 'created') >= 1, (pid) => void process.kill(pid, 'SIGKILL'), { env: gate.env });
    expect(first.code).toBeNull();
    const runDir = first.runDir!;
    const ledgerBefore = ledgerRows(runDir);
    expect(ledgerBefore.map((l) => l.state)).toEqual(['created', 'created']);

    // Another sudo setting and ioengine for the same target: refused, each difference named.
    const original = await fs.readFile(lab.inventory, 'utf8');
    const edited = `${lab.dir}/inventory-edited.yaml`;
    // the guest's last line (byIdDir: the lab's disks by WWN), so the NFS block below stays the target's
    const workdirLine = original.match(/^ {6}byIdDir: .*$/m)![0];
    // (an NFS export the run never mounts is added too: no part of the comparison)
    await fs.writeFile(edited, original.replace(workdirLine, `${workdirLine}\n      sudo: true\n      ioengine: psync\n    nfs:\n      remoteHost: nas1\n      remotePath: /export/other`));
    const seq = journalSeq(runDir);
    const mixed = await runCli(['run', '--resume', runDir, '-i', edited, '--no-report', '--json']);
    expect(mixed.code, mixed.stderr).toBe(2);
    expect(mixed.stderr).toContain(`refused: run --resume: ${edited} differs from the inventory this run started with (${lab.inventory})`);
    expect(mixed.stderr).toContain('  targets.lab-vcenter.guest.ioengine: "libaio" → "psync"\n');
    expect(mixed.stderr).toContain('  targets.lab-vcenter.guest.sudo: "false" → "true"\n');
    expect(mixed.stderr).not.toContain('nfs');
    // nothing measured, nothing torn down, nothing journaled but the lock's takeover from the killed run
    expect(resultKeys(runDir)).toEqual([]);
    expect(ledgerRows(runDir)).toEqual(ledgerBefore);
    expect(journalSeq(runDir) - seq).toBeLessThanOrEqual(1);
    expect((await lab.leftovers()).datastores).toEqual([ledgerBefore[0]!.name]);

    // Another playbook as argument: refused; the run's own playbook is accepted further down.
    const other = await lab.writePlaybook('other.yaml', sweepPlaybook({ name: 'resume', blockSizesMb: [2], formats: ['thin'], repeat: 1, runtimeSec: 6 }));
    const wrongPb = await runCli(['run', '--resume', runDir, other, '--no-report', '--json']);
    expect(wrongPb.code, wrongPb.stderr).toBe(2);
    expect(wrongPb.stderr).toMatch(/refused: run --resume: ".*other\.yaml" is not the playbook this run started with/);
    expect(resultKeys(runDir)).toEqual([]);

    // Two resumes: the second, started while the first holds the run, is refused and names it.
    let second: Awaited<ReturnType<typeof runCli>> | null = null;
    let holderPid = 0;
    // (the run's playbook with a comment added and keys quoted: the same playbook when parsed)
    const pbText = await fs.readFile(pb, 'utf8');
    const commented = await lab.writePlaybook('resume-commented.yaml', `# reviewed at 3 a.m.\n${pbText.replace(/^name: (.*)$/m, 'name: "$1" # same run')}`);
    const held = await runCliWhen(
      ['run', '--resume', runDir, commented, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'],
      { runDir },
      (d) => journalHas(d, 'run', 'resume') >= 1,
      async (pid) => {
        holderPid = pid;
        second = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'], { env: gate.env });
        // then the holder dies without releasing anything
        process.kill(pid, 'SIGKILL');
      },
      { env: gate.env },
    );
    expect(held.fired).toBe(true);
    expect(held.code).toBeNull();
    expect(second!.code, second!.stderr).toBe(2);
    expect(second!.stderr).toMatch(holderText(holderPid, 'run --resume'));
    expect(journalHas(runDir, 'run', 'resume')).toBe(1);

    // The next resume takes the dead holder's lock over, says so, and completes.
    gate.open();
    const last = await runCli(['run', '--resume', runDir, '--confirm-destroy', lab.vmfsDevice, '--no-report', '--json'], { timeoutMs: 120_000, env: gate.env });
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toContain(`was last held by pid ${holderPid} on host "${os.hostname()}" (storsweep run --resume`);
    // (the first refused resume took over from the killed `run` too: two takeovers)
    expect(journalHas(runDir, 'run', 'lock-takeover')).toBe(2);
    expect(permutationStatuses(runDir).map((p) => p.status)).toEqual(['done']);
    expect(resultKeys(runDir)).toHaveLength(1);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

// The test file is ours or it is confirmed (issue 26, item 3), on the lab's SSH guest (a real
// OpenSSH server) and on this machine (`local`), with real fio. A file storsweep did not create at
// `testFile` is refused before anything is written there (its bytes compared by hash, no mark made,
// no run started), and overwritten only with `--confirm-destroy <path>`; the test file a run made is
// removed at teardown, kept with --keep (status lists it) and removed by cleanup — only while the
// mark beside it is that run's, read on the guest at that moment.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../src/config/index.ts';
import { composeTargets } from '../../src/app/compose.ts';
import { ownedPrefix } from '../../src/plan/permutation.ts';
import { lastJsonLine, runCli } from '../helpers/cli.ts';
import { executeSteps } from '../helpers/executor-run.ts';
import { startLabGuest, tinyPlaybook, type LabGuest } from '../helpers/lab-guest.ts';

const PROFILE = '"4k 100% read 100% random"';
const MARK = '.storsweep-mark';
let guest: LabGuest;
let n = 0;

beforeAll(async () => {
  guest = await startLabGuest();
}, 60_000);
afterAll(() => guest?.stop());

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** A user's file of 1 MiB of random bytes in the guest's work directory (the lab's guest is this machine). */
function userFile(name: string): string {
  const file = path.join(guest.workdir, name);
  fs.writeFileSync(file, randomBytes(1024 * 1024));
  return file;
}

/** The lab inventory with `testFile` set on both targets. */
function inventoryWith(testFile: string): string {
  const file = path.join(guest.dir, `inv-${++n}.yaml`);
  const text = fs.readFileSync(guest.inventory, 'utf8').replace(/(\n {4}provider: (?:ssh|local)\n)/g, `$1    testFile: ${testFile}\n`);
  fs.writeFileSync(file, text);
  return file;
}

function freshRunsDir(): string {
  const dir = path.join(guest.dir, `runs-${++n}`);
  fs.mkdirSync(dir);
  return dir;
}

async function playbookFor(target: string): Promise<string> {
  return guest.writePlaybook(`pb-${target}.yaml`, tinyPlaybook({ target, profiles: [PROFILE] }));
}

/** How the target's runner names the guest in messages. */
const whereOf = (target: string) => (target === 'lab-guest' ? `ssh://${guest.user}@127.0.0.1:${guest.sshd.port}` : 'local');

describe.each(['lab-guest', 'lab-local'])('%s: a file at testFile that storsweep did not create', (target) => {
  it('run refuses it before anything is written: same bytes, no mark beside it, no run started', async () => {
    const user = userFile(`${target}-refused.dat`);
    const before = sha256(user);
    const runs = freshRunsDir();
    const r = await runCli(['run', await playbookFor(target), '-i', inventoryWith(user), '--out', runs, '--no-report']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`refused: ${whereOf(target)}: the test file ${user} exists and storsweep did not create it (a regular file of 1048576 bytes with no ${MARK} beside it)`);
    expect(r.stderr).toContain(`confirm with --confirm-destroy ${user}`);
    expect(sha256(user)).toBe(before);
    expect(fs.existsSync(`${user}${MARK}`)).toBe(false);
    expect(fs.readdirSync(runs)).toEqual([]);
  });

  it('with --confirm-destroy <that path> the run proceeds: the file is written over and marked as the run\'s', async () => {
    const user = userFile(`${target}-confirmed.dat`);
    const before = sha256(user);
    const r = await runCli(['run', await playbookFor(target), '-i', inventoryWith(user), '--out', freshRunsDir(), '--no-report', '--json', '--keep', '--confirm-destroy', user]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`the test file ${user} (a regular file of 1048576 bytes with no ${MARK} beside it) is overwritten as confirmed`);
    // --keep: what the run left, to look at — the pre-fill's 8 MiB, and the mark that hands it over
    expect(fs.statSync(user).size).toBe(8 * 1024 * 1024);
    expect(sha256(user)).not.toBe(before);
    const runDir = lastJsonLine<{ runDir: string }>(r.stdout).runDir;
    expect(fs.readFileSync(`${user}${MARK}`, 'utf8')).toContain(`storsweep test file ss-${runDir.split('-').at(-1)!}-`);
    const c = await runCli(['cleanup', runDir]);
    expect(c.stdout).toMatch(/^removed: test-file ss-/);
    expect(fs.existsSync(user)).toBe(false);
    expect(fs.existsSync(`${user}${MARK}`)).toBe(false);
  });
});

describe('validate looks at a test file on this machine (a guest it cannot see is looked at by run)', () => {
  it('refuses at the testFile line, unless --confirm-destroy names the path', async () => {
    const user = userFile('validate.dat');
    const inv = inventoryWith(user);
    const line = fs.readFileSync(inv, 'utf8').split('\n').findIndex((l) => l.includes('provider: local')) + 2;
    const pb = await playbookFor('lab-local');
    const v = await runCli(['validate', pb, '-i', inv]);
    expect(v.code).toBe(2);
    expect(v.stderr).toBe(`${inv}:${line}:15: targets.lab-local.testFile: the test file ${user} exists on this machine and storsweep did not create it (a regular file of 1048576 bytes with no ${MARK} beside it); run refuses to write over it unless --confirm-destroy names ${user}\n`);
    const ok = await runCli(['validate', pb, '-i', inv, '--confirm-destroy', user]);
    expect(ok.code, ok.stderr).toBe(0);
  });
});

describe('the marking step refuses on its own (workers, resume, a file that appears after run start)', () => {
  it('over SSH: refused and recorded so, nothing written; confirmed: it goes on', async () => {
    const user = userFile('step.dat');
    const before = sha256(user);
    const comp = composeTargets(['lab-guest'], loadInventory(inventoryWith(user), process.env)).get('lab-guest')!;
    const steps = comp.planSteps!({}, { prefix: ownedPrefix('rstep1', 'p1') });
    expect(steps.map((s) => `${s.step}:${s.operation}`)).toEqual(['test-file:mark test file']);
    const provider = (await comp.connectProvider())!;
    try {
      const refused = await executeSteps(guest.dir, 'rstep1', steps, provider);
      expect(refused.summary.failed).toBe(1);
      expect(refused.store.ledger().map((o) => `${o.kind}:${o.state}`)).toEqual(['test-file:refused']);
      expect(refused.store.permutations()[0]!.reason).toContain(`the test file ${user} exists and storsweep did not create it`);
      refused.store.close();
      expect(sha256(user)).toBe(before);
      expect(fs.existsSync(`${user}${MARK}`)).toBe(false);
      const confirmed = await executeSteps(guest.dir, 'rstep2', comp.planSteps!({}, { prefix: ownedPrefix('rstep2', 'p1') }), provider, { confirmedDestroy: [user] });
      expect(confirmed.summary.done).toBe(1);
      expect(confirmed.store.ledger().map((o) => `${o.kind}:${o.state}`)).toEqual(['test-file:removed']);
      confirmed.store.close();
      // confirmed, it was the run's: removed at teardown with its mark
      expect(fs.existsSync(user)).toBe(false);
      expect(fs.existsSync(`${user}${MARK}`)).toBe(false);
    } finally {
      await provider.close();
    }
  });
});

describe('the default test file is the run\'s own (SSH guest)', () => {
  const file = () => path.join(guest.workdir, 'storsweep-test.dat');

  it('after a normal run it is gone from the work directory, with its mark', async () => {
    const r = await runCli(['run', await playbookFor('lab-guest'), '-i', guest.inventory, '--out', freshRunsDir(), '--no-report', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(lastJsonLine<{ leftovers: number }>(r.stdout.trim().split('\n').at(-2)!).leftovers).toBe(0);
    expect(fs.readdirSync(guest.workdir).filter((f) => f.startsWith('storsweep-test.dat'))).toEqual([]);
  });

  it('--keep leaves it, marked with the run; status lists it; cleanup removes it', async () => {
    const r = await runCli(['run', await playbookFor('lab-guest'), '-i', guest.inventory, '--out', freshRunsDir(), '--no-report', '--json', '--keep']);
    expect(r.code, r.stderr).toBe(0);
    const runDir = lastJsonLine<{ runDir: string }>(r.stdout).runDir;
    const runId = runDir.split('-').at(-1)!;
    expect(fs.statSync(file()).size).toBe(8 * 1024 * 1024);
    const mark = fs.readFileSync(`${file()}${MARK}`, 'utf8');
    expect(mark).toMatch(new RegExp(`^storsweep test file ss-${runId}-p[0-9a-f]{12}-testfile ${file()}\\n$`));
    const owner = mark.split(' ')[3]!;
    const status = await runCli(['status', runDir]);
    expect(status.stdout).toContain(`  kept          test-file ${owner} (${file()})\n`);
    const dry = await runCli(['cleanup', runDir, '--dry-run']);
    expect(dry.stdout).toBe(`would remove test-file ${owner} (${file()})\n`);
    const c = await runCli(['cleanup', runDir]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toContain(`removed: test-file ${owner}\n`);
    expect(fs.readdirSync(guest.workdir).filter((f) => f.startsWith('storsweep-test.dat'))).toEqual([]);
    expect((await runCli(['status', runDir])).stdout).not.toContain('test-file');
  });

  it('cleanup reads the mark at that moment: a file put in its place (the mark gone) is left alone', async () => {
    const r = await runCli(['run', await playbookFor('lab-guest'), '-i', guest.inventory, '--out', freshRunsDir(), '--no-report', '--json', '--keep']);
    expect(r.code, r.stderr).toBe(0);
    const runDir = lastJsonLine<{ runDir: string }>(r.stdout).runDir;
    // the user removes the kept file and its mark and puts a file of their own at the path
    fs.rmSync(`${file()}${MARK}`);
    fs.rmSync(file());
    fs.writeFileSync(file(), randomBytes(4096));
    const before = sha256(file());
    const c = await runCli(['cleanup', runDir]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toContain(`left alone: no ${file()}${MARK} beside it, so it is not this run's test file`);
    expect(c.stdout).toMatch(/already gone: test-file ss-/);
    expect(sha256(file())).toBe(before);
    fs.rmSync(file());
  });

  it('a file an earlier run kept is storsweep\'s: a new run takes it over, and the earlier run\'s cleanup then leaves it', async () => {
    const first = await runCli(['run', await playbookFor('lab-guest'), '-i', guest.inventory, '--out', freshRunsDir(), '--no-report', '--json', '--keep']);
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['run', await playbookFor('lab-guest'), '-i', guest.inventory, '--out', freshRunsDir(), '--no-report', '--json', '--keep']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/took over the test file .*storsweep-test\.dat, left by ss-r/);
    const secondRun = lastJsonLine<{ runDir: string }>(second.stdout).runDir;
    expect(fs.readFileSync(`${file()}${MARK}`, 'utf8')).toContain(`ss-${secondRun.split('-').at(-1)!}-`);
    const old = await runCli(['cleanup', lastJsonLine<{ runDir: string }>(first.stdout).runDir]);
    expect(old.stdout).toContain('its mark names another owner');
    expect(fs.existsSync(file())).toBe(true);
    const own = await runCli(['cleanup', secondRun]);
    expect(own.stdout).toMatch(/removed: test-file ss-/);
    expect(fs.readdirSync(guest.workdir).filter((f) => f.startsWith('storsweep-test.dat'))).toEqual([]);
  });
});

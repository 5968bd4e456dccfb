// Failures on a real sshd: a host key that known_hosts does not vouch for is refused before any
// command runs; a guest that dies mid-run fails its permutation with a connection reason while
// the repetitions already recorded stay in the run's database.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { startLabGuest, tinyPlaybook, type LabGuest } from '../helpers/lab-guest.ts';
import { waitFor } from '../helpers/wait.ts';

const guests: LabGuest[] = [];
afterAll(async () => {
  for (const g of guests) await g.stop();
});

interface PermRow {
  permutation_id: string;
  status: string;
  reason: string | null;
  completed_repetitions: number;
}

function readRun(runDir: string): { perms: PermRow[]; records: Array<{ permutationId: string; repetition: number }> } {
  const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
  try {
    const perms = db.prepare('SELECT permutation_id, status, reason, completed_repetitions FROM permutations ORDER BY idx').all() as PermRow[];
    const records = (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as { permutationId: string; repetition: number });
    return { perms, records };
  } finally {
    db.close();
  }
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { runDir: string };

describe('host key verification', () => {
  it('refuses a server whose key is not the one in known_hosts: clear message, no result', async () => {
    const g = await startLabGuest({
      knownHosts: async (sshd) => {
        // a real key, just not this server's
        const other = path.join(sshd.dir, '..', 'impostor_key');
        execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
        return `[127.0.0.1]:${sshd.port} ${fs.readFileSync(`${other}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`;
      },
    });
    guests.push(g);
    const pb = await g.writePlaybook('pb.yaml', tinyPlaybook());
    const r = await runCli(['run', pb, '-i', g.inventory, '--out', g.runsDir, '--json']);
    expect(r.code).toBe(1);
    const message = `ssh://${g.user}@127.0.0.1:${g.sshd.port}: HOST KEY MISMATCH for [127.0.0.1]:${g.sshd.port}: presented SHA256:`;
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`${g.knownHostsFile} expects ssh-ed25519 (line 1)`);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const { perms, records } = readRun(lastJson(r.stdout).runDir);
    expect(records).toEqual([]);
    expect(perms).toHaveLength(1);
    expect(perms[0]!.status).toBe('failed');
    expect(perms[0]!.reason).toContain(message);
    // nothing ran on the guest: fio never created its test file
    expect(fs.readdirSync(g.workdir)).toEqual([]);
  });

  it('refuses a host that is not in known_hosts at all', async () => {
    const g = await startLabGuest({ knownHosts: () => '# empty\n' });
    guests.push(g);
    const pb = await g.writePlaybook('pb.yaml', tinyPlaybook());
    const r = await runCli(['run', pb, '-i', g.inventory, '--out', g.runsDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`host [127.0.0.1]:${g.sshd.port} is not in ${g.knownHostsFile}`);
    expect(readRun(r.stdout.trim()).records).toEqual([]);
  });
});

describe('the SSH server dies mid-run', () => {
  it('fails the running permutation with a connection reason and keeps the repetitions already recorded', async () => {
    const g = await startLabGuest();
    guests.push(g);
    // two permutations of three tests each (repeat 2), the three 1 s fio passes of the first
    // permutation's second repetition the margin between "repetition 1 recorded" and the kill; the
    // server dies during that second repetition
    const pb = await g.writePlaybook('two.yaml', threeTestPlaybook());
    let killedAfter = -1;
    const watchers: Promise<void>[] = [];
    const watch = async () => {
      // the run's database, then repetition 1's records (committed as one transaction)
      killedAfter = await waitFor(() => recordsIn(g.runsDir), { what: 'repetition 1 recorded', timeoutMs: 120_000 });
      await g.kill();
    };
    const r = await runCli(['run', pb, '-i', g.inventory, '--out', g.runsDir, '--json'], {
      onSpawn: () => {
        watchers.push(watch());
      },
    });
    expect(watchers).toHaveLength(1);
    await Promise.all(watchers);
    expect(killedAfter).toBe(3);
    expect(r.code).toBe(1);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-2)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ done: 0, failed: 2, interrupted: false });
    const { perms, records } = readRun(lastJson(r.stdout).runDir);
    // repetition 1 of the first permutation is kept, complete; nothing of repetition 2
    expect(records).toHaveLength(3);
    expect(records.every((x) => x.permutationId === perms[0]!.permutation_id && x.repetition === 1)).toBe(true);
    expect(perms[0]).toMatchObject({ status: 'failed', completed_repetitions: 1 });
    // remoteFailureMessage's short form: host, the command, how it failed (the SSH connection was lost)
    expect(perms[0]!.reason).toMatch(new RegExp(`^ssh://${g.user}@127\\.0\\.0\\.1:${g.sshd.port}: (SSH (connection lost|channel closed)|.* lost its SSH connection while it ran)`));
    // the second permutation cannot connect: refused, said so
    expect(perms[1]).toMatchObject({ status: 'failed', completed_repetitions: 0 });
    expect(perms[1]!.reason).toMatch(/SSH connection failed: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
    // `status` reports both failures with their reasons
    const status = await runCli(['status', lastJson(r.stdout).runDir]);
    expect(status.stdout).toContain('done 0, failed 2, pending 0 of 2');
    expect(status.stdout).toContain(`failed  ${perms[1]!.permutation_id} profile=second: `);
  });
});

/** How many records the run under `runsDir` has committed (0 before its database exists). */
function recordsIn(runsDir: string): number {
  const [dir] = fs.readdirSync(runsDir);
  const db = dir && path.join(runsDir, dir, 'run.sqlite');
  if (!db || !fs.existsSync(db)) return 0;
  try {
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (conn.prepare('SELECT count(*) AS n FROM results').get() as { n: number }).n;
    } finally {
      conn.close();
    }
  } catch {
    return 0; // not created yet
  }
}

/** Two permutations (profile first, second) of three 1 s tests each, repeat 2, on lab-guest. */
function threeTestPlaybook(): string {
  const tests = '["4k 100% read 100% random", "4k 0% read 100% random", "64k 100% read 0% random"]';
  return tinyPlaybook({ name: 'dies', profiles: ['first', 'second'], repeat: 2 }).replace('settings:', `workloads:\n  first:\n    iometer: ${tests}\n  second:\n    iometer: ${tests}\nsettings:`);
}

// Usage errors through the CLI as a user meets them (issue 12, item 6): a path that is not a run
// directory is exit code 2 with the same words in every command that takes one; a target whose
// provider cannot connect leaves every permutation it could not start with the reason, in the
// journal and in `status`.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-rundir-'));
  await fs.mkdir(path.join(dir, 'empty'));
});
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('not a run directory', () => {
  it('is exit code 2, "not a run directory", in status, results, cleanup, run --resume, report and compare', async () => {
    const empty = path.join(dir, 'empty');
    const commands = [['status', empty], ['status', empty, '--json'], ['results', empty], ['cleanup', empty], ['cleanup', empty, '--dry-run'], ['run', '--resume', empty], ['report', empty], ['compare', empty, empty]];
    // independent of each other: all at once
    const results = await Promise.all(commands.map((args) => runCli(args, { cwd: dir })));
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${empty}: not a run directory (no run.sqlite`);
      expect(stackTraceLines(r.stderr), args.join(' ')).toEqual([]);
    }
    // nothing was created in it
    expect(await fs.readdir(empty)).toEqual([]);
  });

  it('a path that does not exist is a usage error too', async () => {
    const missing = path.join(dir, 'missing');
    const commands = [['status', missing], ['cleanup', missing], ['run', '--resume', missing], ['report', missing]];
    const results = await Promise.all(commands.map((args) => runCli(args, { cwd: dir })));
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/not a run directory|no such run directory/);
    }
    await expect(fs.stat(missing)).rejects.toThrow(/ENOENT/);
  });
});

describe('a provider that cannot connect', () => {
  const inventory = [
    'sshHosts:',
    '  hv:',
    '    host: 127.0.0.1',
    '    port: 9', // discard: nothing listens, the connection is refused at once
    '    user: admin',
    '    password: ${env:SS_TEST_HV_PW}',
    '    knownHostsFile: ./known_hosts',
    'targets:',
    '  hv:',
    '    provider: hyperv',
    '    sshHost: hv',
    '    vmName: bench-vm',
    '    volumes:',
    `      "100": 'D:\\bench'`,
    '    guestCredential:',
    '      username: admin',
    '      password: ${env:SS_TEST_HV_PW}',
    '',
  ].join('\n');
  const playbook = ['name: connect', 'target: hv', 'matrix:', '  volume:', '    sizeGb: [100]', '  disk:', '    format: [vhdx-fixed, vhdx-dynamic]', '    sizeGb: [8]', '  workload:', '    profile: [cdm5]', 'repeat: 1', ''].join('\n');

  it('journals the reason on every permutation it could not start; status shows it; they stay pending', async () => {
    await fs.writeFile(path.join(dir, 'known_hosts'), '');
    await fs.writeFile(path.join(dir, 'inv.yaml'), inventory);
    await fs.writeFile(path.join(dir, 'pb.yaml'), playbook);
    const env = { SS_TEST_HV_PW: 'not-a-real-password' };
    const r = await runCli(['run', 'pb.yaml', '-i', 'inv.yaml', '--out', 'runs', '--no-report'], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ECONNREFUSED');
    const [runName, ...others] = await fs.readdir(path.join(dir, 'runs'));
    expect(others).toEqual([]);
    const runDir = path.join(dir, 'runs', runName!);

    const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true });
    const perms = db.prepare('SELECT permutation_id AS id, status, reason FROM permutations ORDER BY idx').all() as Array<{ id: string; status: string; reason: string }>;
    const journal = db.prepare("SELECT permutation_id AS id, detail FROM journal WHERE step = 'connect' AND event = 'failed' ORDER BY seq").all() as Array<{ id: string; detail: string }>;
    db.close();
    expect(perms).toHaveLength(2);
    for (const p of perms) {
      expect(p.status).toBe('pending');
      expect(p.reason).toMatch(/^not started: cannot connect to target hv: .*ECONNREFUSED/);
    }
    expect(journal.map((j) => j.id)).toEqual(perms.map((p) => p.id));
    for (const j of journal) expect(JSON.parse(j.detail)).toMatchObject({ target: 'hv', reason: expect.stringContaining('ECONNREFUSED') });

    const status = await runCli(['status', runDir], { cwd: dir });
    expect(status.code).toBe(0);
    for (const p of perms) expect(status.stdout).toMatch(new RegExp(`pending ${p.id} .*: not started: cannot connect to target hv: .*ECONNREFUSED`));
    // the log has it too, with the long form of the failed connection
    const log = (await fs.readFile(path.join(runDir, 'log.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { msg?: string; text?: string; fields?: { detail?: string } });
    const entry = log.find((l) => l.text?.startsWith('not started: cannot connect to target hv'));
    expect(entry?.fields?.detail).toMatch(/^host: /m);
    expect(entry?.fields?.detail).toContain('reason: connection');
  });
});

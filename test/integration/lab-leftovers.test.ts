// `npm run lab -- up` that fails part-way stops what it had started, and `lab down` finds the lab's
// processes and loop devices on the machine even when .lab/state.json is gone — read back from /proc
// and /sys/block afterwards, not from exit codes. (A failed demo once left its lab sshd, root login on
// 127.0.0.1, running for an hour unknown to `down`; a `down` without state kept an ESXi guest disk
// attached as a loop device.)
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findLabLoops, findLabProcesses } from '../../src/lab/leftovers.ts';
import { REPO_ROOT } from '../helpers/cli.ts';

const LAB = path.join(REPO_ROOT, 'bin', 'lab.mjs');

function lab(root: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LAB, ...args], { cwd: root, timeout: 180_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const roots: string[] = [];
const loops: string[] = [];
const others: ChildProcess[] = [];
afterAll(async () => {
  for (const r of roots) await lab(r, ['down']);
  for (const l of loops) spawnDetach(l);
  for (const c of others) c.kill('SIGKILL');
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function spawnDetach(loop: string): void {
  try {
    execFileSync('losetup', ['-d', loop], { stdio: 'ignore' });
  } catch {
    /* detached already */
  }
}

function newRoot(): string {
  const r = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lableft-'));
  roots.push(r);
  return r;
}

function attachImage(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.alloc(1 << 20));
  const dev = execFileSync('losetup', ['-f', '--show', file], { encoding: 'utf8' }).trim();
  loops.push(dev);
  return dev;
}

const attached = (dev: string) => fs.existsSync(`/sys/block/${path.basename(dev)}/loop/backing_file`);

describe('a lab cut short leaves nothing running', () => {
  it('up fails after its sshd started (the simulator cannot start): the sshd is stopped again, exit ≠ 0', async () => {
    const root = newRoot();
    // the simulator's data directory cannot be made: the harness start fails after sshd is up
    fs.mkdirSync(path.join(root, '.lab'), { recursive: true });
    fs.writeFileSync(path.join(root, '.lab', 'vcsim-data'), 'not a directory');
    const up = await lab(root, ['up']);
    expect(up.code).not.toBe(0);
    expect(up.stderr).toMatch(/^lab: /);
    // the sshd it had started is gone (this failed before the fix: sshd -f <root>/.lab/sshd/… ran on)
    expect(fs.existsSync(path.join(root, '.lab', 'sshd', 'sshd_config'))).toBe(true);
    expect(findLabProcesses(path.join(root, '.lab'))).toEqual([]);
    expect(fs.existsSync(path.join(root, '.lab', 'state.json'))).toBe(false);
  });

  it('down without a state file stops the lab\'s processes and detaches loop devices on its images; leaves the rest', async () => {
    const root = newRoot();
    const labDir = path.join(root, '.lab');
    const up = await lab(root, ['up', '--no-vcsim']);
    expect(up.code).toBe(0);
    const running = findLabProcesses(labDir);
    expect(running.map((p) => p.command).join('\n')).toMatch(/sshd -D -f .*\.lab/);
    // an ESXi guest disk the stand-ins attached, and the state lost (a crash, a deleted .lab/state.json)
    const ours = attachImage(path.join(labDir, 'esxi-guest-disks', 'images', 'disk.img'));
    // not the lab's: a loop device on an image elsewhere, and a process that only names a lab path
    const theirs = attachImage(path.join(root, 'elsewhere', 'user.img'));
    const bystander = spawn('sh', ['-c', 'sleep 600', path.join(labDir, 'sshd', 'sshd_config')], { stdio: 'ignore' });
    others.push(bystander);
    fs.rmSync(path.join(labDir, 'state.json'));

    const down = await lab(root, ['down']);
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(new RegExp(`^lab was not running; stopped ${running.length} lab process.*; detached ${ours}\\b`));
    expect(findLabProcesses(labDir)).toEqual([]);
    for (const p of running) expect(fs.existsSync(`/proc/${p.pid}`) && !fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8').includes(') Z ')).toBe(false);
    expect(attached(ours)).toBe(false);
    expect(findLabLoops(labDir)).toEqual([]);
    // what is not the lab's stays
    expect(attached(theirs)).toBe(true);
    expect(bystander.exitCode).toBe(null);
    expect(fs.existsSync(`/proc/${bystander.pid}`)).toBe(true);
  });
});

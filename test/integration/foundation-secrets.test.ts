// Secrets by reference only: the client key is encrypted with a passphrase that the inventory
// names as ${env:…}, and an unused vCenter password comes from ${file:…}. The run must work (the
// passphrase is really used) and neither value may appear in any output or any file of the run.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines, type CliResult } from './helpers/cli.ts';
import { startLabGuest, tinyPlaybook, type LabGuest } from './helpers/lab-guest.ts';

const KEYPASS = 'kp-Secr3t-7f1c9a';
const VC_PASSWORD = 'vc-Secr3t-28d4e0';
const ENV = { STORSWEEP_TEST_KEYPASS: KEYPASS };

let guest: LabGuest;
let playbook: string;

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

function expectNoSecrets(text: string | Buffer, where: string) {
  const b = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (const secret of [KEYPASS, VC_PASSWORD]) {
    expect(b.includes(secret), `${secret} leaked into ${where}`).toBe(false);
    // SQLite and JSON may store text as UTF-16 or escaped; the values here are plain ASCII
    expect(b.includes(Buffer.from(secret, 'utf16le')), `${secret} (UTF-16) leaked into ${where}`).toBe(false);
  }
}

const expectCleanCli = (r: CliResult, what: string) => {
  expectNoSecrets(r.stdout, `${what} stdout`);
  expectNoSecrets(r.stderr, `${what} stderr`);
};

beforeAll(async () => {
  guest = await startLabGuest({
    passphrase: KEYPASS,
    extraInventory: ['vcenters:', '  unused-vc:', '    url: https://vc.invalid/sdk', '    username: administrator@vsphere.local', '    password: ${file:vc-password}', ''].join('\n'),
  });
  fs.writeFileSync(path.join(guest.dir, 'vc-password'), VC_PASSWORD + '\n', { mode: 0o600 });
  playbook = await guest.writePlaybook('pb.yaml', tinyPlaybook({ name: 'secrets' }));
});

afterAll(async () => {
  await guest?.stop();
});

describe('secrets never leak', () => {
  it('the key really is encrypted: a wrong passphrase fails the run', async () => {
    expect(fs.readFileSync(guest.keyPath, 'utf8')).toContain('BEGIN OPENSSH PRIVATE KEY');
    const r = await runCli(['run', playbook, '-i', guest.inventory, '--out', path.join(guest.dir, 'wrong-pass-runs'), '--no-report'], { env: { STORSWEEP_TEST_KEYPASS: 'not-the-passphrase' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/FAILED .*(passphrase|decrypt|private key)/i);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it('a missing secret variable is a config error naming it (exit 2)', async () => {
    const r = await runCli(['plan', playbook, '-i', guest.inventory], { env: { STORSWEEP_TEST_KEYPASS: undefined } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${guest.inventory}:`);
    expect(r.stderr).toContain('sshHosts.guest.passphrase: secret ${env:STORSWEEP_TEST_KEYPASS}: environment variable STORSWEEP_TEST_KEYPASS is not set');
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it('not in `plan --json` nor `run --dry-run --json`', async () => {
    const plan = await runCli(['plan', playbook, '-i', guest.inventory, '--json'], { env: ENV });
    expect(plan.code).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ playbook: 'secrets', target: 'lab-guest' });
    expectCleanCli(plan, 'plan --json');
    const dry = await runCli(['run', playbook, '-i', guest.inventory, '--dry-run', '--json'], { env: ENV });
    expect(dry.code).toBe(0);
    expect(dry.stdout.trim().split('\n')).toHaveLength(1);
    expectCleanCli(dry, 'run --dry-run --json');
  });

  it('not in any file of a real run directory (which used the passphrase to connect)', async () => {
    const r = await runCli(['run', playbook, '-i', guest.inventory, '--out', guest.runsDir, '--json'], { env: ENV });
    expect(r.stderr).not.toMatch(/FAILED/);
    expect(r.code).toBe(0);
    expectCleanCli(r, 'run --json');
    const runDir = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
    const files = filesUnder(runDir);
    const names = files.map((f) => path.relative(runDir, f));
    // the grep covers every kind of file a run writes, so it cannot pass vacuously
    for (const expected of ['run.sqlite', 'plan.json', 'playbook.yaml', 'results.jsonl', 'log.jsonl', 'report.md', 'report.html']) expect(names).toContain(expected);
    expect(names.filter((n) => n.startsWith('raw/'))).toHaveLength(8);
    for (const f of files) expectNoSecrets(fs.readFileSync(f), path.relative(runDir, f));
    for (const cmd of [['results', runDir, '--json'], ['report', runDir, '--format', 'md'], ['status', runDir]]) {
      const out = await runCli(cmd, { env: ENV });
      expect(out.code, cmd.join(' ')).toBe(0);
      expectCleanCli(out, cmd.join(' '));
    }
  });
});

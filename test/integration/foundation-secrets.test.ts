// Secrets by reference only: the client key is encrypted with a passphrase that the inventory
// names as ${env:…}, and an unused vCenter password comes from ${file:…}. The run must work (the
// passphrase is really used) and neither value may appear in any output or any file of the run.
// A secret value pasted into a non-secret field, a password inside a URL and a short secret are
// refused at validate; raw tool output is stored byte for byte even when a secret is a word fio
// prints. On the lab (labUp with the vCenter simulator and the Hyper-V stand-in), the simulator's
// password is on no command line and in no log, and neither the vCenter password nor the Hyper-V
// guest password reaches any file of a run directory, the SQLite WAL included, while the run lives.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { stopVcsimPid } from '../../src/lab/vcsim.ts';
import { listVcsimLuns } from '../../src/lab/vsphere-inventory.ts';
import { runCli, stackTraceLines, type CliResult } from '../helpers/cli.ts';
import { descendantPids, startLabGuest, tinyPlaybook, type LabGuest } from '../helpers/lab-guest.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

const KEYPASS = 'kp-Secr3t-7f1c9a';
const VC_PASSWORD = 'vc-Secr3t-28d4e0';
const ENV = { STORSWEEP_TEST_KEYPASS: KEYPASS };
const ONE_TEST = 'workloads:\n  one:\n    iometer: "4k 100% read 100% random"\n';

let guest: LabGuest;
let playbook: string;

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** The guest's inventory with `edit` applied to its text, written next to it. */
function inventoryVariant(name: string, edit: (text: string) => string): string {
  const file = path.join(guest.dir, name);
  fs.writeFileSync(file, edit(fs.readFileSync(guest.inventory, 'utf8')));
  return file;
}

const lineOf = (file: string, needle: string) => fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

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
  // one fio test of 1 s: a real run writes every kind of file with one as with eight (cdm8's), and
  // the run over SSH uses the passphrase the same way
  playbook = await guest.writePlaybook('pb.yaml', tinyPlaybook({ name: 'secrets', profiles: ['one'] }) + ONE_TEST);
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
    // the test file's mark, the workload, the test file's removal
    expect(dry.stdout.trim().split('\n')).toHaveLength(3);
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
    expect(names.filter((n) => n.startsWith('raw/'))).toHaveLength(1);
    for (const f of files) expectNoSecrets(fs.readFileSync(f), path.relative(runDir, f));
    for (const cmd of [['results', runDir, '--json'], ['report', runDir, '--format', 'md'], ['status', runDir]]) {
      const out = await runCli(cmd, { env: ENV });
      expect(out.code, cmd.join(' ')).toBe(0);
      expectCleanCli(out, cmd.join(' '));
    }
  });
});

describe('secrets stay in secret fields (validate)', () => {
  it('the passphrase pasted into a testFile: exit 2 at its line, the value never printed, nothing run', async () => {
    const inv = inventoryVariant('inv-pasted.yaml', (t) => t.replace('  lab-guest:\n    provider: ssh\n', `  lab-guest:\n    provider: ssh\n    testFile: ${guest.workdir}/${KEYPASS}.dat\n`));
    const line = lineOf(inv, 'testFile:');
    for (const cmd of [['validate', playbook, '-i', inv], ['plan', playbook, '-i', inv, '--json'], ['run', playbook, '-i', inv, '--out', path.join(guest.dir, 'pasted-runs')]]) {
      const r = await runCli(cmd, { env: ENV });
      expect(r.code, cmd[0]).toBe(2);
      expect(r.stderr).toBe(
        `${inv}:${line}:15: targets.lab-guest.testFile: contains the value of the secret sshHosts.guest.passphrase (\${env:STORSWEEP_TEST_KEYPASS}); a secret may appear only in a secret field (password, passphrase), never in a name, path or URL, which plans, ledgers and reports keep as written\n`,
      );
      expectCleanCli(r, cmd[0]!);
    }
    expect(fs.existsSync(path.join(guest.dir, 'pasted-runs'))).toBe(false);
  });

  it('pasted into a field that is also invalid: the schema error does not echo it', async () => {
    const inv = inventoryVariant('inv-pasted-invalid.yaml', (t) => t.replace('  lab-guest:\n    provider: ssh\n', `  lab-guest:\n    provider: ssh\n    ioengine: "${KEYPASS}"\n`));
    const r = await runCli(['validate', playbook, '-i', inv], { env: ENV });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${inv}:${lineOf(inv, 'ioengine:')}:15: targets.lab-guest.ioengine: expected one of libaio,`);
    expect(r.stderr).toContain('got "***"');
    expectCleanCli(r, 'validate');
  });

  it('a password inside a vCenter url: exit 2 at its line with the hint, the URL not echoed', async () => {
    const inv = inventoryVariant('inv-url.yaml', (t) => t.replace('url: https://vc.invalid/sdk', 'url: https://administrator:Plain-Pass-123@vc.invalid/sdk'));
    const r = await runCli(['validate', playbook, '-i', inv], { env: ENV });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${inv}:${lineOf(inv, 'url:')}:10: vcenters.unused-vc.url: a password inside a URL or host (user:password@) is refused: it would be kept and printed with the URL; give username: and password: \${env:NAME} (or \${file:path}) instead\n`,
    );
    expect(r.stderr).not.toContain('Plain-Pass-123');
  });

  it('a secret shorter than 7 characters is refused where it is referenced, without its length', async () => {
    const r = await runCli(['validate', playbook, '-i', guest.inventory], { env: { STORSWEEP_TEST_KEYPASS: 'abc12' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/:\d+:\d+: sshHosts\.guest\.passphrase: secret \$\{env:STORSWEEP_TEST_KEYPASS\}: the value is shorter than 7 characters; storsweep refuses short secrets/);
    expect(r.stderr).not.toMatch(/abc12|\b5\b/);
  });
});

describe('raw tool output is data, never redacted', () => {
  it('the raw fio JSON is byte-identical to what fio printed, although a loaded secret is a word fio prints', async () => {
    // "percentile" is in every fio JSON (clat_ns.percentile); the old redactor replaced it in raw files
    const word = 'percentile';
    const capture = path.join(guest.dir, 'fio-stdout');
    const bin = path.join(guest.dir, 'bin');
    fs.mkdirSync(capture);
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'fio'), `#!/bin/sh\nout=$(mktemp '${capture}/out.XXXXXX')\n/usr/bin/fio "$@" > "$out"\nrc=$?\ncat "$out"\nexit $rc\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(guest.dir, 'word-password'), word + '\n');
    const inv = inventoryVariant('inv-word.yaml', (t) =>
      t.replace('password: ${file:vc-password}', 'password: ${file:word-password}').replace('  lab-guest:\n    provider: ssh\n', `  lab-guest:\n    provider: ssh\n    fioPath: ${path.join(bin, 'fio')}\n`),
    );
    const pb = await guest.writePlaybook('pb-one-test.yaml', tinyPlaybook({ name: 'word', profiles: ['one'] }) + ONE_TEST);
    const r = await runCli(['run', pb, '-i', inv, '--out', path.join(guest.dir, 'word-runs'), '--json', '--no-report'], { env: ENV });
    expect(r.stderr).not.toMatch(/FAILED/);
    expect(r.code).toBe(0);
    const runDir = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { runDir: string }).runDir;
    const raw = filesUnder(path.join(runDir, 'raw')).map((f) => fs.readFileSync(f));
    const printed = fs.readdirSync(capture).map((f) => fs.readFileSync(path.join(capture, f)));
    expect(raw.length).toBeGreaterThan(0);
    for (const b of raw) expect(b.includes(`"${word}"`), 'raw fio JSON keeps the word').toBe(true);
    // every measured pass's raw file is exactly one of fio's outputs
    const printedSet = new Set(printed.map((b) => b.toString('base64')));
    for (const b of raw) expect(printedSet.has(b.toString('base64'))).toBe(true);
  });
});

describe('on the lab (vCenter simulator, Hyper-V stand-in)', { timeout: 300_000 }, () => {
  let root: string;
  let lab: LabState;
  let vcPassword: string;
  let guestPassword: string;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-seclab-'));
    lab = await labUp(root, { vcsim: true, listLuns: (info) => listVcsimLuns(info) });
    vcPassword = fs.readFileSync(labPaths(root).vcsimPassword, 'utf8').trim();
    guestPassword = fs.readFileSync(labPaths(root).guestPassword, 'utf8').trim();
  }, 180_000);

  afterAll(async () => {
    if (lab?.vcsim) await stopVcsimPid(lab.vcsim.pid);
    if (lab) await stopPid(lab.ssh.pid);
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('the simulator password is on no command line (/proc/*/cmdline) and in no file of .lab but its own', () => {
    expect(vcPassword.length).toBeGreaterThanOrEqual(8);
    const lab$ = lab.vcsim!;
    const labPids = [lab$.pid, lab.ssh.pid, ...descendantPids(lab.ssh.pid)];
    // positive control: the lab's processes are there and their command lines are readable
    expect(fs.readFileSync(`/proc/${lab$.pid}/cmdline`, 'utf8')).toContain('vcsim-harness');
    const withPassword: string[] = [];
    for (const pid of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      let cmdline: Buffer;
      try {
        cmdline = fs.readFileSync(`/proc/${pid}/cmdline`);
      } catch {
        continue; // gone meanwhile
      }
      if (cmdline.includes(vcPassword)) withPassword.push(`${pid}${labPids.includes(Number(pid)) ? ' (lab)' : ''}: ${cmdline.toString().replace(/\0/g, ' ')}`);
    }
    expect(withPassword).toEqual([]);
    const p = labPaths(root);
    expect(fs.readFileSync(p.vcsimLog, 'utf8')).toContain(lab$.url);
    const leaking = filesUnder(p.dir)
      .filter((f) => f !== p.vcsimPassword && !f.startsWith(p.vcsimData))
      .filter((f) => fs.readFileSync(f).includes(vcPassword));
    expect(leaking).toEqual([]);
  });

  it('a vSphere run and a Hyper-V run: neither password is in any file of the run directories, WAL included, while they run', async () => {
    const secrets = [vcPassword, guestPassword].map((s) => [Buffer.from(s), Buffer.from(s, 'utf16le')]).flat();
    const timing = quickSettings({ fileSize: '16m', direct: false });
    const workload = ['  workload:', '    profile: [quick]', 'workloads:', '  quick:', '    iometer: "4k 100% read 100% random"'];
    const playbooks = {
      vsphere: ['name: seclab-vsphere', 'target: lab-vcenter', 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin]', '    sizeGb: [1]', ...workload, ...timing],
      hyperv: ['name: seclab-hyperv', 'target: lab-hyperv', 'matrix:', '  volume:', '    sizeGb: [100]', '  disk:', '    format: [vhdx-fixed]', '    sizeGb: [8]', ...workload, ...timing],
    };
    const runsDir = path.join(root, 'runs');
    fs.mkdirSync(runsDir);
    const seen = new Set<string>();
    const leaks = new Set<string>();
    const scan = () => {
      if (!fs.existsSync(runsDir)) return;
      for (const f of filesUnder(runsDir)) {
        let b: Buffer;
        try {
          b = fs.readFileSync(f);
        } catch {
          continue; // a temp file renamed meanwhile
        }
        seen.add(path.basename(f));
        if (secrets.some((s) => b.includes(s))) leaks.add(path.relative(runsDir, f));
      }
    };
    const timer = setInterval(scan, 25);
    const results: CliResult[] = [];
    try {
      for (const [name, lines] of Object.entries(playbooks)) {
        const pb = path.join(root, `${name}.yaml`);
        fs.writeFileSync(pb, lines.join('\n') + '\n');
        results.push(await runCli(['run', pb, '-i', labPaths(root).inventory, '--out', runsDir, '--json'], { cwd: root }));
      }
    } finally {
      clearInterval(timer);
    }
    scan();
    for (const r of results) {
      expect(r.stderr).not.toMatch(/FAILED/);
      expect(r.code).toBe(0);
      for (const s of secrets) expect(Buffer.from(r.stdout + r.stderr).includes(s)).toBe(false);
    }
    // positive controls: the scan saw the live WAL and every kind of file, with raw output of both tools
    for (const name of ['run.sqlite', 'run.sqlite-wal', 'plan.json', 'log.jsonl', 'results.jsonl', 'report.md', 'report.html']) expect([...seen]).toContain(name);
    expect([...seen].some((n) => n.endsWith('.xml'))).toBe(true);
    expect([...seen].some((n) => /pass\d+\.json$/.test(n))).toBe(true);
    expect([...leaks]).toEqual([]);
  });
});


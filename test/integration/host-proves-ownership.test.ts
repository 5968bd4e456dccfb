// Ownership is proven by the host, not by a file (issue 26, item 1). A run directory may come from
// anywhere: a ledger row edited to name another allowed LUN — one holding the user's VMFS, made by
// the user at the host's shell or through the API, not by storsweep — must not make `cleanup`
// destroy it. The host shows what storsweep made by the mark it put there (the VMFS label, the
// datastore's name, both carrying the run's id); a row only says where to look. `cleanup
// --dry-run` reads the host the same way and names the same device and the same refusal.
// Asserted on the host afterwards: the stand-ins' state and call log (ESXi shell), pyVmomi and the
// harness's call log (vSphere). A genuine leftover (run --keep) is still removed.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { BLANK_DEV, ESXI_HARNESS_DIR, RDM_DEV, readCommands, readEsxiState, releaseEsxiGuestDisks } from '../../src/lab/harness/esxi/state.ts';
import { VMFS_GPT_GUID } from '../../src/providers/esxi-shell/partedutil.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { runCli } from '../helpers/cli.ts';
import { ledgerRows, NOTHING_LEFT, runDirOf, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

const exec = promisify(execFile);
const devfs = (d: string) => `/vmfs/devices/disks/${d}`;
const line = (c: { tool: string; argv: string[] }) => [c.tool, ...c.argv].join(' ');
const DESTRUCTIVE = /partedUtil (delete|mklabel|setptbl)|vmkfstools -C|filesystem unmount/;

interface Row {
  name: string;
  object_id: string | null;
  data: Record<string, unknown>;
  state: string;
}

/** Edits the ledger row of `kind` in the run's database, as anyone with the run directory can. */
function editRow(runDir: string, kind: string, edit: (row: Row) => Row): Row {
  const db = new Database(path.join(runDir, 'run.sqlite'));
  try {
    const raw = db.prepare('SELECT seq, name, object_id, data, state FROM ledger WHERE kind = ?').get(kind) as { seq: number; name: string; object_id: string | null; data: string; state: string };
    const row = edit({ name: raw.name, object_id: raw.object_id, data: JSON.parse(raw.data) as Record<string, unknown>, state: raw.state });
    db.prepare('UPDATE ledger SET name = ?, object_id = ?, data = ?, state = ?, error = NULL WHERE seq = ?').run(row.name, row.object_id, JSON.stringify(row.data), row.state, raw.seq);
    return row;
  } finally {
    db.close();
  }
}

/** The reason `cleanup` printed for one object it could not remove. */
function reasonFor(stdout: string, what: string): string {
  const prefix = `could not remove ${what}: `;
  const l = stdout.split('\n').find((x) => x.startsWith(prefix));
  if (!l) throw new Error(`cleanup printed no refusal for ${what}:\n${stdout}`);
  return l.slice(prefix.length);
}

describe('ESXi shell: a partition goes only when the host shows the run\'s VMFS label on it', () => {
  let root: string;
  let lab: LabState;
  let inventory: string;
  let playbook: string;

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-owned-'));
    lab = await labUp(root, { vcsim: false });
    inventory = labPaths(root).inventory;
    playbook = path.join(root, 'pb.yaml');
    const pb = ['name: owned', 'target: lab-esxi', 'matrix:', '  datastore:', '    kind: [vmfs6]', '  disk:', '    format: [thin]', '    sizeGb: [1]', '  workload:', '    profile: [quick]', 'workloads:', '  quick:', '    iometer: "4k 100% read 100% random"', ...quickSettings({ direct: false }), ''];
    await fs.writeFile(playbook, pb.join('\n'));
  }, 180_000);

  afterAll(async () => {
    if (lab) await releaseEsxiGuestDisks(lab.standinState);
    if (lab) await stopPid(lab.ssh.pid);
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  const run = async (...extra: string[]) => {
    const r = await runCli(['run', playbook, '-i', inventory, '--confirm-destroy', BLANK_DEV, '--no-report', '--json', ...extra], { cwd: root, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    return path.resolve(root, runDirOf(r));
  };
  const cli = (...args: string[]) => runCli(args, { cwd: root });
  /** what the user types at the host's shell (the stand-ins, as ESXi's own tools) */
  const atHostShell = async (argv: string[]) => {
    await exec(path.join(ESXI_HARNESS_DIR, argv[0]!), argv.slice(1), { env: { ...process.env, STORSWEEP_STANDIN_STATE: lab.standinState } });
  };

  it("a cleaned-up run whose partition row is edited to name the user's unmounted VMFS on another allowed LUN: cleanup refuses, the dry run names the same device and refusal, the LUN is untouched", async () => {
    const runDir = await run();
    expect(ledgerRows(runDir).map((r) => [r.kind, r.state])).toEqual([
      ['vmfs-partition', 'absent'], // its datastore's removal deleted it (the host showed the label on it)
      ['datastore', 'removed'],
      ['disk', 'removed'],
      ['disk-attachment', 'removed'],
    ]);
    // the user makes a VMFS on the other allowed LUN and unmounts it (an unmounted volume is in no extent list)
    await atHostShell(['partedUtil', 'mklabel', devfs(RDM_DEV), 'gpt']);
    await atHostShell(['partedUtil', 'setptbl', devfs(RDM_DEV), 'gpt', `1 2048 20971486 ${VMFS_GPT_GUID} 0`]);
    await atHostShell(['vmkfstools', '-C', 'vmfs6', '-b', '1m', '-S', 'users-vmfs', `${devfs(RDM_DEV)}:1`]);
    await atHostShell(['esxcli', 'storage', 'filesystem', 'unmount', '-l', 'users-vmfs']);
    const before = await readEsxiState(lab.standinState);
    expect(Object.values(before.volumes).find((v) => v.label === 'users-vmfs')).toMatchObject({ device: RDM_DEV, partition: 1, mounted: false });
    // the edit: the partition row names that LUN, with its layout, in its id and its data, and is open again
    const row = editRow(runDir, 'vmfs-partition', (r) => ({ ...r, object_id: `${RDM_DEV}:1`, data: { ...r.data, device: RDM_DEV, endSector: 20971486 }, state: 'remove-failed' }));
    const label = row.name.replace(/-part$/, '-ds');
    const sentBefore = (await readCommands(lab.standinState)).length;

    const dry = await cli('cleanup', runDir, '--dry-run');
    const status = await cli('status', runDir);
    const cleanup = await cli('cleanup', runDir);
    // the host: it was looked at where the row said, nothing destructive was sent, the user's LUN and VMFS are as they were
    const sent = (await readCommands(lab.standinState)).slice(sentBefore).map(line);
    expect(sent).toContain(`partedUtil getptbl ${devfs(RDM_DEV)}`);
    expect(sent.filter((c) => DESTRUCTIVE.test(c))).toEqual([]);
    const after = await readEsxiState(lab.standinState);
    expect(after.devices[RDM_DEV]).toEqual(before.devices[RDM_DEV]);
    expect(after.volumes).toEqual(before.volumes);
    expect(cleanup.code, cleanup.stderr).toBe(1);
    const reason = reasonFor(cleanup.stdout, `vmfs-partition ${row.name}`);
    expect(reason).toContain(`refusing to delete partition 1 on ${RDM_DEV}: it carries no mark of this run: no VMFS volume ${label} is on it`);
    expect(reason).toContain(`--confirm-destroy ${RDM_DEV}`);
    // the preview: the same device, the same refusal, word for word; status shows that device too
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would not remove vmfs-partition ${row.name}: ${reason}\n`);
    expect(status.stdout).toContain(`vmfs-partition ${row.name} (${RDM_DEV}:1)`);
    // confirming that very device in the command is what would let it go: the preview says so, and sends nothing
    const confirmed = await cli('cleanup', runDir, '--dry-run', '--confirm-destroy', RDM_DEV);
    expect(confirmed.stdout).toContain(`would remove vmfs-partition ${row.name}: ${RDM_DEV}:1 (no mark of this run on it; confirmed with --confirm-destroy ${RDM_DEV})\n`);
    expect((await readCommands(lab.standinState)).slice(sentBefore).map(line).filter((c) => DESTRUCTIVE.test(c))).toEqual([]);
    expect((await readEsxiState(lab.standinState)).devices[RDM_DEV]).toEqual(before.devices[RDM_DEV]);
  });

  it('a genuine leftover (run --keep) is removed: the host shows the run\'s label on its partition, and the dry run names that partition first', async () => {
    const runDir = await run('--keep');
    const ds = ledgerRows(runDir).find((r) => r.kind === 'datastore')!;
    expect(ds.state).toBe('kept');
    const before = await readEsxiState(lab.standinState);
    const sentBefore = (await readCommands(lab.standinState)).length;

    const dry = await cli('cleanup', runDir, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would remove datastore ${ds.name}: ${BLANK_DEV}:1 (VMFS volume ${ds.name}: unmounted, then the partition deleted)\n`);
    expect((await readCommands(lab.standinState)).slice(sentBefore).map(line).filter((c) => DESTRUCTIVE.test(c))).toEqual([]);

    const cleanup = await cli('cleanup', runDir);
    expect(cleanup.code, cleanup.stdout + cleanup.stderr).toBe(0);
    expect(cleanup.stdout).toContain(`removed: datastore ${ds.name}\n`);
    const sent = (await readCommands(lab.standinState)).slice(sentBefore).map(line);
    expect(sent.filter((c) => DESTRUCTIVE.test(c))).toEqual([`esxcli storage filesystem unmount -l ${ds.name}`, `partedUtil delete ${devfs(BLANK_DEV)} 1`]);
    const after = await readEsxiState(lab.standinState);
    expect(after.devices[BLANK_DEV]!.partitions).toEqual([]);
    expect(Object.values(after.volumes).map((v) => v.label)).not.toContain(ds.name);
    // anything else on the host as it was (the other LUN, datastore1)
    expect(after.devices[RDM_DEV]).toEqual(before.devices[RDM_DEV]);
    expect(Object.values(after.volumes).filter((v) => v.label !== ds.name)).toEqual(Object.values(before.volumes).filter((v) => v.label !== ds.name));
    expect((await cli('status', runDir, '--json')).stdout).toContain('"leftovers":[]');
  });
});

describe("vSphere: a datastore goes only when the host shows it under the run's name", () => {
  let lab: VsphereLab;
  let playbook: string;

  beforeAll(async () => {
    lab = await startVsphereLab();
    playbook = await lab.writePlaybook('pb.yaml', sweepPlaybook({ blockSizesMb: [1], formats: ['thin'], repeat: 1 }));
  }, 180_000);
  afterAll(() => lab?.stop());

  const run = async (runs: string, ...extra: string[]) => {
    const r = await runCli(['run', playbook, ...lab.runArgs(await lab.newRunsDir(runs)), ...extra], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    return runDirOf(r);
  };
  const removeCalls = async () => (await lab.sim.control.calls()).RemoveDatastore ?? 0;

  it("a cleaned-up run whose datastore row is edited to name the user's VMFS datastore on another LUN: cleanup refuses, the dry run says the same, the datastore stays", async () => {
    const runDir = await run('edited');
    expect(ledgerRows(runDir).find((r) => r.kind === 'datastore')?.state).toBe('removed');
    // the user's own VMFS datastore, made through the API
    const made = await probeOne(lab.sim, { op: 'create-vmfs', host: 'DC0_H0', disk: lab.luns[1], major: 5, name: 'users-vmfs' });
    expect(made, JSON.stringify(made)).toMatchObject({ ok: true });
    const row = editRow(runDir, 'datastore', (r) => ({ ...r, name: 'users-vmfs', object_id: String(made.datastore), data: { ...r.data, datastore: 'users-vmfs', device: lab.luns[1] }, state: 'remove-failed' }));
    const removesBefore = await removeCalls();

    const dry = await runCli(['cleanup', runDir, '--dry-run']);
    const cleanup = await runCli(['cleanup', runDir]);
    // read back by pyVmomi: the user's datastore is there, on its LUN; nothing was removed
    expect(await probeOne(lab.sim, { op: 'datastore', name: 'users-vmfs' })).toMatchObject({ ok: true, extent: [{ diskName: lab.luns[1], partition: 1 }] });
    expect(await removeCalls()).toBe(removesBefore);
    expect(cleanup.code, cleanup.stderr).toBe(1);
    const reason = reasonFor(cleanup.stdout, `datastore ${row.name}`);
    expect(reason).toMatch(/^left alone: datastore users-vmfs is not a name run r\w+ gives \(ss-r\w+-p[0-9a-f]{12}-…\)/);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would not remove datastore users-vmfs: ${reason}\n`);
  });

  it('a genuine leftover (run --keep) is removed: the host shows our name on it; the dry run names its LUN', async () => {
    const runDir = await run('kept', '--keep');
    const ds = ledgerRows(runDir).find((r) => r.kind === 'datastore')!;
    expect(ds.state).toBe('kept');
    const dry = await runCli(['cleanup', runDir, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`would remove datastore ${ds.name}: datastore ${ds.name} \\([^)]+\\) on ${lab.vmfsDevice}:1\\n`));
    const cleanup = await runCli(['cleanup', runDir]);
    expect(cleanup.code, cleanup.stdout + cleanup.stderr).toBe(0);
    expect(cleanup.stdout).toContain(`removed: datastore ${ds.name}\n`);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});

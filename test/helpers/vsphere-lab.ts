// A throwaway vSphere lab for sweep tests: the vcsim harness (a real SOAP server with fault
// injection), an inventory whose target `lab-vcenter` formats one harness LUN and runs fio on this
// machine, and an independent pyvmomi listing of everything named like ours (`ss-…`).
//
//   const lab = await startVsphereLab();          // in beforeAll
//   await runCli(['run', await lab.writePlaybook('p.yaml', sweepPlaybook()), ...lab.runArgs(runsDir)]);
//   expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
//   await lab.stop();                              // in afterAll
// or, for a lab the whole file (or one describe) shares: `const lab = useVsphereLab({ version: '8.0' })`.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll } from 'vitest';
import { startVcsim, type VcsimHandle, type VcsimOptions } from '../../src/lab/vcsim.ts';
import { VsphereClient } from '../../src/providers/vsphere/client.ts';
import type { VsphereTargetConfig } from '../../src/providers/vsphere/config.ts';
import { listVcsimLuns, vcenterYaml, vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';
import { quickSettings } from './quick-settings.ts';
import { runCli, type CliOptions, type CliResult } from './cli.ts';

const LEFTOVERS = fileURLToPath(new URL('../harness/pyvmomi/leftovers.py', import.meta.url));

export interface Leftovers {
  datastores: string[];
  disks: Array<{ vm: string; fileName: string }>;
  files: string[];
}
export const NOTHING_LEFT: Leftovers = { datastores: [], disks: [], files: [] };

export interface VsphereLab {
  sim: VcsimHandle;
  dir: string;
  /** the harness LUNs (sorted); the inventory formats luns[0] */
  luns: string[];
  vmfsDevice: string;
  /** luns[1], the inventory's rdmDevice (only with `rdm`) */
  rdmDevice?: string;
  /** the directory the inventory's NFS export names (only with `nfs`) */
  nfsDir?: string;
  password: string;
  inventory: string;
  workdir: string;
  writePlaybook(name: string, yaml: string): Promise<string>;
  /** the guest's by-id directory (wwn-0x… links to the loop devices the harness attached) */
  byIdDir: string;
  /** a fresh empty directory for `run --out` */
  newRunsDir(name: string): Promise<string>;
  /** `-i <inventory> --out <runsDir> --confirm-destroy <lun> --no-report --json` */
  runArgs(runsDir: string): string[];
  leftovers(prefix?: string): Promise<Leftovers>;
  connect(): Promise<VsphereClient>;
  stop(): Promise<void>;
}

export interface VsphereLabOptions {
  password?: string;
  /** the release the simulator acts as and the inventory states; default 5.5, as sweepPlaybook() is a VMFS3 sweep */
  version?: '5.5' | '6.7' | '7.0' | '8.0';
  /** run fio over SSH on this guest (from startLabGuest) instead of on this machine */
  sshGuest?: { sshd: { port: number }; user: string; keyPath: string; knownHostsFile: string; workdir: string };
  /** the simulator's size (startVcsim's `model`), e.g. `{ standaloneHosts: 100 }` */
  model?: VcsimOptions['model'];
  /** false: the inventory states no release, so a test may switch the simulator's (sim.control.version) */
  inventoryVersion?: boolean;
  /** the target maps luns[1] as its RDM device (rdmDevice, also allowed) */
  rdm?: boolean;
  /** the target has an NFS export (nfs.remotePath: <dir>/nfs-export, made empty) */
  nfs?: boolean;
}

export async function startVsphereLab(opts: VsphereLabOptions = {}): Promise<VsphereLab> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-vlab-'));
  const password = opts.password ?? `vc-Secret-${Math.random().toString(36).slice(2, 12)}`;
  const version = opts.version ?? '5.5';
  // the guest (this machine) gets a loop device per attached disk, listed under guestDisks/by-id
  const guestDisks = path.join(dir, 'guest-disks');
  const sim = await startVcsim({ username: 'administrator@vsphere.local', password, version, guestDisks, ...(opts.model ? { model: opts.model } : {}) });
  const connect = () => VsphereClient.connect({ url: sim.url, username: sim.username, password, thumbprint: sim.thumbprint });
  const luns = await listVcsimLuns({ url: sim.url, username: sim.username, password, thumbprint: sim.thumbprint });
  const vmfsDevice = luns[0]!;
  const rdmDevice = opts.rdm ? luns[1]! : undefined;
  const nfsDir = opts.nfs ? path.join(dir, 'nfs-export') : undefined;
  if (nfsDir) await fs.mkdir(nfsDir);
  const workdir = opts.sshGuest?.workdir ?? path.join(dir, 'scratch');
  await fs.mkdir(workdir, { recursive: true });
  const g = opts.sshGuest;
  const sshHosts = g
    ? ['sshHosts:', '  guest:', '    host: 127.0.0.1', `    port: ${g.sshd.port}`, `    user: ${g.user}`, `    privateKeyFile: ${g.keyPath}`, `    knownHostsFile: ${g.knownHostsFile}`]
    : [];
  await fs.writeFile(path.join(dir, 'vc-password'), password + '\n', { mode: 0o600 });
  const inventory = path.join(dir, 'inventory.yaml');
  await fs.writeFile(
    inventory,
    [
      ...sshHosts,
      'vcenters:',
      ...vcenterYaml({ name: 'lab-vc', url: sim.url, username: sim.username, passwordRef: '${file:vc-password}', thumbprint: sim.thumbprint }),
      'targets:',
      ...vsphereTargetYaml({ name: 'lab-vcenter', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', datastore: 'LocalDS_0', vmfsDevice, rdmDevice, nfsDir, version: opts.inventoryVersion === false ? undefined : version, guest: { sshHost: g ? 'guest' : undefined, workdir, byIdDir: path.join(guestDisks, 'by-id') } }),
      '',
    ].join('\n'),
  );
  return {
    sim,
    dir,
    luns,
    vmfsDevice,
    ...(rdmDevice ? { rdmDevice } : {}),
    ...(nfsDir ? { nfsDir } : {}),
    password,
    inventory,
    workdir,
    byIdDir: path.join(guestDisks, 'by-id'),
    writePlaybook: async (name, yaml) => {
      const file = path.join(dir, name);
      await fs.writeFile(file, yaml);
      return file;
    },
    newRunsDir: async (name) => {
      const d = path.join(dir, 'runs', name);
      await fs.mkdir(d, { recursive: true });
      return d;
    },
    runArgs: (runsDir) => ['-i', inventory, '--out', runsDir, '--confirm-destroy', vmfsDevice, '--no-report', '--json'],
    leftovers: (prefix = 'ss-') =>
      new Promise((resolve, reject) => {
        const p = execFile('/usr/bin/python3', [LEFTOVERS], { timeout: 60_000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`leftovers.py failed: ${stderr || err.message}`));
          else {
            const r = JSON.parse(stdout) as Leftovers & { errors?: string[] };
            if (r.errors?.length) reject(new Error(`leftovers.py could not browse: ${r.errors.join('; ')}`));
            else resolve({ datastores: r.datastores, disks: r.disks, files: r.files });
          }
        });
        p.stdin!.end(JSON.stringify({ url: sim.url, username: sim.username, password, certFile: sim.certFile, prefix }));
      }),
    connect,
    stop: async () => {
      await sim.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One lab for the tests of the enclosing file or describe: started in its beforeAll, stopped in its
 * afterAll. The lab's members are read through the returned object once the beforeAll has run.
 */
export function useVsphereLab(opts: VsphereLabOptions = {}): VsphereLab {
  let lab: VsphereLab | undefined;
  beforeAll(async () => {
    lab = await startVsphereLab(opts);
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
  });
  return new Proxy({} as VsphereLab, {
    get(_target, key) {
      if (!lab) throw new Error(`useVsphereLab: lab.${String(key)} read before its beforeAll ran`);
      return Reflect.get(lab, key) as unknown;
    },
  });
}

/**
 * The provider's target for the simulator's first host and VM (DC0_H0_VM0, LocalDS_0), with the
 * first two harness LUNs as the VMFS and RDM devices and the only ones allowed; `over` replaces any.
 */
export function simTarget(sim: VcsimHandle, luns: readonly string[], over: Partial<VsphereTargetConfig> = {}): VsphereTargetConfig {
  return {
    vcenter: { url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint },
    datacenter: 'DC0',
    host: 'DC0_H0',
    vm: 'DC0_H0_VM0',
    datastore: 'LocalDS_0',
    vmfsDevice: luns[0]!,
    rdmDevice: luns[1]!,
    allowedDevices: [luns[0]!, luns[1]!],
    ...over,
  };
}

/**
 * A VMFS sweep with the shortest timing the playbook schema accepts (whole seconds, the unit fio's
 * and diskspd's runtimes share): one 4k random-read test of 1 s per repetition on a 4 MiB file.
 */
export function sweepPlaybook(opts: { name?: string; blockSizesMb?: number[]; formats?: string[]; repeat?: number; runtimeSec?: number; extra?: string[] } = {}): string {
  return [
    `name: ${opts.name ?? 'sweep'}`,
    'target: lab-vcenter',
    'matrix:',
    '  datastore:',
    '    kind: [vmfs3]',
    `    blockSizeMb: [${(opts.blockSizesMb ?? [1, 2, 4, 8]).join(', ')}]`,
    '  disk:',
    `    format: [${(opts.formats ?? ['thin', 'eagerzeroedthick']).join(', ')}]`,
    '    sizeGb: [1]',
    '  workload:',
    '    profile: [quick]',
    'workloads:',
    '  quick:',
    '    iometer: "4k 100% read 100% random"',
    ...quickSettings({ runtimeSec: opts.runtimeSec ?? 1, direct: false, repeat: opts.repeat ?? 2 }),
    ...(opts.extra ?? []),
    '',
  ].join('\n');
}

/** The single run directory under `runsDir` (null before the CLI created it). */
export function runDirIn(runsDir: string): string | null {
  const dirs = existsSync(runsDir) ? readdirSync(runsDir).filter((d) => existsSync(path.join(runsDir, d, 'run.sqlite'))) : [];
  if (dirs.length > 1) throw new Error(`${runsDir} holds ${dirs.length} run directories`);
  return dirs[0] ? path.join(runsDir, dirs[0]) : null;
}

/** Read-only view of a run's database while (or after) a CLI writes it. */
export function readRun<T>(runDir: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(runDir, 'run.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function journalSeq(runDir: string): number {
  return readRun(runDir, (db) => (db.prepare('SELECT coalesce(max(seq), 0) AS n FROM journal').get() as { n: number }).n);
}

export function resultKeys(runDir: string): string[] {
  return readRun(runDir, (db) => (db.prepare('SELECT permutation_id, repetition, test_id FROM results').all() as Array<{ permutation_id: string; repetition: number; test_id: string }>).map((r) => `${r.permutation_id}/${r.repetition}/${r.test_id}`)).sort();
}

export function permutationStatuses(runDir: string): Array<{ permutationId: string; status: string; reason: string | null }> {
  return readRun(runDir, (db) => db.prepare('SELECT permutation_id AS permutationId, status, reason FROM permutations ORDER BY idx').all() as Array<{ permutationId: string; status: string; reason: string | null }>);
}

export function ledgerRows(runDir: string): Array<{ kind: string; name: string; state: string; permutationId: string; error: string | null }> {
  return readRun(runDir, (db) => db.prepare('SELECT kind, name, state, permutation_id AS permutationId, error FROM ledger ORDER BY seq').all() as Array<{ kind: string; name: string; state: string; permutationId: string; error: string | null }>);
}

/**
 * Runs the CLI and, as soon as `when(runDir)` holds (polled every 15 ms over a read-only
 * connection), calls `action(pid, runDir)` once. `fired` says whether it did before the CLI ended.
 * `cli.env`: the CLI's environment (e.g. a fio gate's PATH: test/helpers/fio-gate.ts).
 */
export async function runCliWhen(
  args: string[],
  where: { runsDir?: string; runDir?: string },
  when: (runDir: string) => boolean,
  action: (pid: number, runDir: string) => void | Promise<void>,
  cli: Pick<CliOptions, 'env'> = {},
): Promise<CliResult & { fired: boolean; runDir: string | null }> {
  let pid = 0;
  let done = false;
  let fired = false;
  let runDir = where.runDir ?? null;
  const watcher = (async () => {
    while (!done) {
      await new Promise((r) => setTimeout(r, 15));
      if (!pid) continue;
      let hit = false;
      try {
        runDir ??= where.runsDir ? runDirIn(where.runsDir) : null;
        hit = Boolean(runDir && when(runDir));
      } catch {
        /* database not there yet, or busy: poll again */
      }
      if (hit && !done) {
        fired = true;
        await action(pid, runDir!);
        return;
      }
    }
  })();
  const r = await runCli(args, { ...cli, timeoutMs: 180_000, onSpawn: (p) => (pid = p) });
  done = true;
  await watcher;
  runDir ??= where.runsDir ? runDirIn(where.runsDir) : null;
  return { ...r, fired, runDir };
}

/** Runs the CLI and SIGKILLs it as soon as the run's journal reaches entry #killAtSeq. */
export async function runCliKilledAt(args: string[], where: { runsDir?: string; runDir?: string }, killAtSeq: number): Promise<CliResult & { killed: boolean; runDir: string | null }> {
  const r = await runCliWhen(args, where, (d) => journalSeq(d) >= killAtSeq, (pid) => void process.kill(pid, 'SIGKILL'));
  return { ...r, killed: r.fired && r.code === null };
}

/** Journal entries matching step/event (LIKE patterns). */
export function journalHas(runDir: string, step: string, event: string): number {
  return readRun(runDir, (db) => (db.prepare('SELECT count(*) AS n FROM journal WHERE step LIKE ? AND event LIKE ?').get(step, event) as { n: number }).n);
}

export function runDirOf(r: CliResult): string {
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return (JSON.parse(last) as { runDir: string }).runDir;
}

// Starts the vCenter/ESXi simulator harness (src/lab/harness/vcsim, Go + govmomi 0.24) for tests and
// for `npm run lab -- up`. The harness prints one JSON line when it is ready; its /_harness/ control
// API injects faults, drops connections, expires sessions and counts SOAP calls.
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, openSync, closeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HARNESS_DIR = fileURLToPath(new URL('./harness/vcsim/', import.meta.url));
const BUILD_SCRIPT = path.join(HARNESS_DIR, 'build.sh');
const READY_TIMEOUT_MS = 30_000;

/** The harness could not be built or started; the message says what to install or fix. */
export class VcsimHarnessError extends Error {
  override readonly name = 'VcsimHarnessError';
}

export interface VcsimOptions {
  /** simulate a standalone ESXi host (HostAgent) instead of vCenter */
  esx?: boolean;
  /** the only accepted credentials (default user / pass); the password reaches the harness through
   *  its environment, never its command line or log */
  username?: string;
  password?: string;
  /** sessions idle longer than this are invalidated (NotAuthenticated on the next call) */
  sessionIdleTimeoutSec?: number;
  /** keep running after this process exits; stop it later with stopVcsimPid(pid) */
  detached?: boolean;
  /** stdout+stderr of the harness (required for detached; default: kept in memory) */
  logFile?: string;
  /** where datastore contents live; default a temp dir the harness removes on exit */
  dataDir?: string;
  /** where cert.pem/key.pem are written; default `<dataDir>/tls` */
  certDir?: string;
  /** default 127.0.0.1:0 */
  listen?: string;
  /** the vSphere release to simulate (test/harness/vcsim/version.go): 5.5, 6.7, 7.0 or 8.0 (default) */
  version?: string;
  /**
   * Give this machine (the lab's guest) a loop device per disk attached to a VM, linked as
   * `<guestDisks>/by-id/wwn-0x<id>` (the guest's byIdDir; harness/vcsim/guestdisks.go). Needs root
   * and loop devices: the harness refuses to start without them, saying so.
   */
  guestDisks?: string;
  /**
   * Lab guests for VMware Tools guest operations (harness/vcsim/guestops.go): StartProgramInGuest
   * and friends run for each listed VM in a guest of its own (Linux: as the local user `username`,
   * created when missing — needs root; Windows: the Windows stand-ins). The file carrying the
   * passwords is written 0600, read by the harness at start and deleted once it is ready.
   */
  guestOps?: { vms: GuestOpsVm[]; root?: string };
  /**
   * The inventory's size, with vcsim's own flags (vCenter only): `standaloneHosts` (-standalone-host,
   * DC0_H<i>, default 1), `clusters` (-cluster, default 1), `hostsPerCluster` (-host, default 3),
   * `vms` (-vm: per standalone host and resource pool, DC0_H<i>_VM<j>, default 2).
   */
  model?: { standaloneHosts?: number; clusters?: number; hostsPerCluster?: number; vms?: number };
}

export interface GuestOpsVm {
  /** the VM's inventory name, e.g. DC0_H0_VM0 */
  vm: string;
  os: 'linux' | 'windows';
  /** config.guestId to report (default ubuntu64Guest / windows9Server64Guest) */
  guestId?: string;
  username: string;
  password: string;
  /** Linux: the guest user gets passwordless sudo (/etc/sudoers.d/<username>, kept), for guest.sudo */
  sudo?: boolean;
  /** Windows: where the guest has diskspd.exe (default C:\Tools\DiskSpd\diskspd.exe) */
  diskspdPath?: string;
  /** Linux: the path at which the guest's programs see its own scratch directory (several guests, one path, each its own files: guestops.go) */
  workdir?: string;
}

/** One guest operation the harness received (GET /_harness/guest-ops). */
export interface GuestOpCall {
  method: string;
  vm: string;
  time: string;
  /** fault type name, or "HTTP nnn" for a refused transfer */
  fault?: string;
}

/** A lab guest's process (GET /_harness/guest-ops, /_harness/guest-processes). */
export interface GuestProcess {
  vm: string;
  pid: number;
  name: string;
  owner: string;
  cmdLine: string;
  startTime: string;
  endTime?: string;
  exitCode?: number;
  running: boolean;
  /** spawned by a started program (found in /proc), not started by StartProgramInGuest */
  child?: boolean;
}

/** The ready line the harness prints, one JSON object (plus the password, which it never prints). */
export interface VcsimInfo {
  url: string;
  /** SHA-256 of the leaf certificate, upper-case colon-separated hex */
  thumbprint: string;
  /** PEM of the self-signed certificate (it is its own CA) */
  certFile: string;
  username: string;
  /** the password given in VcsimOptions (the harness's default "pass" when none was) */
  password: string;
  pid: number;
  apiType: 'VirtualCenter' | 'HostAgent';
  dataDir: string;
  /** AboutInfo.version the harness reports, e.g. "8.0.0" */
  version: string;
}

export interface FaultRule {
  /** SOAP method name, e.g. CreateVmfsDatastore or ReconfigVM_Task */
  method: string;
  /** vim25 fault type name, e.g. HostConfigFault, NotAuthenticated, InvalidArgument */
  fault: string;
  /** how many of the next calls fail (default 1) */
  count?: number;
  /** faultstring (or the task error's localizedMessage) */
  message?: string;
  /** for *_Task methods: answer with a task that ends in error instead of a SOAP fault */
  asTask?: boolean;
  /** fault fields, e.g. { invalidProperty: 'spec.vmfs.blockSize' } */
  fields?: Record<string, unknown>;
}

export interface DropRule {
  method: string;
  count?: number;
  /** 'before': the call never runs; 'after': it runs, then the connection closes (ambiguous) */
  when?: 'before' | 'after';
}

/** A permission of the harness's restricted user on one entity, found by type and name (e.g. Datastore LocalDS_0). */
export interface RestrictedPermission {
  entity: { type: string; name: string };
  privileges: string[];
  /** whether it applies to the entity's children too (default true, as vCenter's dialog) */
  propagate?: boolean;
}

export interface VcsimControl {
  fault(rule: FaultRule): Promise<void>;
  /** invalidates every session; returns how many there were */
  expireSessions(): Promise<number>;
  drop(rule: DropRule): Promise<void>;
  /** every call of `method` waits `ms` first (0 clears) */
  delay(method: string, ms: number): Promise<void>;
  /** tasks of `method` stay `running` for `ms` (progress 0 → 50 → 100) before they finish */
  slowTask(method: string, ms: number): Promise<void>;
  /**
   * A barrier instead of a duration (test facility): calls of `method` arriving from now on wait
   * (logged with `held`) until release(method); with `task`, they are answered but their task
   * reports `running` until then.
   */
  hold(method: string, o?: { task?: boolean }): Promise<void>;
  /** lets every held call and task of `method` (every method when omitted) go on and ends the hold */
  release(method?: string): Promise<{ calls: number; tasks: number }>;
  /** SOAP calls received per method since start or the last reset */
  calls(): Promise<Record<string, number>>;
  /**
   * a second login whose role on the root folder holds only `privileges`, and per object the roles
   * of `permissions` (set through the simulator's AuthorizationManager; the nearest permission up the
   * inventory wins, an ancestor's only when it propagates — harness auth.go): HasPrivilegeOnEntity
   * answers from them, a call needing a privilege the user lacks on its object gets NoPermission
   */
  restrictedUser(u: { username: string; password: string; privileges: string[]; permissions?: RestrictedPermission[] }): Promise<void>;
  /** every SOAP call since start or the last reset, in arrival order (at most 200,000) */
  log(): Promise<HarnessCall[]>;
  /** clears rules, call counts and the call log (not sessions, not inventory) */
  reset(): Promise<void>;
  /** simulate another vSphere release from now on (5.5, 6.7, 7.0, 8.0); returns AboutInfo.version */
  version(version: string): Promise<string>;
  /** guest operations received (method, VM, time, fault) and the lab guests' processes (running or
   *  ended < 5 min ago); needs the harness started with guestOps */
  guestOps(): Promise<{ calls: GuestOpCall[]; processes: GuestProcess[]; accounts: GuestAccount[] }>;
  /** the lab guests' processes that are running now (a started program and what it spawned) */
  guestProcesses(): Promise<GuestProcess[]>;
  /** VMware Tools in that VM's guest starts or stops (stopped: GuestOperationsUnavailable) */
  guestTools(vm: string, running: boolean): Promise<void>;
  /**
   * How the guest names the VMDKs attached from now on: `uuid` (wwn-0x<backing uuid>, the default
   * and after reset) or `other` (another VMware-prefixed id: a host where that mapping does not hold)
   */
  guestIdentity(mode: 'uuid' | 'other'): Promise<void>;
}

/** The local account a harness made for one Linux lab guest (one per harness and VM; removed when the harness exits). */
export interface GuestAccount {
  vm: string;
  /** the guest login (the credentials, USER, the process owner Tools reports) */
  username: string;
  /** the local account its programs run as (`id -un` in the guest) */
  account: string;
  uid: number;
}

/** One SOAP call as the harness saw it; times in epoch milliseconds (fractional). */
export interface HarnessCall {
  method: string;
  /** `_this` as `type:value`, e.g. `VirtualMachine:vm-51` */
  this: string;
  start: number;
  /** when its answer was written */
  end: number;
  /** a task slowed by slowTask(): when it finished */
  taskEnd?: number;
  /** which client session made the call: a short hash of its cookie (never the cookie) */
  session?: string;
  /** ReconfigVM_Task: each disk change as `add|remove|edit <file>` */
  devices?: string[];
  /** held by hold(): the call waited (end 0 while it does), or its task ran until released (taskEnd) */
  held?: boolean;
  /** Create{Vmfs,Nas}Datastore, RemoveDatastore: the datastore's name */
  datastore?: string;
  /** CloneVM_Task: the clone's name; Destroy_Task of a VM: its name; {Create,Remove}Snapshot_Task: the VM's; QueryPerf, QueryAvailablePerfMetric, QueryPerfProviderSummary: the name of the VM whose counters were asked for */
  vm?: string;
  /** CreateSnapshot_Task, RemoveSnapshot_Task: the snapshot's name */
  snapshot?: string;
}

export interface VcsimHandle extends VcsimInfo {
  control: VcsimControl;
  stop(): Promise<void>;
}

let building: Promise<string> | undefined;

/**
 * Where build.sh writes the binary: beside its sources (the checkout), or — an installed package
 * whose files the user may not write (`npm install -g` as root) — the user's cache, one binary per
 * installed harness.
 */
function harnessOutput(): string[] {
  try {
    accessSync(HARNESS_DIR, fsConstants.W_OK);
    return [];
  } catch {
    const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
    return [path.join(cache, 'storsweep', `vcsim-harness-${createHash('sha256').update(HARNESS_DIR).digest('hex').slice(0, 12)}`)];
  }
}

/** Builds the harness with Debian's Go toolchain (cached; a no-op when up to date). */
export function buildVcsimHarness(): Promise<string> {
  building ??= new Promise<string>((resolve, reject) => {
    execFile('bash', [BUILD_SCRIPT, ...harnessOutput()], { maxBuffer: 8 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (!err) {
        const bin = stdout.trim().split('\n').pop() ?? '';
        if (existsSync(bin)) return resolve(bin);
        return reject(new VcsimHarnessError(`vcsim harness build printed no binary path: ${stdout}${stderr}`));
      }
      const code: unknown = (err as { code?: unknown }).code;
      let hint = '';
      if (code === 3) hint = ' (install the Debian package golang-go)';
      else if (code === 4) hint = ' (install the Debian package golang-github-vmware-govmomi-dev)';
      else if (code === 'ENOENT') hint = ' (bash not found)';
      reject(
        new VcsimHarnessError(`building the vcsim harness failed${hint}: ${BUILD_SCRIPT}\n${stderr.trim()}`, {
          cause: err,
        }),
      );
    });
  });
  building.catch(() => {
    building = undefined;
  });
  return building;
}

function harnessArgs(opts: HarnessArgsOptions): string[] {
  const args = ['-listen', opts.listen ?? '127.0.0.1:0'];
  if (opts.esx) args.push('-esx');
  if (opts.username !== undefined) args.push('-username', opts.username);
  if (opts.sessionIdleTimeoutSec !== undefined) args.push('-session-idle-timeout', `${opts.sessionIdleTimeoutSec}s`);
  if (opts.dataDir) args.push('-datadir', opts.dataDir);
  if (opts.certDir) args.push('-certdir', opts.certDir);
  if (opts.version) args.push('-version', opts.version);
  if (opts.guestDisks) args.push('-guest-disks', opts.guestDisks);
  if (opts.guestOpsFile) args.push('-guest-ops', opts.guestOpsFile);
  const m = opts.model ?? {};
  if (m.standaloneHosts !== undefined) args.push('-standalone-host', String(m.standaloneHosts));
  if (m.clusters !== undefined) args.push('-cluster', String(m.clusters));
  if (m.hostsPerCluster !== undefined) args.push('-host', String(m.hostsPerCluster));
  if (m.vms !== undefined) args.push('-vm', String(m.vms));
  return args;
}

/** Writes the guest-ops file (0600, in a fresh private directory) the harness reads at start. */
async function writeGuestOps(opts: VcsimOptions): Promise<HarnessArgsOptions> {
  if (!opts.guestOps) return opts;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vcsim-guest-ops-'));
  const file = path.join(dir, 'guest-ops.json');
  await fs.writeFile(file, JSON.stringify(opts.guestOps), { mode: 0o600 });
  return { ...opts, guestOpsFile: file };
}

async function removeGuestOps(opts: HarnessArgsOptions): Promise<void> {
  if (opts.guestOpsFile) await fs.rm(path.dirname(opts.guestOpsFile), { recursive: true, force: true });
}

type HarnessArgsOptions = VcsimOptions & { guestOpsFile?: string };

/** The harness reads its password from this variable and unsets it (src/lab/harness/vcsim/main.go). */
const PASSWORD_ENV = 'VCSIM_HARNESS_PASSWORD';
const DEFAULT_PASSWORD = 'pass';

function harnessEnv(opts: VcsimOptions): NodeJS.ProcessEnv {
  return { ...process.env, [PASSWORD_ENV]: opts.password ?? DEFAULT_PASSWORD };
}

function parseReady(line: string): Omit<VcsimInfo, 'password'> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(trimmed) as Partial<VcsimInfo>;
    if (typeof v.url === 'string' && typeof v.thumbprint === 'string' && typeof v.pid === 'number') {
      return v as Omit<VcsimInfo, 'password'>;
    }
  } catch {
    // not the ready line
  }
  return undefined;
}

/** Starts the harness and resolves once it prints its ready line. */
export async function startVcsim(options: VcsimOptions = {}): Promise<VcsimHandle> {
  const bin = await buildVcsimHarness();
  const opts = await writeGuestOps(options);
  try {
    return await startWith(bin, opts);
  } finally {
    // read at start: the passwords do not stay on disk
    await removeGuestOps(opts);
  }
}

async function startWith(bin: string, opts: HarnessArgsOptions): Promise<VcsimHandle> {
  if (opts.detached) return startDetached(bin, opts);
  if (opts.dataDir) await fs.mkdir(opts.dataDir, { recursive: true });

  const child = spawn(bin, harnessArgs(opts), { stdio: ['ignore', 'pipe', 'pipe'], env: harnessEnv(opts) });
  let stderr = '';
  let logged = Promise.resolve();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-16_384);
    if (opts.logFile) {
      const file = opts.logFile;
      logged = logged.then(() => fs.appendFile(file, chunk)).catch(() => undefined);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const info = await new Promise<VcsimInfo>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new VcsimHarnessError(`vcsim harness did not become ready within ${READY_TIMEOUT_MS} ms: ${bin}\n${stderr}`));
    }, READY_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const ready = parseReady(out.slice(0, nl));
      clearTimeout(timer);
      if (ready) resolve({ ...ready, password: opts.password ?? DEFAULT_PASSWORD });
      else reject(new VcsimHarnessError(`vcsim harness printed an unexpected first line: ${out.slice(0, nl)}`));
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new VcsimHarnessError(`cannot run the vcsim harness ${bin}: ${err.message}`, { cause: err }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new VcsimHarnessError(
          `vcsim harness exited before it was ready (${signal ?? `exit code ${code}`}): ${bin} ${harnessArgs(opts).join(' ')}\n${stderr.trim()}`,
        ),
      );
    });
  });

  let stopping: Promise<void> | undefined;
  return {
    ...info,
    control: vcsimControl(info),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
        await logged;
      })();
      return stopping;
    },
  };
}

async function startDetached(bin: string, opts: HarnessArgsOptions): Promise<VcsimHandle> {
  if (!opts.logFile) throw new VcsimHarnessError('startVcsim({ detached: true }) needs a logFile to read the ready line from');
  const logFile = opts.logFile;
  await fs.mkdir(path.dirname(logFile), { recursive: true });
  if (opts.dataDir) await fs.mkdir(opts.dataDir, { recursive: true });
  const fd = openSync(logFile, 'w');
  let pid: number | undefined;
  try {
    const child = spawn(bin, harnessArgs(opts), { stdio: ['ignore', fd, fd], detached: true, env: harnessEnv(opts) });
    pid = child.pid;
    child.unref();
  } finally {
    closeSync(fd);
  }
  if (pid === undefined) throw new VcsimHarnessError(`cannot run the vcsim harness ${bin}`);

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const text = await fs.readFile(logFile, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const ready = parseReady(line);
      if (ready) {
        const info = { ...ready, password: opts.password ?? DEFAULT_PASSWORD };
        return { ...info, control: vcsimControl(info), stop: () => stopVcsimPid(info.pid) };
      }
    }
    if (!isAlive(pid)) {
      throw new VcsimHarnessError(`vcsim harness exited before it was ready; log ${logFile}:\n${text.slice(-4000)}`);
    }
    if (Date.now() > deadline) {
      await stopVcsimPid(pid);
      throw new VcsimHarnessError(`vcsim harness did not become ready within ${READY_TIMEOUT_MS} ms; log ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops a (detached) harness by pid: SIGTERM, then SIGKILL after 5 s. */
export async function stopVcsimPid(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One call of the harness control API over HTTPS (the harness's own certificate); its JSON answer, or VcsimHarnessError. */
function harnessRequest(base: URL, cert: Buffer, method: 'GET' | 'POST', op: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: base.hostname,
        port: base.port,
        path: `/_harness/${op}`,
        method,
        ca: cert,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
          if (res.statusCode !== 200) {
            const msg = typeof parsed === 'object' && parsed && 'error' in parsed ? String(parsed.error) : text;
            reject(new VcsimHarnessError(`vcsim harness ${method} /_harness/${op} → HTTP ${res.statusCode}: ${msg}`));
          } else resolve(parsed);
        });
      },
    );
    req.on('error', (err) =>
      reject(new VcsimHarnessError(`vcsim harness control ${base.host}/_harness/${op}: ${err.message}`, { cause: err })),
    );
    req.end(payload);
  });
}

/** A client for the /_harness/ control API of a running harness (e.g. one found by `lab status`). */
export function vcsimControl(info: Pick<VcsimInfo, 'url' | 'certFile'>): VcsimControl {
  const base = new URL(info.url);
  let ca: Promise<Buffer> | undefined;
  const request = async (method: 'GET' | 'POST', op: string, body?: unknown): Promise<unknown> => {
    ca ??= fs.readFile(info.certFile);
    return harnessRequest(base, await ca, method, op, body);
  };
  return {
    async fault(rule) {
      await request('POST', 'fault', rule);
    },
    async expireSessions() {
      const r = (await request('POST', 'expire-sessions')) as { expired?: number };
      return r.expired ?? 0;
    },
    async drop(rule) {
      await request('POST', 'drop', rule);
    },
    async delay(method, ms) {
      await request('POST', 'delay', { method, ms });
    },
    async slowTask(method, ms) {
      await request('POST', 'slow-task', { method, ms });
    },
    async hold(method, o = {}) {
      await request('POST', 'hold', { method, task: o.task === true });
    },
    async release(method) {
      return (await request('POST', 'release', method === undefined ? {} : { method })) as { calls: number; tasks: number };
    },
    async calls() {
      return (await request('GET', 'calls')) as Record<string, number>;
    },
    async log() {
      return (await request('GET', 'log')) as HarnessCall[];
    },
    async reset() {
      await request('POST', 'reset');
    },
    async version(version) {
      const r = (await request('POST', 'version', { version })) as { version?: string };
      return r.version ?? '';
    },
    async guestOps() {
      return (await request('GET', 'guest-ops')) as { calls: GuestOpCall[]; processes: GuestProcess[]; accounts: GuestAccount[] };
    },
    async guestProcesses() {
      const r = (await request('GET', 'guest-processes')) as { processes: GuestProcess[] };
      return r.processes;
    },
    async guestTools(vm, running) {
      await request('POST', 'guest-tools', { vm, running });
    },
    async restrictedUser(u) {
      await request('POST', 'restricted-user', u);
    },
    async guestIdentity(mode) {
      await request('POST', 'guest-identity', { mode });
    },
  };
}

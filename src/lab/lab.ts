// The lab's state and inventory. `labUp` is idempotent: a running lab is reused (its inventory is
// rewritten, the stand-ins' host models are kept).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensureKeyPair, startSshd, currentUser, stopPid } from './sshd.ts';
import { startVcsim } from './vcsim.ts';
import { vcenterYaml, vsphereTargetYaml } from './vsphere-inventory.ts';
import { attachPostgres, hasPostgresCluster, PG_SUPERUSER, restartPostgres, startPostgres, stopPostgres } from './postgres.ts';
// the stand-ins' host models (src/lab/harness/*/state.ts) are the lab's ESXi and Hyper-V hosts
import { BLANK_DEV, ESXI_HARNESS_DIR, RDM_DEV, defaultEsxiState, seedEsxiState } from './harness/esxi/state.ts';
import { DEFAULT_LAB_VERSION, type LabVersion } from './versions.ts';
import { labHypervState, seedHypervState, LAB_GUEST_USER, LAB_TEMPLATE, LAB_VM, WINDOWS_HARNESS_DIR } from './harness/windows/state.ts';

export interface LabState {
  ssh: { pid: number; port: number; user: string; keyPath: string; knownHostsFile: string };
  vcsim: { pid: number; url: string; thumbprint: string; certFile: string; username: string; luns: string[]; nfsDir: string } | null;
  scratch: string;
  standinState: string;
  /** the release the simulator and the ESXi stand-ins act as (`npm run lab -- up --version`) */
  version?: LabVersion;
  /** a PostgreSQL store (`npm run lab -- up --postgres`): its cluster directory, port and database */
  postgres?: { dir: string; port: number; database: string };
}

export function labPaths(root: string) {
  const dir = path.join(root, '.lab');
  return {
    dir,
    state: path.join(dir, 'state.json'),
    inventory: path.join(dir, 'inventory.yaml'),
    key: path.join(dir, 'id_ed25519'),
    knownHosts: path.join(dir, 'known_hosts'),
    sshd: path.join(dir, 'sshd'),
    scratch: path.join(dir, 'scratch'),
    standinState: path.join(dir, 'standin-state'),
    vcsimPassword: path.join(dir, 'vcsim-password'),
    vcsimLog: path.join(dir, 'vcsim.log'),
    vcsimData: path.join(dir, 'vcsim-data'),
    // the guest's disks the harness attaches (loop devices) and its by-id directory (no udev here)
    guestDisks: path.join(dir, 'guest-disks'),
    // the same for the disks the ESXi stand-ins attach (harness/esxi/guest_disks.py)
    esxiGuestDisks: path.join(dir, 'esxi-guest-disks'),
    nfs: path.join(dir, 'nfs-export'),
    guestPassword: path.join(dir, 'hyperv-guest-password'),
    // the vCenter lab VMs' guests reached through VMware Tools guest operations (harness -guest-ops)
    toolsGuests: path.join(dir, 'tools-guests'),
    toolsLinuxPassword: path.join(dir, 'vcenter-linux-guest-password'),
    toolsWindowsPassword: path.join(dir, 'vcenter-windows-guest-password'),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The lab's state file as last written, whether its processes still run or not (a reboot). */
export function recordedLabState(root: string): LabState | null {
  const p = labPaths(root).state;
  if (!fs.existsSync(p)) return null;
  return JSON.parse(fs.readFileSync(p, 'utf8')) as LabState;
}

export function readLabState(root: string): LabState | null {
  const s = recordedLabState(root);
  if (!s || !alive(s.ssh.pid) || (s.vcsim && !alive(s.vcsim.pid))) return null;
  return s;
}

export function labStatusJson(root: string, s: LabState) {
  return {
    running: true,
    version: s.version ?? DEFAULT_LAB_VERSION,
    ssh: [{ host: '127.0.0.1', port: s.ssh.port, user: s.ssh.user, keyPath: s.ssh.keyPath }],
    vcenter: s.vcsim ? { url: s.vcsim.url, username: s.vcsim.username, password: fs.readFileSync(labPaths(root).vcsimPassword, 'utf8').trim(), thumbprint: s.vcsim.thumbprint } : null,
  };
}

/** The LUNs the vcsim harness gives every host (see src/lab/harness/vcsim/storage.go). */
export type LunLister = (info: { url: string; thumbprint: string; username: string; password: string }) => Promise<string[]>;

/** Hyper-V lab volumes: volume.sizeGb value → host folder (the stand-in's volumes of that size). */
export const LAB_HYPERV_VOLUMES: Record<string, string> = { '100': 'D:\\bench', '500': 'F:\\bench', '2000': 'E:\\bench' };

/**
 * Seeds the ESXi and Hyper-V stand-ins' host models once: a later `up` keeps them, so whatever a
 * run left behind stays visible. The guest password is random per lab and lives only in .lab/.
 */
async function seedStandins(p: ReturnType<typeof labPaths>, version: LabVersion): Promise<void> {
  // another release is another host: its model is seeded anew
  const esxi = path.join(p.standinState, 'esxi.json');
  const model = fs.existsSync(esxi) ? (JSON.parse(fs.readFileSync(esxi, 'utf8')) as { product?: { version?: string }; guestDisks?: string }) : undefined;
  const seeded = model?.product?.version;
  if (!seeded || !seeded.startsWith(`${version}.`)) await seedEsxiState(p.standinState, defaultEsxiState(version, { guestDisks: p.esxiGuestDisks }), { keepLog: true });
  else if (model && model.guestDisks !== p.esxiGuestDisks) fs.writeFileSync(esxi, JSON.stringify({ ...model, guestDisks: p.esxiGuestDisks }, null, 1));
  if (!fs.existsSync(path.join(p.standinState, 'hyperv.json')) || !fs.existsSync(p.guestPassword)) {
    const password = `lab-${crypto.randomBytes(9).toString('base64url')}`;
    fs.writeFileSync(p.guestPassword, password + '\n', { mode: 0o600 });
    await seedHypervState(p.standinState, labHypervState(LAB_HYPERV_VOLUMES, password), { keepLog: true });
  }
}

/**
 * The vCenter lab's guests reached through VMware Tools guest operations: the Linux guest is the
 * VM lab-vcenter measures over SSH (this machine; login TOOLS_LINUX_USER, programs run as a local
 * account the harness makes for this lab alone), the Windows guest another VM on the same host (the
 * Windows stand-ins).
 */
export const TOOLS_LINUX_VM = 'DC0_H0_VM0';
export const TOOLS_WINDOWS_VM = 'DC0_H0_VM1';
export const TOOLS_LINUX_USER = 'storsweep-guest';
/**
 * Existing Linux VMs for `vm.count` (the target lab-vcenter-named-vms names them in scaleVms): more
 * VMs on the same host (the simulator made with 5 VMs per host), each a guest of its own (its own
 * local account, its own loop devices), logging in as the Linux guest does and seeing its own
 * directory at one work directory path, as VMs made from one template would.
 */
export const LAB_SCALE_VMS = ['DC0_H0_VM2', 'DC0_H0_VM3', 'DC0_H0_VM4'] as const;
/** the VMs per standalone host and resource pool the lab's simulator has (DC0_H0_VM0 … VM4) */
const LAB_VMS_PER_HOST = 5;

/** The scale VMs' work directory: one path, each VM's own directory bound there (harness guestops.go workdir). */
export function scaleVmsWorkdir(toolsGuests: string): string {
  return path.join(toolsGuests, 'scale-vms');
}
export const TOOLS_WINDOWS_USER = 'Administrator';
/** where the Windows guest has diskspd (DEFAULT_GUEST_DISKSPD in providers/vsphere/guest-config.ts) */
export const TOOLS_WINDOWS_DISKSPD = 'C:\\Tools\\diskspd.exe';
export const TOOLS_WINDOWS_WORKDIR = 'C:\\storsweep';

/** Reads a lab secret file, creating it (random, 0600) the first time. */
function labSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = `lab-${crypto.randomBytes(9).toString('base64url')}`;
  fs.writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** The Linux tools guest's work directory: its scratch directory in the harness (owned by the guest user). */
export function toolsLinuxWorkdir(toolsGuests: string): string {
  return path.join(toolsGuests, TOOLS_LINUX_VM);
}

/** The lab runs as one release: another one needs `npm run lab -- down` first. */
export class LabVersionMismatch extends Error {
  override readonly name = 'LabVersionMismatch';
}

/**
 * The lab's PostgreSQL store: made once (`up --postgres`, initdb in .lab/postgres), kept by later
 * `up`s; a cluster that is there but not running (`lab down`, `pg_ctl stop`, a reboot) is started
 * again on its recorded port with its data — the runs stored in it are never deleted here.
 */
export async function labPostgres(p: Pick<ReturnType<typeof labPaths>, 'dir'>, existing: LabState['postgres']): Promise<NonNullable<LabState['postgres']>> {
  if (existing && (await attachPostgres(existing.dir))) return existing;
  const dir = existing?.dir ?? path.join(p.dir, 'postgres');
  if (hasPostgresCluster(dir)) {
    const pg = await restartPostgres(dir);
    return { dir, port: pg.port, database: existing?.database ?? LAB_STORE_DATABASE };
  }
  // nothing initdb made here (a first `up --postgres`, or one cut short before initdb finished)
  fs.rmSync(dir, { recursive: true, force: true });
  const pg = await startPostgres({ dir });
  await pg.createDatabase(LAB_STORE_DATABASE);
  return { dir, port: pg.port, database: LAB_STORE_DATABASE };
}

/** `lab down`: the store's server stops; its data (the stored runs) stays unless `purge`. */
export async function labPostgresDown(dir: string, o: { purge?: boolean } = {}): Promise<void> {
  await stopPostgres(dir, { remove: Boolean(o.purge) });
}
export const LAB_STORE_DATABASE = 'storsweep';

export async function labUp(root: string, opts: { vcsim: boolean; listLuns?: LunLister; version?: LabVersion; postgres?: boolean }): Promise<LabState> {
  const p = labPaths(root);
  const existing = readLabState(root);
  const running = existing ? (existing.version ?? DEFAULT_LAB_VERSION) : undefined;
  if (existing && running && opts.version && opts.version !== running) {
    throw new LabVersionMismatch(`the lab is running as ESXi/vCenter ${running}; \`npm run lab -- down\`, then \`npm run lab -- up --version ${opts.version}\``);
  }
  const version = opts.version ?? running ?? DEFAULT_LAB_VERSION;
  if (existing && (existing.vcsim || !opts.vcsim)) {
    await seedStandins(p, version);
    if (opts.postgres || existing.postgres) {
      existing.postgres = await labPostgres(p, existing.postgres);
      fs.writeFileSync(p.state, JSON.stringify(existing, null, 1));
    }
    fs.writeFileSync(p.inventory, labInventoryYaml(existing));
    return existing;
  }
  fs.mkdirSync(p.dir, { recursive: true });
  fs.mkdirSync(p.scratch, { recursive: true });
  fs.mkdirSync(p.standinState, { recursive: true });
  fs.mkdirSync(p.nfs, { recursive: true });
  // what this call starts, stopped again if a later step fails: a lab cut short leaves nothing
  // running that `down` would not know of (its sshd allows root logins on 127.0.0.1)
  const started: number[] = [];
  try {
    return await startLab(root, p, { ...opts, version }, existing, started);
  } catch (e) {
    for (const pid of started.reverse()) await stopPid(pid);
    throw e;
  }
}

async function startLab(root: string, p: ReturnType<typeof labPaths>, opts: { vcsim: boolean; listLuns?: LunLister; version: LabVersion; postgres?: boolean }, existing: LabState | null, started: number[]): Promise<LabState> {
  const version = opts.version;
  await seedStandins(p, version);
  const key = await ensureKeyPair(p.key);
  const sshd = existing
    ? { pid: existing.ssh.pid, port: existing.ssh.port, knownHostsLine: fs.readFileSync(p.knownHosts, 'utf8').trim() }
    : await startSshd({
        dir: p.sshd,
        authorizedKeys: [key.publicKey],
        detached: true,
        pathPrefix: [ESXI_HARNESS_DIR, WINDOWS_HARNESS_DIR],
        env: { STORSWEEP_STANDIN_STATE: p.standinState },
      });
  if (!existing) started.push(sshd.pid);
  fs.writeFileSync(p.knownHosts, sshd.knownHostsLine + '\n');
  let vcsim: LabState['vcsim'] = null;
  if (opts.vcsim) {
    const password = fs.existsSync(p.vcsimPassword) ? fs.readFileSync(p.vcsimPassword, 'utf8').trim() : `lab-${crypto.randomBytes(9).toString('base64url')}`;
    fs.writeFileSync(p.vcsimPassword, password + '\n', { mode: 0o600 });
    const guestOps = {
      root: p.toolsGuests,
      vms: [
        { vm: TOOLS_LINUX_VM, os: 'linux' as const, username: TOOLS_LINUX_USER, password: labSecret(p.toolsLinuxPassword), sudo: true },
        { vm: TOOLS_WINDOWS_VM, os: 'windows' as const, username: TOOLS_WINDOWS_USER, password: labSecret(p.toolsWindowsPassword), diskspdPath: TOOLS_WINDOWS_DISKSPD },
        ...LAB_SCALE_VMS.map((vm) => ({ vm, os: 'linux' as const, username: TOOLS_LINUX_USER, password: labSecret(p.toolsLinuxPassword), sudo: true, workdir: scaleVmsWorkdir(p.toolsGuests) })),
      ],
    };
    const model = { vms: LAB_VMS_PER_HOST };
    const h = await startVcsim({ username: 'administrator@vsphere.local', password, detached: true, logFile: p.vcsimLog, dataDir: p.vcsimData, version, guestDisks: p.guestDisks, guestOps, model });
    started.push(h.pid);
    const luns = opts.listLuns ? await opts.listLuns({ url: h.url, thumbprint: h.thumbprint, username: h.username, password }) : [];
    vcsim = { pid: h.pid, url: h.url, thumbprint: h.thumbprint, certFile: h.certFile, username: h.username, luns, nfsDir: p.nfs };
  }
  // the store the lab had before (also after a reboot, when its other processes are gone)
  const recorded = existing?.postgres ?? recordedLabState(root)?.postgres ?? (hasPostgresCluster(path.join(p.dir, 'postgres')) ? undefined : null);
  const postgres = opts.postgres || recorded !== null ? await labPostgres(p, recorded ?? undefined) : undefined;
  const state: LabState = {
    ssh: { pid: sshd.pid, port: sshd.port, user: currentUser(), keyPath: key.privateKeyPath, knownHostsFile: p.knownHosts },
    vcsim,
    scratch: p.scratch,
    standinState: p.standinState,
    version,
    ...(postgres ? { postgres } : {}),
  };
  fs.writeFileSync(p.state, JSON.stringify(state, null, 1));
  fs.writeFileSync(p.inventory, labInventoryYaml(state));
  return state;
}

export function labInventoryYaml(s: LabState): string {
  const lines = [
    '# yaml-language-server: $schema=../schemas/inventory.schema.json',
    '# Written by `npm run lab -- up`: the embedded local lab. Regenerated on every `up`.',
    // the store's password by reference, like every secret: the file initdb's password was written to
    ...(s.postgres ? [`store: ${JSON.stringify(`postgresql://${PG_SUPERUSER}:\${file:${path.basename(s.postgres.dir)}/password}@127.0.0.1:${s.postgres.port}/${s.postgres.database}`)}`] : []),
    'sshHosts:',
    '  lab:',
    '    host: 127.0.0.1',
    `    port: ${s.ssh.port}`,
    `    user: ${s.ssh.user}`,
    '    privateKeyFile: id_ed25519',
    '    knownHostsFile: known_hosts',
  ];
  if (s.vcsim) {
    lines.push('vcenters:', ...vcenterYaml({ name: 'lab-vc', url: s.vcsim.url, username: s.vcsim.username, passwordRef: '${file:vcsim-password}', thumbprint: s.vcsim.thumbprint }));
  }
  lines.push(
    'targets:',
    '  lab-local:',
    '    provider: local',
    `    workdir: ${s.scratch}`,
    '  lab-guest:',
    '    provider: ssh',
    '    sshHost: lab',
    `    workdir: ${s.scratch}`,
    // the ESXi stand-ins (src/lab/harness/esxi) on the lab sshd; the workload runs in the "guest", the same sshd with fio
    '  lab-esxi:',
    '    provider: esxi-shell',
    '    sshHost: lab',
    '    vmid: 1',
    '    datastore: datastore1',
    `    vmfsDevice: ${BLANK_DEV}`,
    `    rdmDevice: ${RDM_DEV}`,
    `    allowedDevices: [${BLANK_DEV}, ${RDM_DEV}]`,
    `    version: "${s.version ?? DEFAULT_LAB_VERSION}"`,
    '    guest:',
    '      sshHost: lab',
    `      workdir: ${path.join(s.scratch, 'esxi-guest')}`,
    // the lab guest has no udev: the stand-ins link the disks they attach here (wwn-0x…)
    `      byIdDir: ${path.join(path.dirname(s.scratch), 'esxi-guest-disks', 'by-id')}`,
    // the powershell.exe stand-in (src/lab/harness/windows) on the lab sshd: Hyper-V host, PowerShell Direct, diskspd
    '  lab-hyperv:',
    '    provider: hyperv',
    '    sshHost: lab',
    `    vmName: ${LAB_VM}`,
    '    volumes:',
    ...Object.entries(LAB_HYPERV_VOLUMES).map(([gb, dir]) => `      "${gb}": '${dir}'`),
    '    guestCredential:',
    `      username: '${LAB_GUEST_USER}'`,
    '      password: ${file:hyperv-guest-password}',
    "    diskspdPath: 'C:\\Tools\\diskspd.exe'",
    // vm.count members: differencing children of the stand-in's sysprepped template (hyperv_vms.py)
    '    vmTemplate:',
    `      vhdxPath: '${LAB_TEMPLATE}'`,
    '      generation: 2',
    '      memoryStartupBytes: 2147483648',
    // the stand-in host's Win32_OperatingSystem.Version (Windows Server 2022): preflight checks it
    '    version: "10.0.20348"',
  );
  if (s.vcsim) {
    const [vmfsDevice, rdmDevice] = s.vcsim.luns;
    const version = s.version ?? DEFAULT_LAB_VERSION;
    const byIdDir = path.join(path.dirname(s.scratch), 'guest-disks', 'by-id');
    lines.push(...vsphereTargetYaml({ name: 'lab-vcenter', vcenter: 'lab-vc', host: 'DC0_H0', vm: TOOLS_LINUX_VM, datastore: 'LocalDS_0', vmfsDevice, rdmDevice, nfsDir: s.vcsim.nfsDir, version, guest: { sshHost: 'lab', workdir: s.scratch, byIdDir } }));
    // the same VMs through VMware Tools guest operations only (no SSH to the guest): the Linux
    // guest runs fio as the harness's guest user, the Windows guest the diskspd stand-in
    const toolsGuests = path.join(path.dirname(s.scratch), 'tools-guests');
    lines.push(
      ...vsphereTargetYaml({
        name: 'lab-vcenter-tools-linux',
        vcenter: 'lab-vc',
        host: 'DC0_H0',
        vm: TOOLS_LINUX_VM,
        datastore: 'LocalDS_0',
        version,
        // the guest user is not root: raw disk access and mounts go through sudo -n (guest.sudo)
        guest: { workdir: toolsLinuxWorkdir(toolsGuests), byIdDir, sudo: true, tools: { os: 'linux', username: TOOLS_LINUX_USER, passwordRef: '${file:vcenter-linux-guest-password}' } },
      }),
      ...vsphereTargetYaml({
        name: 'lab-vcenter-tools-windows',
        vcenter: 'lab-vc',
        host: 'DC0_H0',
        vm: TOOLS_WINDOWS_VM,
        datastore: 'LocalDS_0',
        version,
        guest: { workdir: TOOLS_WINDOWS_WORKDIR, tools: { os: 'windows', username: TOOLS_WINDOWS_USER, passwordRef: '${file:vcenter-windows-guest-password}', diskspdPath: TOOLS_WINDOWS_DISKSPD } },
      }),
      // vm.count on existing VMs (scaleVms) instead of clones: the lab's three scale VMs
      ...vsphereTargetYaml({
        name: 'lab-vcenter-named-vms',
        vcenter: 'lab-vc',
        host: 'DC0_H0',
        vm: LAB_SCALE_VMS[0],
        scaleVms: [...LAB_SCALE_VMS],
        datastore: 'LocalDS_0',
        version,
        guest: { workdir: scaleVmsWorkdir(toolsGuests), byIdDir, sudo: true, tools: { os: 'linux', username: TOOLS_LINUX_USER, passwordRef: '${file:vcenter-linux-guest-password}' } },
      }),
    );
  }
  return lines.join('\n') + '\n';
}

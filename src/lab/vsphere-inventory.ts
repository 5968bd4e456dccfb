// Inventory entries for a vCenter simulator target: one writer for the lab (`npm run lab -- up`)
// and for the integration tests that start a simulator of their own.
import { VsphereClient } from '../providers/vsphere/client.ts';

export interface VcenterEntry {
  name: string;
  url: string;
  username: string;
  /** a secret reference, e.g. ${file:vcsim-password} */
  passwordRef: string;
  thumbprint: string;
}

export interface VsphereTargetEntry {
  name: string;
  vcenter: string;
  host: string;
  vm: string;
  /** existing VMs for vm.count (scaleVms) */
  scaleVms?: string[];
  datastore?: string;
  vmfsDevice?: string;
  rdmDevice?: string;
  /** directory exported as the NFS datastore's remote path */
  nfsDir?: string;
  /** the host's ESXi release the target states (`version: "8.0"`) */
  version?: string;
  /** byIdDir: where the lab's guest lists disks by WWN (the harness's -guest-disks DIR/by-id) */
  guest: {
    sshHost?: string;
    workdir: string;
    byIdDir?: string;
    /** the guest login reaches root through sudo -n */
    sudo?: boolean;
    /** through VMware Tools guest operations (the harness's -guest-ops), with this account */
    tools?: { os: 'linux' | 'windows'; username: string; passwordRef: string; diskspdPath?: string };
  };
}

/** `vcenters:` entry lines, indented for the section. */
export function vcenterYaml(v: VcenterEntry): string[] {
  return [`  ${v.name}:`, `    url: ${v.url}`, `    username: ${v.username}`, `    password: ${v.passwordRef}`, `    thumbprint: "${v.thumbprint}"`];
}

/** `targets:` entry lines; allowedDevices are exactly the devices the target formats or maps. */
export function vsphereTargetYaml(t: VsphereTargetEntry): string[] {
  const devices = [t.vmfsDevice, t.rdmDevice].filter((d): d is string => Boolean(d));
  return [
    `  ${t.name}:`,
    '    provider: vsphere',
    `    vcenter: ${t.vcenter}`,
    '    datacenter: DC0',
    `    host: ${t.host}`,
    `    vm: ${t.vm}`,
    ...(t.scaleVms ? [`    scaleVms: [${t.scaleVms.join(', ')}]`] : []),
    ...(t.datastore ? [`    datastore: ${t.datastore}`] : []),
    ...(t.vmfsDevice ? [`    vmfsDevice: ${t.vmfsDevice}`] : []),
    ...(t.rdmDevice ? [`    rdmDevice: ${t.rdmDevice}`] : []),
    `    allowedDevices: [${devices.join(', ')}]`,
    ...(t.nfsDir ? ['    nfs:', '      remoteHost: 127.0.0.1', `      remotePath: ${t.nfsDir}`] : []),
    ...(t.version ? [`    version: "${t.version}"`] : []),
    '    guest:',
    ...(t.guest.tools
      ? ['      via: tools', `      os: ${t.guest.tools.os}`, '      credential:', `        username: '${t.guest.tools.username}'`, `        password: ${t.guest.tools.passwordRef}`]
      : []),
    ...(t.guest.sshHost ? [`      sshHost: ${t.guest.sshHost}`] : []),
    // a Windows path's backslashes stay literal in single quotes
    t.guest.workdir.includes('\\') ? `      workdir: '${t.guest.workdir}'` : `      workdir: ${t.guest.workdir}`,
    ...(t.guest.tools?.diskspdPath ? [`      diskspdPath: '${t.guest.tools.diskspdPath}'`] : []),
    // the lab's one difference from a real guest: no udev, so the harness publishes the disks it
    // attaches (loop devices) under its own by-id directory
    ...(t.guest.byIdDir ? [`      byIdDir: ${t.guest.byIdDir}`] : []),
    ...(t.guest.sudo ? ['      sudo: true'] : []),
  ];
}

/** The simulator's unused naa.* LUNs on a host, read through our own client, sorted. */
export async function listVcsimLuns(info: { url: string; thumbprint: string; username: string; password: string }, host = 'DC0_H0'): Promise<string[]> {
  return (await listVcsimLunsOf(info, [host]))[0]!;
}

/** listVcsimLuns for several hosts through one session (a 100-host lab: one login, not 100). */
export async function listVcsimLunsOf(info: { url: string; thumbprint: string; username: string; password: string }, hosts: readonly string[]): Promise<string[][]> {
  const c = await VsphereClient.connect({ ...info, userAgent: 'storsweep-lab' });
  try {
    const out: string[][] = [];
    for (const host of hosts) out.push((await c.listVmfsCandidateDisks(await c.findHost(host))).map((d) => d.canonicalName).sort());
    return out;
  } finally {
    await c.logout();
  }
}

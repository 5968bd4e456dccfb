// What a target uses that another target may use too (ProviderModule.sharedResources), by keys
// equal across providers: a Linux fio guest's test file and work directory, a LUN. Listed targets
// sharing a key run one after the other (plan/plan.ts names them, run/executor.ts serialises).
import type { ResourceContext, SharedResource } from '../contract/provider.ts';
import { fioTestFile } from '../workloads/fio-endpoint.ts';

/**
 * A fio guest (local, ssh, or the guest of a vSphere/ESXi VM): its test file and its work directory
 * (fio's control files and, by default, the test file) on the machine it runs on. Two fio jobs on
 * one file at once would each measure half a disk and overwrite the other's pre-fill.
 *
 * A guest reached over SSH is also one machine (`guest <host:port>`, the same for two sshHosts
 * entries naming one host and port, whatever the user): two targets measuring it with different
 * work directories would still run two fio jobs on its disk at once. Fio on this machine without
 * SSH (local targets, the lab's VM guests) is taken by its test file and work directory only: its
 * work directories are how a user points fio at this machine's disks. One machine reached under
 * two names (a DNS name and its address, two aliases) is not detected; `plan` says so.
 */
export function fioGuestResources(g: { sshHost?: string | undefined; workdir: string; testFile?: string | undefined }, where: ResourceContext): SharedResource[] {
  const machine = where.machine(g.sshHost);
  const file = fioTestFile(g);
  return [
    ...(g.sshHost !== undefined ? [{ key: `guest ${machine}`, what: `guest ${machine}` }] : []),
    { key: `guest-file ${machine} ${file}`, what: `guest test file ${file} on ${machine}` },
    { key: `guest-workdir ${machine} ${g.workdir}`, what: `guest work directory ${g.workdir} on ${machine}` },
  ];
}

/**
 * A LUN by its canonical name: naa/eui/t10 names are world-wide identifiers (the same LUN seen
 * from two hosts or two providers has one name), an `mpx.` name is a path on one host only, so it
 * is scoped to `host`.
 */
export function lunResource(device: string, host: string): SharedResource {
  return { key: device.startsWith('mpx.') ? `lun ${host} ${device}` : `lun ${device}`, what: `LUN ${device}` };
}

// What a target uses that another target may use too (ProviderModule.sharedResources), by keys
// equal across providers: a Linux fio guest's test file and work directory, a LUN. Listed targets
// sharing a key run one after the other (plan/plan.ts names them, run/executor.ts serialises).
import type { ResourceContext, SharedResource } from '../contract/provider.ts';
import { fioTestFile } from '../workloads/fio-endpoint.ts';

/**
 * A fio guest (local, ssh, or the guest of a vSphere/ESXi VM): its test file and its work directory
 * (fio's control files and, by default, the test file) on the machine it runs on. Two fio jobs on
 * one file at once would each measure half a disk and overwrite the other's pre-fill.
 */
export function fioGuestResources(g: { sshHost?: string | undefined; workdir: string; testFile?: string | undefined }, where: ResourceContext): SharedResource[] {
  const machine = where.machine(g.sshHost);
  const file = fioTestFile(g);
  return [
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

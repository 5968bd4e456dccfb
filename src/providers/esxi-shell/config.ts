// What the ESXi-shell provider needs to know about one host, mapped from the inventory by config/.
import { InvalidArgument } from '../../errors.ts';
import { checkEsxi, checkInt } from './validate.ts';

export interface EsxiShellTargetConfig {
  /** inventory name of the host, for messages */
  host: string;
  /** VM (vim-cmd vmsvc/getallvms id) that receives the test disk */
  vmid: string;
  /** datastore used when datastore.kind is `existing`, e.g. /vmfs/volumes/datastore1 */
  datastoreVolumePath?: string;
  /** device formatted when datastore.kind is vmfs3|vmfs5|vmfs6 (must also be in allowedDevices) */
  vmfsDevice?: string;
  /** device mapped for disk.format rdm-physical|rdm-virtual (must also be in allowedDevices) */
  rdmDevice?: string;
  /** canonical names this run may partition, format or map; anything else is refused */
  allowedDevices: string[];
  /** SCSI controller bus for the test disk (default 0); the unit is the lowest free one, chosen at apply */
  scsiBus?: number;
  /** the guest's work directory: a guest.filesystem other than raw is mounted in a directory of ours there */
  guestWorkdir?: string;
  /** the host's ESXi release ("8.0"), stated in the inventory or read from the host; the planner
   *  refuses what that release cannot create (../esxi-version.ts) */
  version?: string;
}

/** Validates every field that ends up on a command line; returns the config with defaults. */
export function checkEsxiShellTarget(t: EsxiShellTargetConfig): Required<Omit<EsxiShellTargetConfig, 'datastoreVolumePath' | 'vmfsDevice' | 'rdmDevice' | 'version' | 'guestWorkdir'>> & EsxiShellTargetConfig {
  checkEsxi('vmid', t.vmid, `${t.host}: vmid`);
  if (t.datastoreVolumePath !== undefined) checkEsxi('volumePath', t.datastoreVolumePath, `${t.host}: datastoreVolumePath`);
  if (t.vmfsDevice !== undefined) checkEsxi('device', t.vmfsDevice, `${t.host}: vmfsDevice`);
  if (t.rdmDevice !== undefined) checkEsxi('device', t.rdmDevice, `${t.host}: rdmDevice`);
  if (!Array.isArray(t.allowedDevices)) throw new InvalidArgument(`${t.host}: allowedDevices must be a list of canonical device names`, { name: 'allowedDevices', value: String(t.allowedDevices) });
  t.allowedDevices.forEach((d, i) => checkEsxi('device', d, `${t.host}: allowedDevices[${i}]`));
  const scsiBus = checkInt(t.scsiBus ?? 0, `${t.host}: scsiBus`, 0, 3);
  return { ...t, scsiBus };
}

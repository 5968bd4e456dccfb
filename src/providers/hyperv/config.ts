// What the Hyper-V provider needs to know about one host, mapped from the inventory by config/.
import { InvalidArgument } from '../../errors.ts';
import { checkHyperv, HYPERV_DISK_NUMBER } from './validate.ts';

export interface AllowedDisk {
  /** Get-Disk Number */
  number: number;
  /** at least one of these must be given and must match what Get-Disk reports */
  serialNumber?: string;
  uniqueId?: string;
}

export interface HypervTargetConfig {
  /** inventory name of the host, for messages */
  host: string;
  /** VM that receives the test disk (PowerShell Direct target for the workload) */
  vmName: string;
  /** volume.sizeGb axis value (as a string, e.g. "100") → folder on that host volume, e.g. D:\bench */
  volumes: Record<string, string>;
  /** physical disks a passthrough permutation may take offline and hand to the VM */
  allowedDisks?: AllowedDisk[];
  /** Get-Disk Number used for disk.format passthrough (must be in allowedDisks) */
  passthroughDisk?: number;
  /** SCSI controller number and location for the test disk (default 0 and 1) */
  scsiController?: number;
  scsiLocation?: number;
  /** what a `vm.count` member VM is made from (vm-count.ts); absent: the target takes no vm.count */
  vmTemplate?: HypervVmTemplate | undefined;
}

/** A `vm.count` member's making: a differencing disk of this VHDX, a VM of this generation and memory on it. */
export interface HypervVmTemplate {
  /** a sysprepped Windows guest's system disk; never written: every member gets a differencing child */
  vhdxPath: string;
  generation: 2;
  memoryStartupBytes: number;
  switchName?: string | undefined;
}

function int(v: unknown, name: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new InvalidArgument(`${name}: expected an integer ${min}-${max}, got ${JSON.stringify(v)}`, { name, value: String(v) });
  return v;
}

export function checkHypervTarget(t: HypervTargetConfig): HypervTargetConfig & { scsiController: number; scsiLocation: number; allowedDisks: AllowedDisk[] } {
  checkHyperv('vmName', t.vmName, `${t.host}: vmName`);
  for (const [k, v] of Object.entries(t.volumes ?? {})) checkHyperv('folder', v, `${t.host}: volumes.${k}`);
  const allowedDisks = t.allowedDisks ?? [];
  allowedDisks.forEach((d, i) => {
    int(d.number, `${t.host}: allowedDisks[${i}].number`, HYPERV_DISK_NUMBER.min, HYPERV_DISK_NUMBER.max);
    if (d.serialNumber === undefined && d.uniqueId === undefined) throw new InvalidArgument(`${t.host}: allowedDisks[${i}] needs serialNumber or uniqueId (a disk number alone can change between boots)`, { name: `allowedDisks[${i}]`, value: String(d.number) });
    if (d.serialNumber !== undefined) checkHyperv('serial', d.serialNumber, `${t.host}: allowedDisks[${i}].serialNumber`);
    if (d.uniqueId !== undefined) checkHyperv('serial', d.uniqueId, `${t.host}: allowedDisks[${i}].uniqueId`);
  });
  if (t.passthroughDisk !== undefined) int(t.passthroughDisk, `${t.host}: passthroughDisk`, HYPERV_DISK_NUMBER.min, HYPERV_DISK_NUMBER.max);
  return { ...t, allowedDisks, scsiController: int(t.scsiController ?? 0, `${t.host}: scsiController`, 0, 3), scsiLocation: int(t.scsiLocation ?? 1, `${t.host}: scsiLocation`, 0, 63) };
}

// The independent checker: test/harness/pyvmomi/verify_vsphere.py reads the simulator with pyVmomi
// (Debian's python3-pyvmomi) and prints what it sees as JSON.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { VcsimHandle } from '../../src/lab/vcsim.ts';

const VERIFY = fileURLToPath(new URL('../harness/pyvmomi/verify_vsphere.py', import.meta.url));

export interface PyDatastore {
  url: string;
  infoType: string;
  blockSizeMb?: number;
  blockSize?: number;
  majorVersion?: number;
  extents?: string[];
}
export interface PyDisk {
  key: number;
  fileName: string;
  backingType: string;
  controllerType?: string;
  busNumber?: number;
  unitNumber?: number;
  thinProvisioned?: boolean;
  eagerlyScrub?: boolean;
  /** a flat backing's uuid, as the host assigned it */
  uuid?: string;
  compatibilityMode?: string;
  deviceName?: string;
}

export function pyvmomi(sim: VcsimHandle, req: { datastores?: string[]; vm?: string; count?: string }): Promise<{ datastores: Record<string, PyDatastore | null>; disks?: PyDisk[]; count?: number }> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [VERIFY], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`verify_vsphere.py failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as { datastores: Record<string, PyDatastore | null>; disks?: PyDisk[]; count?: number });
    });
    p.stdin!.end(JSON.stringify({ url: sim.url, username: sim.username, password: sim.password, certFile: sim.certFile, ...req }));
  });
}

// The playbooks the ESXi-release checks run on the lab (`npm run lab -- up --version 5.5|6.7|7.0|8.0`):
// the shipped VMFS3 and VMFS6 studies, and three small ones written into a directory; with what each
// release creates and what `validate` must say of each playbook on each release — written out here so
// the end-to-end file (test/integration/lab-versions.test.ts) and the in-process checks
// (test/unit/cli/lab-versions.test.ts) hold the same expectations.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabVersion } from '../../src/lab/versions.ts';
import { REPO_ROOT } from './cli.ts';
import { quickSettings } from './quick-settings.ts';

export const LAB_RELEASES = ['5.5', '6.7', '7.0', '8.0'] as const satisfies readonly LabVersion[];

// What each release creates (vSphere 6.0 Storage, "Understanding VMFS Datastores": no new VMFS3 from
// 6.0; vSphere 7.0 Storage, "Versions of VMFS Datastores": VMFS6 from 6.5) — written out on purpose.
export const CREATES: Record<LabVersion, number[]> = { '5.5': [3, 5], '6.7': [5, 6], '7.0': [5, 6], '8.0': [5, 6] };

/** Playbooks the acceptance names, on the lab's targets. */
export const SHIPPED = {
  'vmfs3-study': path.join(REPO_ROOT, 'playbooks', 'vmfs-block-size.yaml'),
  'vmfs3-study-shell': path.join(REPO_ROOT, 'playbooks', 'vmfs-block-size-shell.yaml'),
  'vmfs6-study': path.join(REPO_ROOT, 'playbooks', 'vmfs6-block-size.yaml'),
};

const small = (name: string, target: string, datastore: string[], disk: string[]) =>
  [`name: ${name}`, `target: ${target}`, 'matrix:', '  datastore:', ...datastore, '  disk:', ...disk, '  workload:', '    profile: [quick]', 'workloads:', '  quick:', '    iometer: "4k 100% read 100% random"', ...quickSettings(), ''].join('\n');

export interface SmallPlaybooks {
  /** VMFS5 with 8 MB blocks: no release creates it (VMFS5 takes 1 MB only) */
  'vmfs5-8mb': string;
  /** VMFS3, 1 MB blocks, a 300 GB disk: over VMFS3's 256 GiB file cap on 5.5, no VMFS3 at all later */
  'vmfs3-1mb-300gb': string;
  /** VMFS3, 8 MB blocks, 1 GB disk: what a 5.5 host runs */
  'vmfs3-8mb': string;
}

/** Writes the three small playbooks into `dir`; returns their paths. */
export async function writeSmallPlaybooks(dir: string): Promise<SmallPlaybooks> {
  const files = {
    'vmfs5-8mb': small('vmfs5-8mb', 'lab-vcenter', ['    kind: [vmfs5]', '    blockSizeMb: [8]'], ['    format: [thin]', '    sizeGb: [4]']),
    'vmfs3-1mb-300gb': small('vmfs3-300gb', 'lab-vcenter', ['    kind: [vmfs3]', '    blockSizeMb: [1]'], ['    format: [thin]', '    sizeGb: [300]']),
    'vmfs3-8mb': small('vmfs3-8mb', 'lab-vcenter', ['    kind: [vmfs3]', '    blockSizeMb: [8]'], ['    format: [thin]', '    sizeGb: [1]']),
  };
  const out = {} as SmallPlaybooks;
  for (const [name, text] of Object.entries(files) as Array<[keyof SmallPlaybooks, string]>) {
    out[name] = path.join(dir, `${name}.yaml`);
    await fs.writeFile(out[name], text);
  }
  return out;
}

export interface ValidateExpectation {
  what: string;
  file: string;
  ok: boolean;
  /** what the refusal says (besides the file:line:col: matrix.… shape of every line) */
  says?: string;
}

/** What `validate -i <the lab's inventory>` says of each playbook on `version`. */
export function validateExpectations(version: LabVersion, small: SmallPlaybooks): ValidateExpectation[] {
  return [
    { what: 'the VMFS3 study (vSphere)', file: SHIPPED['vmfs3-study'], ok: version === '5.5' },
    { what: 'the VMFS3 study (ESXi shell)', file: SHIPPED['vmfs3-study-shell'], ok: version === '5.5' },
    { what: 'the VMFS6 study', file: SHIPPED['vmfs6-study'], ok: version !== '5.5' },
    { what: 'vmfs5 × 8 MB', file: small['vmfs5-8mb'], ok: false, says: 'vmfs5 supports 1 MiB blocks' },
    {
      what: 'VMFS3 1 MB × 300 GB disk',
      file: small['vmfs3-1mb-300gb'],
      ok: false,
      says: version === '5.5' ? 'a VMFS3 volume with 1 MiB blocks stores files up to 256 GiB' : `runs ESXi ${version}, which creates vmfs5, vmfs6 only`,
    },
  ];
}

/** Every line of a refusal names the playbook at file:line:col and a matrix axis the release decides. */
export const refusalLine = (file: string): RegExp =>
  new RegExp(`^${file.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: matrix\\.(datastore\\.kind|datastore\\.blockSizeMb|datastore\\.blockSizeKb|disk\\.sizeGb)\\[\\d+\\]: `);

/** The playbooks a `run` with the release stated must refuse before sending anything (vSphere, then the ESXi shell's). */
export function refusedRuns(version: LabVersion, small: SmallPlaybooks): { vsphere: string[]; shell: string[] } {
  return version === '5.5'
    ? { vsphere: [small['vmfs5-8mb'], small['vmfs3-1mb-300gb'], SHIPPED['vmfs6-study']], shell: [] }
    : { vsphere: [SHIPPED['vmfs3-study'], small['vmfs3-1mb-300gb']], shell: [SHIPPED['vmfs3-study-shell']] };
}

/** The playbook a `run` whose inventory states no release refuses once the host has reported it. */
export const refusedByHost = (version: LabVersion): string => (version === '5.5' ? SHIPPED['vmfs6-study'] : SHIPPED['vmfs3-study']);

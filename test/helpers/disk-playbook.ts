// The playbook the guest-disk tests run (vSphere and the ESXi shell alike): one disk of `format` on
// an existing datastore (1 GB unless it is an RDM), `extra` matrix lines (e.g. a guest.filesystem
// axis), and one short 4k random-write pass on it.
import { quickSettings } from './quick-settings.ts';

export function diskPlaybook(o: { name: string; target: string; format: string; extra?: string[] }): string {
  return [
    `name: ${o.name}`,
    `target: ${o.target}`,
    'matrix:',
    '  datastore:',
    '    kind: [existing]',
    '  disk:',
    `    format: [${o.format}]`,
    ...(o.format.startsWith('rdm') ? [] : ['    sizeGb: [1]']),
    ...(o.extra ?? []),
    '  workload:',
    '    profile: [quick]',
    'workloads:',
    '  quick:',
    '    iometer: "4k 0% read 100% random"',
    ...quickSettings({ direct: true }),
    '',
  ].join('\n');
}

// A playbook whose targets mix a bare disk over SSH (provisions nothing) with a vSphere VM: an axis
// applies to the targets whose provider takes it; the bare target runs once without those axes
// (lackingAxes: once, the default: the reference row) or once per value of them (perValue);
// include/exclude may name `target`. One target that takes none of an axis is still refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFor } from '../../../src/app/config.ts';
import { writeLabInventory } from '../../helpers/lab-inventory-file.ts';

let dir: string;
let lab: Awaited<ReturnType<typeof writeLabInventory>>;

const study = (extra: string[] = [], target = '[lab-guest, lab-vcenter]'): string => {
  const file = path.join(dir, `pb-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(
    file,
    [
      'name: bare-vmdk-rdm',
      `target: ${target}`,
      'matrix:',
      '  datastore:',
      '    kind: [existing]',
      '  disk:',
      '    format: [thin, rdm-physical]',
      '    sizeGb: [1]',
      '  workload:',
      '    profile: [q]',
      'workloads:',
      '  q: { iometer: "4k 100% read 100% random" }',
      ...extra,
      '',
    ].join('\n'),
  );
  return file;
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-mixed-'));
  lab = await writeLabInventory();
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await lab.remove();
});

const rows = (file: string, set: string[] = []) => planFor(file, lab.inventory, 'r1', set, process.env).permutations.map((p) => p.axes);

describe('mixed targets in one playbook', () => {
  it('lackingAxes: once (default): the bare target runs once, without the axes its provider lacks; the VM runs every format', () => {
    expect(rows(study())).toEqual([
      { target: 'lab-guest', 'workload.profile': 'q' },
      { target: 'lab-vcenter', 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1, 'workload.profile': 'q' },
      { target: 'lab-vcenter', 'datastore.kind': 'existing', 'disk.format': 'rdm-physical', 'disk.sizeGb': 1, 'workload.profile': 'q' },
    ]);
  });

  it('lackingAxes: perValue: the bare target runs once per value of the axes it lacks, each labelled with them', () => {
    const r = rows(study(['lackingAxes: perValue']));
    expect(r.filter((a) => a.target === 'lab-guest').map((a) => a['disk.format'])).toEqual(['thin', 'rdm-physical']);
    expect(r).toHaveLength(4);
  });

  it('include/exclude name a target', () => {
    const r = rows(study(['exclude:', '  - { target: lab-vcenter, disk.format: rdm-physical }']));
    expect(r.map((a) => `${String(a.target)}/${String(a['disk.format'] ?? '-')}`)).toEqual(['lab-guest/-', 'lab-vcenter/thin']);
  });

  it('one ssh target with a disk axis is still refused at the axis: nothing in the playbook takes it', () => {
    expect(() => planFor(study([], 'lab-guest'), lab.inventory, 'r1', [], process.env)).toThrow(/target "lab-guest" \(ssh\) does not use datastore\.kind: ssh targets provision nothing/);
    expect(() => planFor(study([], '[lab-guest, lab-local]'), lab.inventory, 'r1', [], process.env)).toThrow(/does not use disk\.format/);
  });

  it('lackingAxes takes once or perValue only, at its line', () => {
    expect(() => planFor(study(['lackingAxes: twice']), lab.inventory, 'r1', [], process.env)).toThrow(/:13:14: lackingAxes: expected one of once, perValue; got "twice"/);
  });
});

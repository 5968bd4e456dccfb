// `--set matrix.<section>.<axis>=[…]`: one's own playbook on the lab without editing a copy (a 50 GB
// disk on the lab's small LUN). The values are checked as the file's would be, each problem at the
// --set argument; the plan records the set and a resume with another one is refused.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResumeMismatch } from '../../../src/errors.ts';
import { checkResumeOverrides } from '../../../src/app/run/resume-checks.ts';
import { planFor } from '../../../src/app/config.ts';
import { setProblems } from '../../helpers/config-errors.ts';
import { writeLabInventory } from '../../helpers/lab-inventory-file.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tmp = useTempDir('ss-setm-', { per: 'file' });
let pb: string;
let lab: Awaited<ReturnType<typeof writeLabInventory>>;

beforeAll(async () => {
  pb = path.join(tmp(), 'pb.yaml');
  fs.writeFileSync(
    pb,
    ['name: own-study', 'target: lab-vcenter', 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin, eagerzeroedthick]', '    sizeGb: [50]', '  workload:', '    profile: [cdm8-default]', 'baseline: { disk.format: thin }', ''].join('\n'),
  );
  lab = await writeLabInventory();
});
afterAll(async () => {
  await lab.remove();
});

const problems = (set: string[]): string => setProblems(pb, set);

describe('--set matrix.<section>.<axis>', () => {
  it("replaces the axis's values in the plan, and the plan records the argument", () => {
    const plan = planFor(pb, lab.inventory, 'r1', ['matrix.disk.sizeGb=[16]'], process.env);
    expect(new Set(plan.permutations.map((p) => p.axes['disk.sizeGb']))).toEqual(new Set([16]));
    expect(plan.permutations).toHaveLength(2);
    expect(plan.overrides).toEqual(['matrix.disk.sizeGb=[16]']);
    // one value is a list of one
    expect(planFor(pb, lab.inventory, 'r1', ['matrix.disk.sizeGb=8'], process.env).permutations.map((p) => p.axes['disk.sizeGb'])).toEqual([8, 8]);
    // several values: more permutations
    expect(planFor(pb, lab.inventory, 'r1', ['matrix.disk.sizeGb=[1, 2]'], process.env).permutations).toHaveLength(4);
  });

  it('checked as the file is: schema, allowed values and the target\'s provider, each at its --set argument', () => {
    expect(problems(['matrix.disk.sizeGb=[-1]'])).toMatch(/^--set matrix\.disk\.sizeGb=\[-1\]: matrix\.disk\.sizeGb\[0\]: /);
    expect(problems(['matrix.disk.format=[thick]'])).toMatch(/^--set matrix\.disk\.format=\[thick\]: matrix\.disk\.format\[0\]: expected one of thin, /);
    expect(problems(['matrix.disk.sizeGB=[16]'])).toMatch(/^--set matrix\.disk\.sizeGB=\[16\]: matrix\.disk\.sizeGB: unknown key "sizeGB"; did you mean "sizeGb"\?/);
    expect(problems(['matrix.disk.sizeGb=[]'])).toMatch(/^--set matrix\.disk\.sizeGb=\[\]: matrix\.disk\.sizeGb: an axis needs at least one value/);
    expect(problems(['matrix.volume.sizeGb=[1000]'])).toMatch(/^--set matrix\.volume\.sizeGb=\[1000\]: matrix\.volume\.sizeGb: the playbook's matrix has no volume section \(sections: datastore, disk, workload\)/);
    // a baseline the new values drop: said at the baseline, naming the values now
    expect(problems(['matrix.disk.format=[eagerzeroedthick]'])).toMatch(/pb\.yaml:11:\d+: baseline\.disk\.format: "thin" is not a value of the axis disk\.format \(values: eagerzeroedthick\)/);
    // the target's provider refuses a value it does not take: at the argument too
    expect(() => planFor(pb, lab.inventory, 'r1', ['matrix.disk.format=[thin, vhdx-fixed]'], process.env)).toThrow(/--set matrix\.disk\.format=\[thin, vhdx-fixed\]: .*target "lab-vcenter" \(vsphere\) supports disk\.format/);
  });

  it('a resume with another matrix value is refused; the same one resumes', () => {
    const plan = planFor(pb, lab.inventory, 'r1', ['matrix.disk.sizeGb=[16]'], process.env);
    expect(() => checkResumeOverrides(plan, ['matrix.disk.sizeGb=[8]'])).toThrow(ResumeMismatch);
    expect(checkResumeOverrides(plan, ['matrix.disk.sizeGb=[ 16 ]']).map((o) => o.text)).toEqual(['matrix.disk.sizeGb=[16]']);
  });
});

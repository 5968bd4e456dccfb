// `--set key=value` overrides a playbook value before validation: the same schema and allowed values
// as in the file, problems reported at the argument (not a line), the set recorded in the plan and
// compared on resume.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../../src/config/index.ts';
import { parseSetArguments, sameOverrides } from '../../../src/config/overrides.ts';
import { ResumeMismatch, UsageError } from '../../../src/errors.ts';
import { checkResumeOverrides } from '../../../src/app/run/resume-checks.ts';
import { planFor } from '../../../src/app/config.ts';
import { setProblems } from '../../helpers/config-errors.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tmp = useTempDir('ss-set-', { per: 'file' });
let pb: string;
let inv: string;

beforeAll(() => {
  const dir = tmp();
  pb = path.join(dir, 'pb.yaml');
  inv = path.join(dir, 'inv.yaml');
  fs.writeFileSync(pb, ['name: real-study', 'target: real-host', 'matrix:', '  workload:', '    profile: [cdm8-default]', 'settings:', '  fileSize: 1g', '  runtimeSec: 5', 'repeat: 3', ''].join('\n'));
  fs.writeFileSync(inv, ['targets:', '  real-host: { provider: local, workdir: /var/tmp/real }', '  lab: { provider: local, workdir: /var/tmp/lab }', '  lab-2: { provider: local, workdir: /var/tmp/lab2 }', ''].join('\n'));
});

const problems = (set: string[]): string => setProblems(pb, set);

describe('--set overrides playbook values', () => {
  it('settings, target and repeat: the plan has the lab values and records the arguments', () => {
    const plan = planFor(pb, inv, 'r1', ['settings.fileSize=16m', 'target=lab', 'repeat=1', 'settings.runtimeSec=1'], process.env);
    expect(plan.target).toBe('lab');
    expect(plan.profiles['cdm8-default']).toMatchObject({ fileSizeBytes: 16 * 1024 * 1024, runtimeSec: 1 });
    expect(plan.permutations[0]!.repetitions).toBe(1);
    expect(plan.overrides).toEqual(['settings.fileSize=16m', 'target=lab', 'repeat=1', 'settings.runtimeSec=1']);
    // without --set: the file's values, nothing recorded
    const real = planFor(pb, inv, 'r1', [], process.env);
    expect(real.target).toBe('real-host');
    expect(real.profiles['cdm8-default']!.fileSizeBytes).toBe(1024 ** 3);
    expect(real.overrides).toBeUndefined();
  });

  it('a list of targets: `target` becomes the first axis, as in the file', () => {
    const plan = planFor(pb, inv, 'r1', ['target=[lab, lab-2]'], process.env);
    expect(plan.targets?.map((t) => t.name)).toEqual(['lab', 'lab-2']);
    expect(plan.axes[0]).toEqual({ name: 'target', values: ['lab', 'lab-2'] });
  });

  it('validated like the file: the same schema and allowed values, each problem at its --set argument, not at a line', () => {
    expect(problems(['settings.fileSize=16x'])).toBe('--set settings.fileSize=16x: settings.fileSize: expected a size like 64m, 1g, 1024m or a number of bytes');
    expect(problems(['settings.aggregate=avg'])).toBe('--set settings.aggregate=avg: settings.aggregate: expected one of max, mean, median, last; got "avg"');
    expect(problems(['settings.fileSze=16m'])).toMatch(/^--set settings\.fileSze=16m: settings\.fileSze: unknown key "fileSze"; did you mean "fileSize"\?/);
    expect(problems(['repeat=0', 'settings.runtimeSec=2'])).toMatch(/^--set repeat=0: repeat: /);
    expect(problems(['target=[lab, lab]'])).toBe('--set target=[lab, lab]: target[1]: duplicate axis value "lab" (already at index 0)');
    // a problem in the file itself is still at its line
    fs.writeFileSync(path.join(tmp(), 'bad.yaml'), fs.readFileSync(pb, 'utf8').replace('runtimeSec: 5', 'runtimeSec: 0'));
    expect(() => loadPlaybook(path.join(tmp(), 'bad.yaml'), parseSetArguments(['settings.fileSize=16m']))).toThrow(/bad\.yaml:8:15: settings\.runtimeSec: expected whole seconds/);
    // …unless --set replaces it
    expect(() => loadPlaybook(path.join(tmp(), 'bad.yaml'), parseSetArguments(['settings.runtimeSec=1']))).not.toThrow();
  });

  it('a target not in the inventory: refused at the --set argument', () => {
    expect(() => planFor(pb, inv, 'r1', ['target=lab-3'], process.env)).toThrow('--set target=lab-3: target: no target "lab-3"');
  });

  it('malformed, not settable, given twice, or a mapping: refused naming the argument', () => {
    expect(() => parseSetArguments(['target'])).toThrow(UsageError);
    expect(() => parseSetArguments(['=x'])).toThrow('--set =x: expected key=value');
    // a matrix axis may be set (test/unit/config/set-matrix.test.ts); a whole section may not
    expect(() => parseSetArguments(['matrix.disk=[thin]'])).toThrow('--set matrix.disk=[thin]: "matrix.disk" cannot be set from the command line; expected target, repeat, settings.<name>');
    expect(() => parseSetArguments(['name=x'])).toThrow(/cannot be set/);
    expect(() => parseSetArguments(['repeat=1', 'repeat=2'])).toThrow('--set repeat=2: repeat is already set by --set repeat=1; give each key once');
    expect(() => parseSetArguments(['target={a: 1}'])).toThrow('--set target={a: 1}: expected a value or a [list], not a mapping');
    expect(() => parseSetArguments(['target=[a'])).toThrow(/--set target=\[a: the value is not a plain YAML value/);
  });

  it('what a file refuses (a custom tag, a YAML 1.1 tag, an alias) is refused in a --set value too, as a usage error naming it', () => {
    const refused = (arg: string): string => {
      try {
        parseSetArguments([arg]);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refused('target=*a')).toBe('--set target=*a: the value is not a plain YAML value: alias *a has no anchor &a before it');
    expect(refused('settings.fileSize=!custom 16m')).toBe('--set settings.fileSize=!custom 16m: the value is not a plain YAML value: Unresolved tag: !custom');
    expect(refused('target=!!binary aGVsbG8=')).toBe('--set target=!!binary aGVsbG8=: the value is not a plain YAML value: the tag !!binary is not supported; write a plain string without the tag');
    expect(refused('target=[!!set {a}]')).toMatch(/the tag !!set is not supported/);
    expect(refused('target=&a lab')).toMatch(/^--set target=&a lab: .*anchors and aliases \(&a\) are not supported in --set/);
    expect(refused('target=[&a lab, *a]')).toMatch(/anchors and aliases/);
    // the same value in a file: refused there as well (the check both share)
    const file = path.join(tmp(), 'tagged.yaml');
    fs.writeFileSync(file, fs.readFileSync(pb, 'utf8').replace('fileSize: 1g', 'fileSize: !custom 16m'));
    expect(() => loadPlaybook(file)).toThrow(/Unresolved tag: !custom/);
    // plain values, and the core tags a file accepts, still go through
    expect(parseSetArguments(['target=!!str lab', 'settings.fileSize=16m', 'repeat=!!int 2']).map((o) => o.value)).toEqual(['lab', '16m', 2]);
  });

  it('resume: the run\'s own set (any order or quoting) is fine, another one is refused naming both; none given uses the run\'s', () => {
    const plan = { overrides: ['settings.fileSize=16m', 'target=lab'] };
    expect(checkResumeOverrides(plan, undefined).map((o) => o.text)).toEqual(plan.overrides);
    expect(checkResumeOverrides(plan, ['target=lab', 'settings.fileSize="16m"']).map((o) => o.text)).toEqual(plan.overrides);
    expect(() => checkResumeOverrides(plan, ['settings.fileSize=32m', 'target=lab'])).toThrow(ResumeMismatch);
    expect(() => checkResumeOverrides(plan, ['target=lab'])).toThrow('run --resume: --set target=lab differs from what this run started with (--set settings.fileSize=16m --set target=lab)');
    expect(() => checkResumeOverrides({}, ['target=lab'])).toThrow('differs from what this run started with (no --set)');
    expect(sameOverrides(parseSetArguments(['repeat=3']), parseSetArguments(['repeat=3.0']))).toBe(true);
  });
});

// validate, plan and `run --dry-run` agree, through the CLI as a user runs them: every shipped
// playbook on the lab target it names is ok for validate, and `run --dry-run --json` prints exactly
// the calls of the plan `plan` builds; a playbook the planners refuse is refused by all three
// commands with the same diagnostics (exit 2), before anything is planned or sent.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFor } from '../../src/app/config.ts';
import { dryRunLines } from '../../src/app/run/dry-run.ts';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { labVersionOf, writeLabInventory } from '../helpers/lab-inventory-file.ts';

// the lab as 8.0 (its default) and as 5.5, which the VMFS3 studies say in their first lines they need
let lab: Awaited<ReturnType<typeof writeLabInventory>>;
let lab55: Awaited<ReturnType<typeof writeLabInventory>>;
beforeAll(async () => {
  lab = await writeLabInventory();
  lab55 = await writeLabInventory('5.5');
});
afterAll(async () => {
  await lab?.remove();
  await lab55?.remove();
});

/** owned names carry the run id, which differs per invocation */
const normalized = (lines: string[]) => lines.map((l) => l.replaceAll(/ss-r[0-9a-z]+-p/g, 'ss-RUN-p'));

describe('shipped playbooks on their lab targets', () => {
  const files = fs.readdirSync('playbooks').filter((f) => f.endsWith('.yaml'));
  it.each(files)('%s: validate ok; run --dry-run prints the calls of the plan', async (file) => {
    const pb = path.join('playbooks', file);
    const { inventory } = labVersionOf(fs.readFileSync(pb, 'utf8')) === '5.5' ? lab55 : lab;
    const [validate, dry] = await Promise.all([runCli(['validate', pb, '-i', inventory]), runCli(['run', pb, '-i', inventory, '--dry-run', '--json'])]);
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    const expected = normalized(dryRunLines(planFor(pb, inventory, 'rplan0000', [], process.env)));
    expect(normalized(dry.stdout.trimEnd().split('\n').filter(Boolean))).toEqual(expected);
  });
});

describe('what a planner refuses, all three commands refuse alike', () => {
  const FIX = 'test/fixtures/config';
  it.each(['pb-vmfs5-block-mb.yaml', 'pb-controller-esxi.yaml'])('%s: validate, plan and run --dry-run exit 2 with the same diagnostics', async (name) => {
    const pb = `${FIX}/${name}`;
    const inv = `${FIX}/inv-providers.yaml`;
    const env = { HV_GUEST_PASSWORD: 'x4x-secret' };
    const [validate, plan, dry] = await Promise.all([runCli(['validate', pb, '-i', inv], { env }), runCli(['plan', pb, '-i', inv], { env }), runCli(['run', pb, '-i', inv, '--dry-run'], { env })]);
    for (const r of [validate, plan, dry]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    expect(validate.stderr).toMatch(new RegExp(`^${pb}:\\d+:\\d+: matrix\\.`));
    expect(plan.stderr).toBe(validate.stderr);
    expect(dry.stderr).toBe(validate.stderr);
  });
});

// validate, plan and run cannot disagree: `validate` dry-runs the same planners `plan` and `run`
// use. Every shipped playbook validates and plans on the lab target it names, with no two
// permutations building the same configuration; and over every single-permutation combination of
// each provider's axes on its lab target, validate says ok only for what the plan builds, with VMFS
// block sizes as the API reference documents them (HostVmfsSpec `blockSize`).
import { moduleOf, PROVIDERS } from '../../../src/providers/index.ts';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook, type LoadedInventory } from '../../../src/config/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../src/plan/check.ts';
import { expandPlaybook } from '../../../src/plan/plan.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { composeTargets, planRun } from '../../../src/app/compose.ts';
import { planFor } from '../../../src/app/config.ts';
import { labVersionOf, writeLabInventory } from '../../helpers/lab-inventory-file.ts';
import { stepArgumentsProblem } from '../../../src/providers/index.ts';

// the lab as 8.0 (its default) and as 5.5, which the VMFS3 studies say in their first lines they need
let lab: Awaited<ReturnType<typeof writeLabInventory>>;
let lab55: Awaited<ReturnType<typeof writeLabInventory>>;
let inv: LoadedInventory;
let inv55: LoadedInventory;
beforeAll(async () => {
  lab = await writeLabInventory();
  lab55 = await writeLabInventory('5.5');
  inv = loadInventory(lab.inventory, {});
  inv55 = loadInventory(lab55.inventory, {});
});
afterAll(async () => {
  await lab?.remove();
  await lab55?.remove();
});

/** What each permutation sends, without its owned names (which differ per permutation by design). */
const configurations = (plan: RunPlan) => plan.permutations.map((p) => JSON.stringify(p.steps.filter((s) => s.step !== 'workload')).replaceAll(/ss-r[0-9a-z]+-p[0-9a-f]{12}/g, 'ss-NAME'));

describe('every shipped playbook on the lab target it names', () => {
  const files = fs.readdirSync('playbooks').filter((f) => f.endsWith('.yaml'));
  it.each(files)('%s: validate ok, plan builds every permutation, each a different configuration', (file) => {
    const pb = loadPlaybook(path.join('playbooks', file));
    const old = labVersionOf(pb.text) === '5.5';
    const targets = checkPlaybookAgainst(pb, old ? inv55 : inv);
    expect([...targets.keys()].every((t) => t.startsWith('lab-'))).toBe(true);
    const plan = planFor(path.join('playbooks', file), (old ? lab55 : lab).inventory, 'rwalk0000', [], process.env);
    // a listed target that lacks an axis runs once without it (lackingAxes)
    const takes = (n: string) => (targets.get(n) ? moduleOf(targets.get(n)!).axes.map((a) => a.name) : undefined);
    expect(plan.permutations).toHaveLength(expandPlaybook(pb.playbook, pb.playbook.target, takes).permutations.length);
    // a target that provisions nothing has one configuration; every other permutation differs in what it sends
    const configs = configurations(plan);
    if (configs.some((c) => c !== '[]')) expect(new Set(configs).size).toBe(configs.length);
    // every step's arguments are what its provider's schema for the operation says (`run --resume` parses them again)
    for (const p of plan.permutations) for (const s of p.steps) expect(stepArgumentsProblem(s), `${p.permutationId} ${s.step}`).toBeNull();
  });
});

// The rule as the vSphere API reference documents HostVmfsSpec (KiB), written out here on purpose:
// the code's table (src/providers/vmfs-block-size.ts) must agree with it, not define it.
const DOCUMENTED_KB: Record<string, number[]> = { vmfs3: [1024, 2048, 4096, 8192], vmfs5: [1024], vmfs6: [1024, 64] };

interface Case {
  target: string;
  matrix: string[];
  /** the VMFS kind and block size in KiB when the case sets one */
  block?: { kind: string; kb: number };
}

function cases(): Case[] {
  const out: Case[] = [];
  const blocks: Array<{ line?: string; kb?: number; mbAxis?: boolean }> = [{}, ...[1, 2, 4, 8].map((mb) => ({ line: `    blockSizeMb: [${mb}]`, kb: mb * 1024, mbAxis: true })), ...[64, 1024].map((kb) => ({ line: `    blockSizeKb: [${kb}]`, kb }))];
  for (const target of ['lab-vcenter', 'lab-esxi']) {
    for (const kind of ['vmfs3', 'vmfs5', 'vmfs6', 'nfs', 'existing']) {
      for (const b of blocks) {
        if (target === 'lab-esxi' && b.line && !b.mbAxis) continue; // no blockSizeKb axis on the ESXi shell: validate refuses the axis itself
        for (const format of ['thin', 'lazyzeroedthick', 'eagerzeroedthick', 'rdm-physical', 'rdm-virtual']) {
          out.push({
            target,
            matrix: ['  datastore:', `    kind: [${kind}]`, ...(b.line ? [b.line] : []), '  disk:', `    format: [${format}]`, '    sizeGb: [4]'],
            ...(b.kb !== undefined ? { block: { kind, kb: b.kb } } : {}),
          });
        }
      }
    }
  }
  for (const volume of [100, 999])
    for (const format of ['vhdx-fixed', 'vhdx-dynamic', 'passthrough'])
      for (const size of [8, 1.5])
        for (const extra of [[], ['    blockSizeBytes: [1048576]'], ['    logicalSectorBytes: [4096]']])
          out.push({ target: 'lab-hyperv', matrix: ['  volume:', `    sizeGb: [${volume}]`, '  disk:', `    format: [${format}]`, `    sizeGb: [${size}]`, ...extra] });
  return out;
}

describe('validate says ok only for what plan builds (every single-permutation combination of each provider\'s axes)', () => {
  it('vSphere, ESXi shell and Hyper-V lab targets', async () => {
    const dir = path.join(lab.dir, 'cases');
    await fsp.mkdir(dir);
    let ok = 0;
    const all = cases();
    for (const [i, c] of all.entries()) {
      const file = path.join(dir, `c${i}.yaml`);
      await fsp.writeFile(file, ['name: case', `target: ${c.target}`, 'matrix:', ...c.matrix, '  workload:', '    profile: [quick]', ''].join('\n'));
      const pb = loadPlaybook(file);
      let validated = true;
      try {
        checkPlaybookAgainst(pb, inv);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        validated = false;
      }
      let planned = true;
      try {
        const plan = planRun(pb.playbook, composeTargets([c.target], inv), 'rcase0000');
        // a built plan's arguments always parse with their operation's schema
        for (const p of plan.permutations) for (const s of p.steps) expect(stepArgumentsProblem(s), `${c.target} ${s.step}: ${JSON.stringify(s.arguments)}`).toBeNull();
      } catch (err) {
        if ((err as Error).name === 'AssertionError') throw err;
        planned = false;
      }
      const what = `${c.target}: ${c.matrix.join(' ')}`;
      // validate never says ok to what plan (and so run) refuses
      if (!planned) expect(validated, what).toBe(false);
      if (validated) {
        expect(planned, what).toBe(true);
        if (c.block && c.block.kind.startsWith('vmfs')) expect(DOCUMENTED_KB[c.block.kind], what).toContain(c.block.kb);
        ok++;
      }
    }
    // the rule is not vacuous: some combinations pass, some are refused
    expect(ok).toBeGreaterThan(40);
    expect(ok).toBeLessThan(all.length);
  });
});

describe('validate refuses permutations that would measure the same thing (and provision it again)', () => {
  const problems = async (name: string, lines: string[], against: () => LoadedInventory = () => inv): Promise<string[]> => {
    const file = path.join(lab.dir, `${name}.yaml`);
    await fsp.writeFile(file, [...lines, '  workload:', '    profile: [quick]', ''].join('\n'));
    try {
      checkPlaybookAgainst(loadPlaybook(file), against());
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.diagnostics.map((d) => `${path.basename(d.file)}:${d.line}:${d.column}: ${d.message}`);
    }
  };

  it.each(['lab-vcenter', 'lab-esxi'])('%s: an RDM measures its LUN whatever the datastore kind or block size: refused at the value, saying why', async (target) => {
    const kinds = await problems(`rdm-kinds-${target}`, ['name: rdm', `target: ${target}`, 'matrix:', '  datastore:', '    kind: [vmfs5, vmfs6]', '  disk:', '    format: [thin, rdm-physical]', '    sizeGb: [4]']);
    // thin × vmfs5/vmfs6 are two configurations; rdm-physical × vmfs6 measures what rdm-physical × vmfs5 does
    expect(kinds).toEqual([
      `rdm-kinds-${target}.yaml:5:19: target "${target}" (${target === 'lab-esxi' ? 'esxi-shell' : 'vsphere'}) would measure the same thing for datastore.kind=vmfs6, disk.format=rdm-physical, disk.sizeGb=4 as for datastore.kind=vmfs5, disk.format=rdm-physical, disk.sizeGb=4: disk.format rdm-physical measures the LUN itself (the target's rdmDevice) and the datastore only holds its mapping file, so datastore.kind changes nothing it measures (and each VMFS kind formats vmfsDevice again); keep one datastore.kind value for these permutations (exclude the others)`,
    ]);
    // VMFS3 block sizes: on the lab as ESXi 5.5, the release that creates VMFS3
    const blocks = await problems(`rdm-blocks-${target}`, ['name: rdm', `target: ${target}`, 'matrix:', '  datastore:', '    kind: [vmfs3]', '    blockSizeMb: [1, 8]', '  disk:', '    format: [rdm-virtual]'], () => inv55);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatch(new RegExp(`^rdm-blocks-${target}\\.yaml:6:22: .*so datastore\\.blockSizeMb changes nothing it measures`));
  });

  it('lab-esxi: with the RDM repeats excluded, the same matrix validates', async () => {
    const pb = ['name: rdm', 'target: lab-esxi', 'matrix:', '  datastore:', '    kind: [vmfs5, vmfs6]', '  disk:', '    format: [thin, rdm-physical, rdm-virtual]', '    sizeGb: [4]', '  workload:', '    profile: [quick]', 'exclude:', '  - { datastore.kind: vmfs6, disk.format: rdm-physical }', '  - { datastore.kind: vmfs6, disk.format: rdm-virtual }', ''];
    const file = path.join(lab.dir, 'rdm-ok.yaml');
    await fsp.writeFile(file, pb.join('\n'));
    expect([...checkPlaybookAgainst(loadPlaybook(file), inv).keys()]).toEqual(['lab-esxi']);
  });

  it("hyperv: both a new VHDX and a pass-through disk are found in the guest (a guest-disk step after the attach); an inventory that still names guestTestPath is refused at that line", async () => {
    const hvInventory = (extra: string[]) =>
      ['sshHosts:', '  hv:', '    host: 127.0.0.1', '    user: admin', '    password: ${env:SS_TEST_HV_PW}', '    knownHostsFile: ./known_hosts', 'targets:', '  hv-pt:', '    provider: hyperv', '    sshHost: hv', '    vmName: bench-vm', '    volumes:', `      "100": 'D:\\bench'`, '    allowedDisks:', '      - { number: 2, serialNumber: "S4EWNX0R123456" }', '    passthroughDisk: 2', '    guestCredential:', '      username: admin', '      password: ${env:SS_TEST_HV_PW}', ...extra, ''].join('\n');
    const pbFile = path.join(lab.dir, 'pt.yaml');
    await fsp.writeFile(pbFile, ['name: pt', 'target: hv-pt', 'matrix:', '  volume:', '    sizeGb: [100]', '  disk:', '    format: [vhdx-fixed, passthrough]', '    sizeGb: [8]', '  workload:', '    profile: [quick]', ''].join('\n'));
    const invFile = path.join(lab.dir, 'pt-inventory.yaml');
    const check = async (extra: string[]): Promise<string[]> => {
      await fsp.writeFile(invFile, hvInventory(extra));
      try {
        checkPlaybookAgainst(loadPlaybook(pbFile), loadInventory(invFile, { SS_TEST_HV_PW: 'not-a-real-password' }));
        return [];
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        return err.diagnostics.map((d) => `${path.basename(d.file)}:${d.line}:${d.column}: ${d.message}`);
      }
    };
    expect(await check([])).toEqual([]);
    for (const old of ['#1', 'T:\\storsweep.dat']) {
      expect(await check([`    guestTestPath: '${old}'`]), old).toEqual([expect.stringMatching(/^pt-inventory\.yaml:20:20: guestTestPath is no longer used: storsweep finds the disk it attached in the guest by its SCSI location \(scsiLocation\) and size/)]);
    }
    const inv = loadInventory((await fsp.writeFile(invFile, hvInventory([])), invFile), { SS_TEST_HV_PW: 'not-a-real-password' });
    const t = inv.inventory.targets['hv-pt']!;
    const planner = PROVIDERS.hyperv.planner(t as never);
    for (const format of ['vhdx-fixed', 'passthrough']) {
      expect(planner({ 'volume.sizeGb': 100, 'disk.format': format, 'disk.sizeGb': 8 }, { prefix: 'ss-r-p' }).map((s) => s.step).at(-1), format).toBe('guest-disk');
    }
  });
});

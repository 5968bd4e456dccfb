// `validate` runs the planners: an axis a target's provider does not read, a value it does not take
// and a combination its planner refuses are each refused at the playbook's file:line:col, with the
// allowed values — before `plan` or `run` could build (or send) anything. Fixtures: test/fixtures/config.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';
import { checkPlaybookAgainst, MAX_PLAN_DIAGNOSTICS } from '../../../src/plan/check.ts';
import { buildPlan } from '../../../src/plan/plan.ts';
import { moduleOf } from '../../../src/providers/index.ts';
import { diagnosticsOf } from '../../helpers/config-errors.ts';

const DIR = 'test/fixtures/config';
const f = (name: string) => path.join(DIR, name);
const ENV = { HV_GUEST_PASSWORD: 'x4x-secret' };
const inventory = () => loadInventory(f('inv-providers.yaml'), ENV);

/** validate's diagnostics (file:line:col lines) for a playbook it must refuse */
const refused = (pbName: string): string[] => diagnosticsOf(() => checkPlaybookAgainst(loadPlaybook(f(pbName)), inventory()));

/** The plan `plan`/`run` build, without validate's checks (what today's main would send). */
function planWithoutValidate(pbName: string) {
  const pb = loadPlaybook(f(pbName)).playbook;
  const target = inventory().inventory.targets[pb.target as string]!;
  return buildPlan(pb, pb.target, { runId: 'r1', provider: target.provider, planSteps: moduleOf(target).planner(target) });
}

const VSPHERE_AXES = 'vsphere targets take datastore.kind, datastore.blockSizeMb, datastore.blockSizeKb, disk.format, disk.controller, disk.sizeGb, disk.policy, guest.filesystem, guest.scheduler, guest.queueDepth, guest.writeCache, guest.writeCacheFlushing, vm.count, vm.clone, workload.profile';
const HYPERV_AXES = 'hyperv targets take volume.sizeGb, disk.format, disk.sizeGb, disk.blockSizeBytes, disk.logicalSectorBytes, disk.physicalSectorBytes, guest.filesystem, guest.writeCache, guest.writeCacheFlushing, vm.count, workload.profile';
const VMFS_RULE = 'VMFS3: 1, 2, 4 or 8 MiB; VMFS5: 1 MiB; VMFS6: 1 MiB, or 64 KiB as datastore.blockSizeKb (which VMFS5/6 also take as 1024)';
const REPEAT = 'each of its values would repeat the same permutation';

describe('an axis the target\'s provider does not read', () => {
  it('disk.controller on vSphere: accepted, and each value plans a different controller (a different ReconfigVM_Task)', () => {
    const plan = planWithoutValidate('pb-controller-vsphere.yaml');
    expect(plan.permutations).toHaveLength(2);
    const stepsOf = (i: number) => JSON.stringify(plan.permutations[i]!.steps).replaceAll(plan.permutations[i]!.permutationId, '');
    expect(stepsOf(0)).not.toBe(stepsOf(1));
    expect(plan.permutations.map((p) => p.steps.find((s) => s.step === 'controller')?.arguments.controller)).toEqual(['pvscsi', 'lsilogic']);
    expect(plan.permutations.map((p) => p.steps.find((s) => s.step === 'disk')?.arguments.controller)).toEqual(['pvscsi', 'lsilogic']);
    expect(() => checkPlaybookAgainst(loadPlaybook(f('pb-controller-vsphere.yaml')), inventory())).not.toThrow();
  });

  it('disk.controller on the ESXi shell: refused (vim-cmd can neither add a controller nor choose its type)', () => {
    const ESXI_AXES = 'esxi-shell targets take datastore.kind, datastore.blockSizeMb, disk.format, disk.sizeGb, guest.filesystem, workload.profile';
    expect(refused('pb-controller-esxi.yaml')).toEqual([
      `${f('pb-controller-esxi.yaml')}:9:5: matrix.disk.controller: target "esx" (esxi-shell) does not use disk.controller: ${ESXI_AXES}; ${REPEAT}`,
    ]);
  });

  it('Hyper-V-only axes on vSphere: volume.sizeGb, the VHDX sector sizes and block size', () => {
    const F = f('pb-hyperv-axes-on-vsphere.yaml');
    expect(refused('pb-hyperv-axes-on-vsphere.yaml')).toEqual([
      `${F}:5:5: matrix.volume.sizeGb: target "vc" (vsphere) does not use volume.sizeGb: ${VSPHERE_AXES}; ${REPEAT}`,
      `${F}:11:5: matrix.disk.logicalSectorBytes: target "vc" (vsphere) does not use disk.logicalSectorBytes: ${VSPHERE_AXES}; ${REPEAT}`,
      `${F}:12:5: matrix.disk.physicalSectorBytes: target "vc" (vsphere) does not use disk.physicalSectorBytes: ${VSPHERE_AXES}; ${REPEAT}`,
      `${F}:13:5: matrix.disk.blockSizeBytes: target "vc" (vsphere) does not use disk.blockSizeBytes: ${VSPHERE_AXES}; ${REPEAT}`,
    ]);
  });

  it('the same on the ESXi shell', () => {
    const F = f('pb-hyperv-axes-on-esxi.yaml');
    const ESXI_AXES = 'esxi-shell targets take datastore.kind, datastore.blockSizeMb, disk.format, disk.sizeGb, guest.filesystem, workload.profile';
    expect(refused('pb-hyperv-axes-on-esxi.yaml')).toEqual(
      [
        [5, 'volume.sizeGb'],
        [11, 'disk.logicalSectorBytes'],
        [12, 'disk.physicalSectorBytes'],
        [13, 'disk.blockSizeBytes'],
      ].map(([line, axis]) => `${F}:${line}:5: matrix.${axis}: target "esx" (esxi-shell) does not use ${axis}: ${ESXI_AXES}; ${REPEAT}`),
    );
  });

  it('vSphere axes and a VMDK format on Hyper-V', () => {
    const F = f('pb-vsphere-axes-on-hyperv.yaml');
    expect(refused('pb-vsphere-axes-on-hyperv.yaml')).toEqual([
      `${F}:7:5: matrix.datastore.kind: target "hv" (hyperv) does not use datastore.kind: ${HYPERV_AXES}; ${REPEAT}`,
      `${F}:8:5: matrix.datastore.blockSizeMb: target "hv" (hyperv) does not use datastore.blockSizeMb: ${HYPERV_AXES}; ${REPEAT}`,
      `${F}:10:26: matrix.disk.format[1]: target "hv" (hyperv) supports disk.format vhdx-fixed, vhdx-dynamic, passthrough; got "thin"`,
    ]);
  });
});

describe('guest.filesystem on Hyper-V', () => {
  it('every value plans: raw adds nothing after the guest-disk step; ntfs-4k, ntfs-64k and refs add a guest-volume step with the file system and allocation unit (a pass-through one names the host disk it destroys)', () => {
    expect(() => checkPlaybookAgainst(loadPlaybook(f('pb-hyperv-filesystem.yaml')), inventory())).not.toThrow();
    const plan = planWithoutValidate('pb-hyperv-filesystem.yaml');
    const volumeStep = (format: string, fs: string) => plan.permutations.find((p) => p.axes['disk.format'] === format && p.axes['guest.filesystem'] === fs)!.steps.find((s) => s.step === 'guest-volume');
    expect(volumeStep('vhdx-fixed', 'raw')).toBeUndefined();
    expect(volumeStep('vhdx-fixed', 'ntfs-64k')).toMatchObject({ operation: 'Format-Volume (guest)', destructive: false, arguments: { filesystem: 'ntfs-64k', fileSystem: 'NTFS', allocationUnitBytes: 65536 } });
    expect(volumeStep('vhdx-fixed', 'refs')!.arguments).toMatchObject({ fileSystem: 'ReFS', allocationUnitBytes: 4096 });
    expect(volumeStep('passthrough', 'ntfs-4k')).toMatchObject({ destructive: true, destroys: [expect.stringMatching(/^disk\d+:/)], arguments: { fileSystem: 'NTFS', allocationUnitBytes: 4096 } });
  });

  it('a value no provider takes: refused at its line with the allowed values', () => {
    const F = f('pb-hyperv-filesystem-bad.yaml');
    expect(() => loadPlaybook(F)).toThrow(ConfigError);
    try {
      loadPlaybook(F);
    } catch (err) {
      expect((err as ConfigError).diagnostics.map(formatDiagnostic)).toEqual([expect.stringMatching(new RegExp(`^${F.replaceAll('.', '\\.')}:10:27: matrix\\.guest\\.filesystem\\[1\\]: .*raw.*ntfs-4k.*ntfs-64k.*refs`))]);
    }
  });
});

describe('an axis the planner needs', () => {
  it('a vSphere playbook without disk.format: at matrix:, with the formats', () => {
    expect(refused('pb-no-disk-axis.yaml')).toEqual([
      `${f('pb-no-disk-axis.yaml')}:3:1: matrix: target "vc" (vsphere) cannot build its permutations: axis disk.format = undefined: expected one of thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual`,
    ]);
  });
});

describe('VMFS version × block size: one rule for the vSphere and ESXi-shell planners', () => {
  it('vmfs5 with blockSizeMb 8 on vSphere: at the 8, with the allowed sizes (the planner refuses it too now)', () => {
    expect(refused('pb-vmfs5-block-mb.yaml')).toEqual([
      `${f('pb-vmfs5-block-mb.yaml')}:4:44: matrix.datastore.blockSizeMb[0]: target "vc" (vsphere) cannot build datastore.kind=vmfs5, datastore.blockSizeMb=8, disk.format=thin, disk.sizeGb=4: datastore.blockSizeMb 8 with datastore.kind vmfs5: vmfs5 supports 1 MiB blocks (${VMFS_RULE})`,
    ]);
    expect(() => planWithoutValidate('pb-vmfs5-block-mb.yaml')).toThrow(/vmfs5 supports 1 MiB blocks/);
  });

  it('blockSizeKb 64 with vmfs5 on vSphere (vmfs6 × 64 is fine): at the 64', () => {
    expect(refused('pb-vmfs5-block-kb.yaml')).toEqual([
      `${f('pb-vmfs5-block-kb.yaml')}:4:51: matrix.datastore.blockSizeKb[0]: target "vc" (vsphere) cannot build datastore.kind=vmfs5, datastore.blockSizeKb=64, disk.format=thin, disk.sizeGb=4: datastore.blockSizeKb 64 with datastore.kind vmfs5: vmfs5 supports 1024 KiB blocks (${VMFS_RULE})`,
    ]);
  });

  it('the ESXi shell says the same of vmfs5 × 8 MB, and takes no NFS kind', () => {
    const F = f('pb-vmfs5-block-esxi.yaml');
    expect(refused('pb-vmfs5-block-esxi.yaml')).toEqual([
      `${F}:4:29: matrix.datastore.kind[1]: target "esx" (esxi-shell) supports datastore.kind vmfs3, vmfs5, vmfs6, existing; got "nfs"`,
      `${F}:4:49: matrix.datastore.blockSizeMb[0]: target "esx" (esxi-shell) cannot build datastore.kind=vmfs5, datastore.blockSizeMb=8, disk.format=thin, disk.sizeGb=4: datastore.blockSizeMb 8 with datastore.kind vmfs5: vmfs5 supports 1 MiB blocks (${VMFS_RULE})`,
    ]);
  });

  it('a block size with an existing datastore, on both providers of a target list', () => {
    const F = f('pb-existing-block-esxi.yaml');
    const at = (col: number, i: number, v: number, target: string) =>
      `${F}:6:${col}: matrix.datastore.blockSizeMb[${i}]: target ${target} cannot build datastore.kind=existing, datastore.blockSizeMb=${v}, disk.format=thin, disk.sizeGb=4: axis datastore.blockSizeMb = ${v}: expected no block size with datastore.kind existing`;
    const esx = '"esx" (esxi-shell)';
    const vc = '"vc" (vsphere)';
    expect(refused('pb-existing-block-esxi.yaml')).toEqual([at(19, 0, 1, esx), at(19, 0, 1, vc), at(22, 1, 2, esx), at(22, 1, 2, vc)]);
  });

  it('a combination from include: at the include entry\'s value', () => {
    expect(refused('pb-include-block.yaml')).toEqual([
      `${f('pb-include-block.yaml')}:13:52: include[0].datastore.blockSizeMb: target "vc" (vsphere) cannot build datastore.kind=vmfs5, datastore.blockSizeMb=4, disk.format=thin, disk.sizeGb=4: datastore.blockSizeMb 4 with datastore.kind vmfs5: vmfs5 supports 1 MiB blocks (${VMFS_RULE})`,
    ]);
  });
});

describe('format × datastore kind, and combinations that build the same thing', () => {
  it('an RDM on NFS: at the format, naming the combination; excluding the combination makes it valid', () => {
    expect(refused('pb-rdm-on-nfs.yaml')).toEqual([
      `${f('pb-rdm-on-nfs.yaml')}:7:20: matrix.disk.format[1]: target "vc" (vsphere) cannot build datastore.kind=nfs, disk.format=rdm-physical, disk.sizeGb=4: axis disk.format = "rdm-physical": expected a flat disk format with datastore.kind nfs (RDM mapping files need VMFS)`,
    ]);
    expect([...checkPlaybookAgainst(loadPlaybook(f('pb-rdm-on-nfs-excluded.yaml')), inventory()).keys()]).toEqual(['vc']);
  });

  it('a Hyper-V pass-through disk has no size: two sizes would measure the same disk twice', () => {
    expect(refused('pb-same-configuration.yaml')).toEqual([
      `${f('pb-same-configuration.yaml')}:8:17: matrix.disk.sizeGb[1]: target "hv" (hyperv) builds the same configuration for volume.sizeGb=100, disk.format=passthrough, disk.sizeGb=8 as for volume.sizeGb=100, disk.format=passthrough, disk.sizeGb=4: disk.sizeGb changes nothing there, so both permutations would measure the same thing; drop the value or exclude the combination`,
    ]);
  });

  it(`stops after ${MAX_PLAN_DIAGNOSTICS} problems per target`, async () => {
    const fs = await import('node:fs/promises');
    const os = await import('node:os');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-axes-'));
    const sizes = Array.from({ length: 500 }, (_, i) => i + 1).join(', ');
    const file = path.join(dir, 'many.yaml');
    await fs.writeFile(file, `name: many\ntarget: hv\nmatrix:\n  disk:\n    format: [passthrough]\n    sizeGb: [${sizes}]\n  workload:\n    profile: [quick]\n`);
    try {
      checkPlaybookAgainst(loadPlaybook(file), inventory());
      expect.unreachable('refused');
    } catch (err) {
      const d = (err as ConfigError).diagnostics;
      expect(d).toHaveLength(MAX_PLAN_DIAGNOSTICS + 1);
      expect(d[0]!.message).toBe(`target "hv" (hyperv): validate stopped after ${MAX_PLAN_DIAGNOSTICS} problems with its permutations; fix these first`);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

// A provider is a list of operations (src/providers/operations.ts): a step's arguments are parsed
// with its operation's schema before apply sees them, so a step changed after planning (a stored
// plan, a ledger row) is refused with what is wrong and nothing is sent to the host.
import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import type { CommandRunner } from '../../../src/ssh/command-runner.ts';
import type { PlannedStep, ProviderContext } from '../../../src/contract/provider.ts';
import type { EsxiShellTargetConfig } from '../../../src/providers/esxi-shell/config.ts';
import { planEsxiShellSteps } from '../../../src/providers/esxi-shell/plan.ts';
import { createEsxiShellProvider } from '../../../src/providers/esxi-shell/provider.ts';
import type { HypervTargetConfig } from '../../../src/providers/hyperv/config.ts';
import { planHypervSteps } from '../../../src/providers/hyperv/plan.ts';
import { createHypervProvider } from '../../../src/providers/hyperv/provider.ts';
import { axisValues, PROVIDERS } from '../../../src/providers/index.ts';
import { checkAxisValue } from '../../../src/config/axis-values.ts';
import type { VsphereStepTarget } from '../../../src/providers/vsphere/config.ts';
import { createVsphereProvider } from '../../../src/providers/vsphere/provider.ts';
import { planVsphereSteps } from '../../../src/providers/vsphere/steps.ts';

const DEV = 'naa.6000c2900000000000000000000000a1';
const RDM = 'naa.6000c2900000000000000000000000b2';
const esxi: EsxiShellTargetConfig = { host: 'esx1', vmid: '1', datastoreVolumePath: '/vmfs/volumes/datastore1', vmfsDevice: DEV, rdmDevice: RDM, allowedDevices: [DEV, RDM] };

/** A host that records every command it is sent (and answers none). */
function recordingRunner(): CommandRunner & { sent: string[] } {
  const sent: string[] = [];
  return { target: 'esx1', sent, run: async (command: string) => (sent.push(command), { command, exitCode: 1, stdout: '', stderr: 'not answered', durationMs: 0 }), close: async () => undefined };
}

const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };

function changed(step: PlannedStep, args: Record<string, unknown>): PlannedStep {
  return { ...step, arguments: { ...step.arguments, ...args } };
}

describe('operations parse their arguments before apply', () => {
  const steps = (axes: Record<string, string | number>) => planEsxiShellSteps(axes, esxi, { base: 'ss-r1-p1' });

  it.each([
    ['a physical RDM step whose mode says virtual', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical' })[0]!, { compatibilityMode: 'virtual' }), /arguments.compatibilityMode: /],
    ['a partition step for a VMFS version that does not exist', () => changed(steps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 })[0]!, { vmfsVersion: 'vmfs7' }), /arguments.vmfsVersion: /],
    ['a disk step of a format vmkfstools does not make', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[0]!, { format: 'lazyzeroedthick' }), /arguments.format: /],
    ['an attach step on bus 9', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[1]!, { bus: 9 }), /arguments.bus: /],
    ['a step with an argument added', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[1]!, { unit: 3 }), /arguments: Unrecognized key: "unit"/],
  ])('esxi-shell refuses %s, sending nothing', async (_what, step, problem) => {
    const runner = recordingRunner();
    const p = createEsxiShellProvider(esxi, runner);
    const err = await p.apply(step(), ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgument);
    expect((err as Error).message).toMatch(problem);
    expect(runner.sent).toEqual([]);
  });

  it('a step of an operation the provider does not have, or a kind it does not create, is refused', async () => {
    const p = createEsxiShellProvider(esxi, recordingRunner());
    const step = steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[0]!;
    await expect(p.apply({ ...step, operation: 'vmkfstools -X' }, ctx)).rejects.toThrow(/esxi-shell provider cannot apply operation "vmkfstools -X"/);
    await expect(p.destroy({ kind: 'vhdx', name: 'x', provider: 'esxi-shell', id: null, data: {} }, ctx)).rejects.toThrow(/does not own objects of kind vhdx/);
  });
});

describe('vSphere operations parse their arguments before connecting', () => {
  const vc: VsphereStepTarget = { host: 'h1', vm: 'vm1', datastore: 'ds1', rdmDevice: RDM, allowedDevices: [RDM] };
  const steps = (axes: Record<string, string | number>) => planVsphereSteps(axes, vc, { prefix: 'ss-r1-p1' });

  it.each([
    ['an RDM step with a compatibility mode vSphere does not have', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical' })[0]!, { compatibilityMode: 'physical' }), /arguments.compatibilityMode: /],
    ['a flat disk step of an unknown format', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[0]!, { format: 'sparse' }), /arguments.format: /],
    ['a disk step on an unknown controller', () => changed(steps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 })[0]!, { controller: 'ide' }), /arguments.controller: /],
  ])('vsphere refuses %s, opening no session', async (_what, step, problem) => {
    let connects = 0;
    const p = createVsphereProvider({ ...vc, vcenter: { url: 'https://vc.invalid/sdk', username: 'u', password: 'p' } }, { connect: () => (connects++, Promise.reject(new Error('no vCenter here'))) });
    const err = await p.apply(step(), ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgument);
    expect((err as Error).message).toMatch(problem);
    expect(connects).toBe(0);
  });
});

describe('Hyper-V operations parse their arguments before sending a cmdlet', () => {
  const hv: HypervTargetConfig = { host: 'hv1', vmName: 'bench-vm', volumes: { '100': 'D:\\bench' }, allowedDisks: [], scsiController: 0, scsiLocation: 1 };
  const steps = planHypervSteps({ 'volume.sizeGb': 100, 'disk.format': 'vhdx-dynamic', 'disk.sizeGb': 4 }, hv, { base: 'ss-r1-p1' });

  it.each([
    ['a guest-disk step at SCSI location 99', () => changed(steps.find((s) => s.step === 'guest-disk')!, { controllerLocation: 99 }), /arguments.controllerLocation: /],
    ['a New-VHD step with a differencing type', () => changed(steps[0]!, { type: 'Differencing' }), /arguments.type: /],
    ['an attach step naming a VM with a quote', () => changed(steps.find((s) => s.step === 'attach')!, { vmName: "bench'vm" }), /arguments.vmName: /],
  ])('hyperv refuses %s, sending nothing', async (_what, step, problem) => {
    const runner = recordingRunner();
    const err = await createHypervProvider(hv, runner).apply(step(), ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgument);
    expect((err as Error).message).toMatch(problem);
    expect(runner.sent).toEqual([]);
  });
});

describe('each provider module lists its operations', () => {
  it('every operation name a provider plans is one of its schemas (registry)', () => {
    for (const m of Object.values(PROVIDERS)) expect(Object.keys(m.operations).length, m.name).toBeGreaterThan(0);
  });
});

describe('the playbook takes the values the providers declare', () => {
  it('every enumerated matrix axis accepts exactly the union of the providers\' values for it', () => {
    const enumerated = new Set(Object.values(PROVIDERS).flatMap((m) => m.axes.filter((a) => a.values).map((a) => a.name)));
    for (const name of enumerated) {
      const values = axisValues(name);
      for (const v of values) expect(checkAxisValue(name, String(v)), `${name} ${String(v)}`).toMatchObject({ ok: true, value: v });
      const other = typeof values[0] === 'number' ? '3' : 'no-such-value';
      expect(checkAxisValue(name, other).ok, `${name} ${other}`).toBe(false);
    }
    expect(axisValues('disk.controller')).toEqual(['pvscsi', 'lsilogic', 'lsisas', 'buslogic', 'nvme']);
    expect(axisValues('datastore.blockSizeMb')).toEqual([1, 2, 4, 8]);
    expect(axisValues('disk.logicalSectorBytes')).toEqual([512, 4096]);
  });
});

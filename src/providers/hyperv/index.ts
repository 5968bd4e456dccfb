// The `hyperv` provider module: a Hyper-V host reached over Windows OpenSSH (PowerShell as
// -EncodedCommand); a VHDX or a pass-through disk per permutation; diskspd runs in the VM.
import { z } from 'zod';
import type { AxisDiagnostic, MeasuredTarget, ProviderModule, TargetDiagnostic } from '../../contract/provider.ts';
import { InternalError } from '../../errors.ts';
import { intIn, matching } from '../../input/fields.ts';
import { secretRefSchema } from '../../input/secrets.ts';
import { connectSsh } from '../../ssh/ssh-runner.ts';
import { diskspdCreateOnlyArgs, runDiskspdFill } from '../../workloads/prefill.ts';
import { runDiskspdTest } from '../../workloads/run-diskspd.ts';
import { DISKSPD_PATH_HINT, DISKSPD_PATH_PATTERN } from '../../workloads/tool-settings.ts';
import { nameField } from '../guest.ts';
import { estimateSteps, schemasOf } from '../operations.ts';
import { HYPERV_OPERATIONS } from './operations/index.ts';
import { HYPERV_AXES } from './axes.ts';
import type { HypervTargetConfig } from './config.ts';
import { HOST_DISK_NAME } from './passthrough.ts';
import { planHypervSteps } from './plan.ts';
import { createHypervProvider, runGuestDiskspd, runGuestDiskspdArgv, stopOwnedInGuest } from './provider.ts';
import { checkHyperv, HYPERV_DISK_NUMBER, HYPERV_EXPECTED, isHypervValue, type HypervValueKind } from './validate.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { toolOwner } from '../../ssh/process-group.ts';
import { describeHypervGuest } from './fingerprint.ts';
import { lazyPreflight } from '../lazy-preflight.ts';
import { hypervSpaceNeeds } from './space-needs.ts';
import { runGuestCalls } from './powershell.ts';
import { checkVolumeRoom } from '../windows-volume-room.ts';
import { VM_COUNT_AXIS } from '../vm-count-axis.ts';
import { hypervVmCountDiagnostics } from './vm-count.ts';
import { vmTemplateSchema } from './vm-template.ts';

const hyperv = (kind: HypervValueKind) => matching((v) => isHypervValue(kind, v), HYPERV_EXPECTED[kind]);
const diskNumber = () => intIn(HYPERV_DISK_NUMBER.min, HYPERV_DISK_NUMBER.max, 'a Get-Disk number');

const targetSchema = z.strictObject({
  provider: z.literal('hyperv'),
  sshHost: nameField().describe('The Hyper-V host (Windows OpenSSH), under sshHosts'),
  vmName: hyperv('vmName'),
  volumes: z.record(z.string(), hyperv('folder')).default({}).describe('volume.sizeGb value → directory on the host for the VHDX, e.g. {"2000": "E:\\\\bench"}'),
  allowedDisks: z
    .array(
      z
        .strictObject({ number: diskNumber(), serialNumber: hyperv('serial').optional(), uniqueId: hyperv('serial').optional() })
        .refine((d) => d.serialNumber !== undefined || d.uniqueId !== undefined, { error: 'needs serialNumber or uniqueId (a disk number alone can change between boots)' }),
    )
    .default([])
    .describe('Host disks a pass-through permutation may take offline, by number AND serial/unique id'),
  passthroughDisk: diskNumber().optional().describe('Get-Disk number used for disk.format passthrough (must be in allowedDisks)'),
  scsiController: intIn(0, 3, 'a SCSI controller number').default(0),
  scsiLocation: intIn(0, 63, 'a SCSI location').default(1).describe('SCSI location the test disk is attached at; in the guest the disk is found there by its LUN and size (Get-Disk), not by a disk number. If a drive already sits there the step is refused: free it or point scsiLocation at a free location'),
  guestCredential: z.strictObject({ username: nameField(), password: secretRefSchema }),
  // Kept only to say, at its line, that it is no longer read (checkInventory)
  guestTestPath: z.string().optional().describe('No longer used: storsweep finds the disk it attached in the guest by location and identity. Remove it'),
  diskspdPath: z.string().regex(DISKSPD_PATH_PATTERN, { error: DISKSPD_PATH_HINT }).default('C:\\Tools\\diskspd.exe'),
  version: z
    .string()
    .regex(/^\d{1,3}\.\d{1,3}\.\d{1,6}$/, { error: 'expected the Windows version as Win32_OperatingSystem reports it, e.g. "10.0.20348"' })
    .optional()
    .describe('The host\'s Windows version as Win32_OperatingSystem.Version reports it, e.g. "10.0.20348" (Windows Server 2022); preflight checks it'),
  vmTemplate: vmTemplateSchema.optional(),
});

export type HypervTarget = z.output<typeof targetSchema>;

/** The target as the planner and the provider see it: no guest credential, no endpoint. */
export function hypervConfigOf(t: HypervTarget): HypervTargetConfig {
  return {
    host: t.sshHost,
    vmName: t.vmName,
    volumes: t.volumes,
    allowedDisks: t.allowedDisks,
    passthroughDisk: t.passthroughDisk,
    scsiController: t.scsiController,
    scsiLocation: t.scsiLocation,
    ...(t.vmTemplate ? { vmTemplate: t.vmTemplate } : {}),
  };
}

export const hypervProvider = {
  name: 'hyperv',
  targetSchema,
  secretFields: [['guestCredential', 'password']],
  axes: HYPERV_AXES,
  // every command is `powershell.exe … -EncodedCommand …`: it runs from cmd.exe or PowerShell alike
  sshHostsOf: (t) => [{ name: t.sshHost, path: ['sshHost'], shell: 'any' }],
  workloadTool: () => 'diskspd',
  checkInventory(t) {
    const out: TargetDiagnostic[] = [];
    if (t.guestTestPath !== undefined) {
      out.push({ path: ['guestTestPath'], message: `guestTestPath is no longer used: storsweep finds the disk it attached in the guest by its SCSI location (scsiLocation) and size, brings it online and measures that disk (or a test file on the volume it formats there: the playbook axis guest.filesystem); a fixed ${JSON.stringify(t.guestTestPath)} could name another disk. Remove guestTestPath (and any --confirm-destroy naming it)` });
    }
    // The planner refuses a pass-through disk that is not allowed (plan.ts): said here, at its line.
    if (t.passthroughDisk !== undefined && !t.allowedDisks.some((d) => d.number === t.passthroughDisk)) {
      out.push({ path: ['passthroughDisk'], message: `disk ${t.passthroughDisk} is not listed in allowedDisks (have: ${t.allowedDisks.map((d) => d.number).join(', ') || 'none'}); a disk is taken offline only when the inventory allows it by number and serial` });
    }
    return out;
  },
  validate(t, values, name) {
    const out: AxisDiagnostic[] = [];
    for (const [i, s] of (values['volume.sizeGb'] ?? []).entries()) {
      if (!t.volumes[String(s)]) out.push({ axis: 'volume.sizeGb', index: i, message: `target "${name}" has no volume for ${s} GB (volumes: ${Object.keys(t.volumes).join(', ') || 'none'})` });
    }
    out.push(...hypervVmCountDiagnostics(t.vmTemplate, values[VM_COUNT_AXIS] ?? [], name));
    return out;
  },
  planner(t) {
    const cfg = hypervConfigOf(t);
    return (axes, names) => planHypervSteps(axes, cfg, { base: names.prefix });
  },
  // one schema per operation (operations/*.ts): plan.ts builds steps through them, `run --resume` parses them again
  operations: schemasOf(HYPERV_OPERATIONS),
  // ~5 s a step; a fixed VHDX is zeroed when created (operations/new-vhd.ts)
  estimateSec: (steps, axes) => estimateSteps(HYPERV_OPERATIONS, steps, axes, 5),
  isTransient: connectionLost,
  describeDestroyed(name) {
    const m = HOST_DISK_NAME.exec(name);
    return m ? `${name} (host disk ${m[1]}, serial/id ${m[2]})` : null;
  },
  sharedResources(t, where) {
    const host = where.machine(t.sshHost);
    // Windows names VMs, folders and serials without regard to case (Get-VM -Name, NTFS paths)
    const folder = (f: string) => f.toLowerCase().replace(/\\+$/, '');
    const disk = t.passthroughDisk === undefined ? undefined : t.allowedDisks.find((d) => d.number === t.passthroughDisk);
    const ids = disk ? [...new Set([disk.serialNumber, disk.uniqueId].filter((v): v is string => v !== undefined))] : [];
    return [
      // the VM holds the guest and its test path: one diskspd at a time inside it
      { key: `hyperv-vm ${host} ${t.vmName.toLowerCase()}`, what: `Hyper-V VM ${t.vmName} on ${host}` },
      ...(t.passthroughDisk !== undefined ? [{ key: `hyperv-disk ${host} ${t.passthroughDisk}`, what: `host disk ${t.passthroughDisk} on ${host}` }] : []),
      ...ids.map((id) => ({ key: `hyperv-disk-id ${host} ${id.toLowerCase()}`, what: `host disk with serial/id ${id} on ${host}` })),
      ...[...new Set(Object.values(t.volumes))].map((f) => ({ key: `hyperv-folder ${host} ${folder(f)}`, what: `volume folder ${f} on ${host}` })),
    ];
  },
  compose(target, ctx) {
    const cfg = hypervConfigOf(target);
    const credentialRef = target.guestCredential.password;
    // revealed at each call, never into the plan or the planner's configuration
    const credential = () => ({ user: target.guestCredential.username, password: ctx.reveal(credentialRef) ?? '' });
    // the disk the guest-disk / guest-volume step found (ProviderContext.measure); the executor refuses a run without one
    const measured = (t: MeasuredTarget | undefined): MeasuredTarget => {
      if (!t) throw new InternalError(`${target.sshHost}/${target.vmName}: the diskspd endpoint was given no disk to measure (the executor refuses this first)`);
      return t;
    };
    // a vm.count member's disk is in its own VM (MeasuredTarget.member), reached over the same host
    // connection by PowerShell Direct into that VM; a runner connectTo made says whose guest it is for
    const memberOf = new WeakMap<object, string>();
    const cfgFor = (vm: string | undefined) => (vm === undefined ? cfg : { ...cfg, vmName: vm });
    return {
      provider: 'hyperv',
      planSteps: (axes, names) => planHypervSteps(axes, cfg, { base: names.prefix }),
      connectProvider: async () => createHypervProvider(cfg, await connectSsh(ctx.ssh(target.sshHost)), { credential }),
      preflight: lazyPreflight(hypervSpaceNeeds, async () => (await import('./preflight.ts')).hypervPreflight(() => connectSsh(ctx.ssh(target.sshHost)), cfg, { ...(target.version !== undefined ? { version: target.version } : {}), credential })),
      workload: {
        tool: 'diskspd',
        measuresAttachedDisk: true,
        connect: () => connectSsh(ctx.ssh(target.sshHost)),
        // the guest's Windows build and diskspd version for the run's fingerprint (fingerprint.ts)
        describe: (runner) => describeHypervGuest(runner, target.vmName, credential(), target.diskspdPath),
        prepare: async (runner, profile, o) => {
          const m = measured(o.target);
          const pass = (argv: string[]) => runGuestDiskspdArgv(runner, cfgFor(m.member?.vm), credential(), argv, { diskspdPath: target.diskspdPath, owner: o.owner });
          // a test file on the volume made for it: refused here, before diskspd's -c, when it does not fit
          await checkVolumeRoom((calls) => runGuestCalls(runner, m.member?.vm ?? target.vmName, credential(), calls), `${runner.target}/${m.member?.vm ?? target.vmName}`, m.path, profile.fileSizeBytes);
          if (profile.prefill !== false) return runDiskspdFill(profile, m.path, pass);
          // not filled: a file target is still created (no measured pass carries -c)
          const create = diskspdCreateOnlyArgs(profile, m.path);
          if (!create) return null;
          await pass(create);
          return { filled: false, bytes: 0, seconds: 0, passes: 1, method: 'diskspd -c (file created, no data written)' };
        },
        runTest: async (runner, test, profile, o) => {
          const m = measured(o.target);
          // every record names the disk measured: the executor adds m.facts
          return runDiskspdTest(runner.target, test, profile, (p) => runGuestDiskspd(runner, cfgFor(m.member?.vm), credential(), test, p, { guestTarget: m.path, diskspdPath: target.diskspdPath, owner: o.owner }), o.onRaw, o.scored);
        },
        connectTo: async (vm) => {
          const runner = await connectSsh(ctx.ssh(target.sshHost));
          memberOf.set(runner, checkHyperv('ownedName', vm, 'member VM name'));
          return runner;
        },
        // a diskspd an earlier process of the run left running in the VM (killed with -9): found by
        // the pidfile named for the run and target that its pass wrote in the guest, and stopped only
        // if the process of that pid is still that diskspd (name and start time: provider.ts stopOwnedInGuest)
        stopLeftovers: (runner, runId, name) => stopOwnedInGuest(runner, cfgFor(memberOf.get(runner)), credential(), toolOwner(runId, name), target.diskspdPath),
      },
      workloadProvider: 'hyperv',
      workloadTarget: { runsOn: `hyperv:${target.sshHost}/${target.vmName}`, testFile: `the disk attached at SCSI ${target.scsiController}:${target.scsiLocation}, found in the guest` },
      insecureEndpoints: [],
    };
  },
} satisfies ProviderModule<'hyperv', HypervTarget>;

// A vSphere target's guest reached through VMware Tools guest operations (`guest.via: tools`),
// wired up: how the guest-disk step and the workload reach it, and the workload endpoint — fio in a
// Linux guest (the same fio endpoint as over SSH, over the tools CommandRunner), diskspd in a Windows
// guest (the CrystalDiskMark profiles as diskspd runs them: workloads/diskspd.ts, prefill.ts and
// run-diskspd.ts, as for a Hyper-V guest). Each connection is a SOAP session of its own, logged out
// when the runner closes; the guest credential is revealed at each call and travels in the SOAP
// body only (no argv, no file, no message).
import type { MeasuredTarget, WorkloadEndpoint } from '../../contract/provider.ts';
import { InternalError, InvalidArgument } from '../../errors.ts';
import type { CommandResult, CommandRunner } from '../../ssh/command-runner.ts';
import { toolOwner } from '../../ssh/process-group.ts';
import { diskspdArgs } from '../../workloads/diskspd.ts';
import { fioEndpoint } from '../../workloads/fio-endpoint.ts';
import { diskspdCreateOnlyArgs, runDiskspdFill } from '../../workloads/prefill.ts';
import { runDiskspdTest } from '../../workloads/run-diskspd.ts';
import { checkDiskspdPath } from '../../workloads/tool-settings.ts';
import { RemoteCommandFailed } from '../../errors.ts';
import type { AttachedDiskGuest } from '../guest.ts';
import { OS_CALL, osFacts, parseDiskspdBanner } from '../hyperv/fingerprint.ts';
import { checkVolumeRoom } from '../windows-volume-room.ts';
import type { WindowsGuestRunner } from '../windows-guest.ts';
import { VsphereClient, type ConnectOptions } from './client.ts';
import { DEFAULT_GUEST_DISKSPD } from './guest-config.ts';
import type { GuestCredential } from './guest-ops.ts';
import { toolsLinuxRunner, toolsWindowsRunner } from './guest-runner.ts';

export interface ToolsGuestWiring {
  /** `tools://<vcenter>/<vm>` */
  label: string;
  /** a Linux guest's command runner (a new SOAP session each) */
  openLinux(): Promise<CommandRunner>;
  /** a Windows guest's runner (a new SOAP session each) */
  openWindows(): Promise<WindowsGuestRunner & CommandRunner>;
  /** the same wiring for another VM of the endpoint (a `vm.count` clone: its guest is a copy, the credential the same) */
  forVm(vm: string): ToolsGuestWiring;
}

export function toolsGuest(endpoint: ConnectOptions, where: { vcenter: string; vm: string; datacenter?: string | undefined }, guest: AttachedDiskGuest, credential: () => GuestCredential): ToolsGuestWiring {
  const label = `tools://${where.vcenter}/${where.vm}`;
  const open = async () => {
    const c = await VsphereClient.connect(endpoint);
    try {
      const dc = where.datacenter ? await c.findDatacenter(where.datacenter) : undefined;
      return { c, ops: c.guestOperations(await c.findVm(where.vm, dc), credential) };
    } catch (err) {
      await c.logout().catch(() => undefined);
      throw err;
    }
  };
  return {
    label,
    forVm: (vm) => toolsGuest(endpoint, { ...where, vm }, guest, credential),
    async openLinux() {
      const { c, ops } = await open();
      return toolsLinuxRunner(ops, { target: label, workdir: guest.workdir, onClose: () => c.logout() });
    },
    async openWindows() {
      const { c, ops } = await open();
      const w = toolsWindowsRunner(ops, { target: label, workdir: guest.workdir, onClose: () => c.logout() });
      // the executor hands the endpoint a CommandRunner; a Windows guest runs no sh command lines
      return {
        ...w,
        run: (command: string): Promise<CommandResult> =>
          Promise.reject(new InternalError(`${label}: a Windows guest runs storage cmdlets and diskspd through guest operations, not the command line ${JSON.stringify(command.slice(0, 80))}`)),
      };
    },
  };
}

function isWindowsGuest(r: CommandRunner): r is CommandRunner & WindowsGuestRunner {
  return typeof (r as Partial<WindowsGuestRunner>).exec === 'function' && typeof (r as Partial<WindowsGuestRunner>).calls === 'function';
}

/** The workload endpoint of a guest reached through guest operations. */
export function toolsWorkloadEndpoint(guest: AttachedDiskGuest, wiring: ToolsGuestWiring): WorkloadEndpoint {
  if (guest.os === 'linux') return fioEndpoint({ workdir: guest.workdir, fioPath: guest.fioPath, ioengine: guest.ioengine, sudo: guest.sudo }, () => wiring.openLinux(), { attachedDisk: true, openVm: (vm) => wiring.forVm(vm).openLinux() });
  const exe = checkDiskspdPath(guest.diskspdPath ?? DEFAULT_GUEST_DISKSPD);
  const measured = (t: MeasuredTarget | undefined): MeasuredTarget => {
    if (!t) throw new InternalError(`${wiring.label}: the diskspd endpoint was given no disk to measure (the executor refuses this first)`);
    return t;
  };
  const windows = (r: CommandRunner): WindowsGuestRunner => {
    if (!isWindowsGuest(r)) throw new InvalidArgument(`${r.target}: not a Windows guest runner`, { name: 'runner', value: r.target });
    return r;
  };
  /** one diskspd run in the guest: its -Rxml output, or RemoteCommandFailed with its exit code and output */
  const pass = (r: CommandRunner, o: { signal: AbortSignal; owner: string; timeoutMs?: number }) => async (argv: string[]): Promise<string> => {
    const x = await windows(r).exec(exe, argv, { signal: o.signal, owner: o.owner, ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}) });
    if (x.exitCode !== 0) throw new RemoteCommandFailed({ host: r.target, what: 'diskspd', command: `${exe} ${argv.join(' ')}`, exitCode: x.exitCode, stderr: x.output, reason: 'exit' });
    return x.output;
  };
  return {
    tool: 'diskspd',
    measuresAttachedDisk: true,
    connect: () => wiring.openWindows(),
    // for the run's fingerprint, as on Hyper-V (hyperv/fingerprint.ts): the guest's Windows edition
    // and build as the guest itself says (Get-CimInstance Win32_OperatingSystem: Caption, Version;
    // VMware Tools' vm.guestFullName, which the provider records, names the edition but no build)
    // and the diskspd version from its usage banner (`diskspd -?`). A fact that cannot be read is left out.
    describe: async (runner): Promise<Record<string, string>> => {
      const w = windows(runner);
      const facts = osFacts(await w.calls([{ ...OS_CALL, select: [...OS_CALL.select] }]).catch(() => []), 'guest');
      const usage = await w.exec(exe, ['-?'], { timeoutMs: 60_000 }).catch(() => null);
      const version = usage ? parseDiskspdBanner(usage.output) : null;
      return version ? { ...facts, 'guest.tool': `diskspd ${version}` } : facts;
    },
    prepare: async (runner, profile, o) => {
      const m = measured(o.target);
      const run = pass(runner, { signal: o.signal, owner: o.owner });
      // a test file on the volume made for it: refused here, before diskspd's -c, when it does not fit
      await checkVolumeRoom((calls) => windows(runner).calls(calls), runner.target, m.path, profile.fileSizeBytes);
      if (profile.prefill !== false) return runDiskspdFill(profile, m.path, run);
      const create = diskspdCreateOnlyArgs(profile, m.path);
      if (!create) return null;
      await run(create);
      return { filled: false, bytes: 0, seconds: 0, passes: 1, method: 'diskspd -c (file created, no data written)' };
    },
    // a diskspd an earlier process of the run left running (killed with -9): found by the pidfile
    // named for the run and target that its pass wrote in the guest's work directory, and stopped
    // only if the process of that pid is still that diskspd (name and start time: guest-runner.ts)
    stopLeftovers: async (runner, runId, target) => {
      const w = windows(runner);
      if (!w.stopOwned) return { pgid: null, outcome: 'unknown', detail: `${runner.target}: this guest runner cannot look for a diskspd left running` };
      return w.stopOwned(toolOwner(runId, target), exe);
    },
    runTest: async (runner, test, profile, o) => {
      const m = measured(o.target);
      // as long as a pass may take: its runtime and warm-up, plus the run's slack
      const timeoutMs = (p: typeof profile) => (p.runtimeSec + p.rampSec + (o.timeoutSlackSec ?? 120)) * 1000;
      return runDiskspdTest(runner.target, test, profile, (p) => pass(runner, { signal: o.signal, owner: o.owner, timeoutMs: timeoutMs(p) })(diskspdArgs(test, p, { target: m.path })), o.onRaw, o.scored);
    },
  };
}

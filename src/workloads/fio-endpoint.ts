// fio on a Linux guest (this machine, or one reached over SSH) as a workload endpoint: the work
// directory made, a test file checked not to be a device, every test run by run-fio.ts.
import path from 'node:path';
import type { MeasuredTarget, WorkloadEndpoint } from '../contract/provider.ts';
import { InternalError, UnsafeOperation } from '../errors.ts';
import type { CommandRunner } from '../ssh/command-runner.ts';
import { stopRunGroups, toolOwner } from '../ssh/process-group.ts';
import { shJoin } from '../ssh/quote.ts';
import { runFioPrefill, runFioTest } from './run-fio.ts';
import { rawTestTarget } from './test-target.ts';

export interface FioGuest {
  workdir: string;
  testFile?: string;
  fioPath: string;
  ioengine: string;
  /** fio goes through `sudo -n` (a non-root login measuring a raw device) */
  sudo?: boolean;
}

export interface FioEndpointOptions {
  /**
   * The target measures the disk its provider attached, found in the guest by a step (ctx.measure):
   * every test gets that step's path, never the inventory's test file.
   */
  attachedDisk?: boolean;
  /** connects to the guest of another VM the run made (a `vm.count` clone: WorkloadEndpoint.connectTo), its work directory the same path */
  openVm?: (vm: string) => Promise<CommandRunner>;
}

/** The test file fio writes: the inventory's testFile, else `<workdir>/storsweep-test.dat`. */
export function fioTestFile(g: Pick<FioGuest, 'workdir' | 'testFile'>): string {
  return g.testFile ?? path.posix.join(g.workdir, 'storsweep-test.dat');
}

/** `open` connects to the guest (a local runner, or SSH); the endpoint reconnects through it after a loss. */
export function fioEndpoint(g: FioGuest, open: () => Promise<CommandRunner>, o: FioEndpointOptions = {}): WorkloadEndpoint {
  const filename = fioTestFile(g);
  /** what this permutation measures: the disk a step found, or (for a target that attaches none) the test file */
  const fileOf = (t: MeasuredTarget | undefined): string => {
    if (o.attachedDisk) {
      if (!t) throw new InternalError('fio endpoint of an attached disk was given no target (the executor refuses this first)');
      return t.path;
    }
    return filename;
  };
  const tool = { fioPath: g.fioPath, ioengine: g.ioengine, controlDir: g.workdir, ...(g.sudo ? { sudo: true } : {}) };
  const connect = async (openGuest: () => Promise<CommandRunner> = open): Promise<CommandRunner> => {
    const runner = await openGuest();
    // (its exit code is not asked: a work directory that cannot be made fails fio's first run, which says why)
    if (runner.makeDirectory) await runner.makeDirectory(g.workdir).catch(() => undefined);
    else await runner.run(shJoin(['mkdir', '-p', '--', g.workdir]));
    // A test file the plan takes for a file must not be a device on the guest: a link to /dev/sdb,
    // or a device node outside /dev, would be overwritten without --confirm-destroy. Checked on
    // the guest itself (`test -b`/`-c` follow links), before anything is measured.
    if (!o.attachedDisk && rawTestTarget(filename, 'fio') === undefined) {
      const device = runner.isDevice ? await runner.isDevice(filename) : (await runner.run(`${shJoin(['test', '-b', filename])} || ${shJoin(['test', '-c', filename])}`)).exitCode === 0;
      if (device) {
        await runner.close().catch(() => undefined);
        throw new UnsafeOperation(
          `${runner.target}: the test file ${filename} is a device on the guest (a block or character device, or a link to one); storsweep writes to a device only when the inventory names it by its path under /dev and --confirm-destroy names it`,
          { operation: 'workload', target: filename },
        );
      }
    }
    return runner;
  };
  // a file test's file (not a device, not the attached disk): preflight checks the room for it
  const fileTest = !o.attachedDisk && rawTestTarget(filename, 'fio') === undefined;
  return {
    tool: 'fio',
    ...(o.attachedDisk ? { measuresAttachedDisk: true } : {}),
    guestNeeds: { ...(g.sudo ? { sudo: true } : {}), ...(fileTest ? { testFile: filename } : {}) },
    connect: () => connect(),
    ...(o.openVm ? { connectTo: (vm: string) => connect(() => o.openVm!(vm)) } : {}),
    describe: async (runner) => {
      const os = (await runner.run('uname -sr')).stdout.trim();
      const fio = (await runner.run(shJoin([g.fioPath, '--version']))).stdout.trim();
      return { 'guest.os': os, 'guest.tool': fio };
    },
    prepare: (runner, profile, { target, ...x }) => (profile.prefill === false ? Promise.resolve(null) : runFioPrefill(runner, profile, { filename: fileOf(target), ...tool, ...x })),
    runTest: (runner, test, profile, { target, ...x }) => runFioTest(runner, test, profile, { filename: fileOf(target), ...tool, ...x }),
    stopLeftovers: (runner, runId, target) => stopRunGroups(runner, g.workdir, toolOwner(runId, target), undefined, Boolean(g.sudo), runId),
  };
}

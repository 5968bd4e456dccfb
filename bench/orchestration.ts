// Orchestration speed on the vcsim harness: N cycles of create+attach a thin disk, create+attach
// an eager-zeroed disk, detach+delete both — storsweep's vSphere client, a pyvmomi script making the
// same calls, and Ansible's vmware_guest_disk, all in one run against one simulator. Also how long
// storsweep takes to notice that a task finished (WaitForUpdatesEx), using the harness's slowTask
// so the task completes well after the call returned.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startVcsim, type VcsimHandle } from '../src/lab/vcsim.ts';
import { VsphereClient, type MoRef } from '../src/providers/vsphere/client.ts';
import { isScsiController } from '../src/providers/vsphere/disks.ts';
import { reconfigVMTask, type RoundTripper } from '../src/providers/vsphere/methods.ts';
import { waitForTask } from '../src/providers/vsphere/task.ts';
import type { TaskInfo } from '../src/providers/vsphere/types.ts';
import { addDiskSpec } from '../test/helpers/vsphere-disk-spec.ts';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure, type Figure } from './lib/figure.ts';
import { median, quantile, sum } from './lib/stats.ts';

const VM = 'DC0_H0_VM0';
const DATASTORE = 'LocalDS_0';
const SIZE_MB = 16;
const ANSIBLE_CONTROLLER: Record<string, string> = {
  VirtualLsiLogicController: 'lsilogic',
  VirtualLsiLogicSASController: 'lsilogicsas',
  ParaVirtualSCSIController: 'paravirtual',
  VirtualBusLogicController: 'buslogic',
};
const HERE = path.join(path.dirname(new URL(import.meta.url).pathname), 'orchestration');

function run(file: string, args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = execFile(file, args, { maxBuffer: 64 << 20, timeout: opts.timeoutMs, env: opts.env ?? process.env, cwd: opts.cwd }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(file)} ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-2000)}\n${stdout.slice(-3000)}`));
      else resolve(stdout);
    });
    p.stdin?.end(opts.stdin ?? '');
  });
}

async function storsweepCycles(client: VsphereClient, vm: MoRef, n: number, prefix: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const thin = await client.createDisk(vm, { datastore: DATASTORE, fileName: `${prefix}-ts-${i}-thin.vmdk`, sizeBytes: SIZE_MB * 2 ** 20, format: 'thin' });
    const eager = await client.createDisk(vm, { datastore: DATASTORE, fileName: `${prefix}-ts-${i}-eager.vmdk`, sizeBytes: SIZE_MB * 2 ** 20, format: 'eagerzeroedthick' });
    await client.detachDisk(vm, thin.key, { deleteFile: true });
    await client.detachDisk(vm, eager.key, { deleteFile: true });
    out.push(performance.now() - t0);
  }
  return out;
}

/** Epoch milliseconds with the sub-millisecond digits a Date would drop. */
function epochMs(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const s = String(v);
  const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(s);
  if (!m) return Date.parse(s);
  return Date.parse(`${m[1]}${m[3]}`) + Number(`0${m[2] ?? '.0'}`) * 1000;
}

const nowEpochMs = () => performance.timeOrigin + performance.now();

/**
 * Task completion (server's completeTime) → waitForTask resolving, for `n` slow reconfigures;
 * also the client's own part: from the WaitForUpdatesEx response that carried the completion
 * arriving to waitForTask resolving (found by wrapping the round-tripper).
 */
async function noticeLatency(sim: VcsimHandle, client: VsphereClient, vm: MoRef, n: number, slowMs: number, prefix: string): Promise<{ endToEnd: number[]; client: number[] }> {
  const out: number[] = [];
  const clientPart: number[] = [];
  let lastWaitReturned = 0;
  const rt: RoundTripper = {
    roundTrip: async (method, thisRef, params) => {
      const r = await client.session.roundTrip(method, thisRef, params);
      if (method === 'WaitForUpdatesEx') lastWaitReturned = nowEpochMs();
      return r;
    },
  };
  for (let i = 0; i < n; i++) {
    const devices = await client.devices(vm);
    const ctrl = devices.filter(isScsiController).sort((a, b) => (a.busNumber ?? 0) - (b.busNumber ?? 0))[0]!;
    const used = new Set(devices.filter((d) => d.controllerKey === ctrl.key).map((d) => d.unitNumber));
    const unit = [...Array(16).keys()].find((u) => u !== 7 && !used.has(u))!;
    await sim.control.slowTask('ReconfigVM_Task', slowMs);
    const task = await reconfigVMTask(
      client.session,
      vm,
      addDiskSpec({ fileName: `[${DATASTORE}] ${prefix}-lat-${i}.vmdk`, controllerKey: ctrl.key, unitNumber: unit, sizeMB: SIZE_MB, diskMode: 'independent_persistent' }),
    );
    const seen: TaskInfo[] = [];
    await waitForTask(rt, client.serviceContent, task, { onProgress: (info) => seen.push(info) });
    const returned = nowEpochMs();
    clientPart.push(returned - lastWaitReturned);
    await sim.control.slowTask('ReconfigVM_Task', 0);
    // completeTime is decoded (types.ts lists it) but not part of the TaskInfo interface.
    const completeTime = (seen.at(-1) as Record<string, unknown> | undefined)?.completeTime;
    if (!completeTime) throw new Error(`task ${task.value} finished without completeTime`);
    out.push(returned - epochMs(completeTime));
    const disk = (await client.devices(vm)).find((d) => d._type === 'VirtualDisk' && d.controllerKey === ctrl.key && d.unitNumber === unit);
    if (disk) await client.detachDisk(vm, disk.key, { deleteFile: true });
  }
  return { endToEnd: out, client: clientPart };
}

export const orchestration: Benchmark = {
  name: 'orchestration',
  title: 'Orchestration on the vcsim harness: storsweep vs pyvmomi vs Ansible',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const n = ctx.quick ? 5 : 50;
    const nAnsible = ctx.quick ? 2 : 10;
    const prefix = `bench${process.pid}`;
    const sim = await startVcsim({ dataDir: path.join(ctx.workDir, 'vcsim') });
    const figures: Figure[] = [];
    const notes: string[] = [];
    try {
      const client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
      try {
        const vm = await client.findVm(VM);
        // Ansible addresses disks by controller type + bus + unit; give it the ones storsweep would pick.
        const devices = await client.devices(vm);
        const ctrl = devices.filter(isScsiController).sort((a, b) => (a.busNumber ?? 0) - (b.busNumber ?? 0))[0];
        const controllerType = ANSIBLE_CONTROLLER[ctrl?._type ?? ''];
        if (!ctrl || !controllerType || ctrl.busNumber !== 0) throw new Error(`${VM} has no SCSI controller on bus 0 that Ansible can address`);
        const usedUnits = new Set(devices.filter((d) => d.controllerKey === ctrl.key).map((d) => d.unitNumber));
        const freeUnits = [...Array(16).keys()].filter((u) => u !== 7 && !usedUnits.has(u));

        // one unmeasured cycle each: connection pools, Python imports, JIT
        await storsweepCycles(client, vm, 1, `${prefix}-warm`);
        ctx.log(`storsweep: ${n} cycles`);
        await sim.control.reset();
        const ts = await storsweepCycles(client, vm, n, prefix);
        const tsCalls = await sim.control.calls();

        ctx.log(`pyvmomi: ${n} cycles`);
        const pyReq = { url: sim.url, username: sim.username, password: sim.password, certFile: sim.certFile, vm: VM, datastore: DATASTORE, sizeMb: SIZE_MB, prefix };
        await run('/usr/bin/python3', [path.join(HERE, 'pyvmomi_cycles.py')], { stdin: JSON.stringify({ ...pyReq, cycles: 1, prefix: `${prefix}-warm` }), timeoutMs: 120_000 });
        await sim.control.reset();
        const py = JSON.parse(await run('/usr/bin/python3', [path.join(HERE, 'pyvmomi_cycles.py')], { stdin: JSON.stringify({ ...pyReq, cycles: n }), timeoutMs: 600_000 })) as { connectMs: number; cycleMs: number[] };
        const pyCalls = await sim.control.calls();

        ctx.log(`ansible: ${nAnsible} cycles`);
        const u = new URL(sim.url);
        const stampsFile = path.join(ctx.workDir, 'ansible-stamps.json');
        const varsFile = path.join(ctx.workDir, 'ansible-vars.json');
        await fs.writeFile(
          varsFile,
          JSON.stringify({ vc_host: u.hostname, vc_port: Number(u.port), vc_user: sim.username, vc_pass: sim.password, datacenter: 'DC0', vm: VM, datastore: DATASTORE, size_mb: SIZE_MB, cycles: nAnsible, controller_type: controllerType, unit_thin: freeUnits[0], unit_eager: freeUnits[1], stamps_file: stampsFile, pyvmomi_script: path.join(HERE, 'pyvmomi_cycles.py'), pyvmomi_req: pyReq }),
        );
        const env = { ...process.env, ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3', ANSIBLE_LOCALHOST_WARNING: 'false', ANSIBLE_INVENTORY_UNPARSED_WARNING: 'false', ANSIBLE_NOCOLOR: '1', ANSIBLE_RETRY_FILES_ENABLED: 'false' };
        await sim.control.reset();
        const a0 = performance.now();
        await run('ansible-playbook', ['-i', 'localhost,', '-e', `@${varsFile}`, path.join(HERE, 'ansible', 'cycles.yml')], { env, cwd: ctx.workDir, timeoutMs: 1_800_000 });
        const ansibleWallMs = performance.now() - a0;
        const ansibleCalls = await sim.control.calls();
        const { stamps, created } = JSON.parse(await fs.readFile(stampsFile, 'utf8')) as { stamps: number[]; created: number[] };
        const an = stamps.slice(1).map((t, i) => (t - stamps[i]!) * 1000);
        // the two vmware_guest_disk creates alone, per cycle
        const anCreate = created.map((t, i) => (t - stamps[i]!) * 1000);

        const mTs = median(ts);
        const mPy = median(py.cycleMs);
        const mAn = median(an);
        figures.push(
          figure('orchestration.storsweep_cycle_median', mTs, 'ms', 'none', null, `p90 ${quantile(ts, 0.9).toFixed(1)} ms over ${n} cycles`),
          figure('orchestration.pyvmomi_cycle_median', mPy, 'ms', 'none', null, `p90 ${quantile(py.cycleMs, 0.9).toFixed(1)} ms over ${n} cycles`),
          figure('orchestration.ansible_cycle_median', mAn, 'ms', 'none', null, `${nAnsible} cycles; ansible-playbook wall ${(ansibleWallMs / 1000).toFixed(1)} s in all`),
          figure('orchestration.ansible_two_creates_median', median(anCreate), 'ms', 'none', null, 'the two vmware_guest_disk create+attach calls of a cycle'),
          bounded('orchestration.storsweep_vs_pyvmomi', mTs / mPy, '', { atMost: 0.5 }, 'storsweep median / pyvmomi median (issue 17: ≤ 0.5)'),
          bounded('orchestration.ansible_vs_storsweep', mAn / mTs, '×', { atLeast: 10 }, 'Ansible median / storsweep median'),
        );
        const perCycle = (calls: Record<string, number>, cycles: number) =>
          `${(sum(Object.values(calls)) / cycles).toFixed(1)} (${Object.entries(calls)
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => `${k} ${(v / cycles).toFixed(1)}`)
            .join(', ')})`;
        notes.push(
          `Each cycle: create+attach a ${SIZE_MB} MiB thin disk, create+attach a ${SIZE_MB} MiB eager-zeroed disk, detach+delete both (fileOperation destroy) on ${VM}, datastore ${DATASTORE}; one vcsim harness process for all three, sequentially (storsweep, then pyvmomi, then Ansible), each after one unmeasured warm-up cycle (Ansible: none).`,
          `SOAP calls per cycle (harness counter) — storsweep: ${perCycle(tsCalls, n)}. Task waits share the session's one PropertyCollector and one WaitForUpdatesEx long poll (issue 17). A detach's task goes into the session's one task ListView with a ModifyListView (answered by the poll already under way; the finished task goes out with the next one), so nothing is created or destroyed per task (18 calls per cycle; 20 before 2026-12-02, when each task wait had a CreateFilter and a DestroyPropertyFilter; docs/decisions.md, "Task waits through one ListView"). A create's task keeps a filter of its own (CreateFilter, DestroyPropertyFilter not waited for) that also carries the VM's config.hardware.device, so the new disk's key comes with the task's success instead of a RetrievePropertiesEx after it (22 calls per cycle before 2026-12-01 21:00). Before 2026-11-30 each task made and destroyed its own collector (26 calls per cycle, ratio 0.757 at low load). A create places its disk from the devices the session last saw after its own disk operation on the VM (the devices its previous create's success reported; after a detach, the read before it minus the removed disk), so no RetrievePropertiesEx goes before a create that follows one: 16 calls and 10 waited-for round trips per cycle (18 and 12 before 2026-12-02 03:00); a stale placement is only refused by the host, and the create then reads and sends once more (docs/decisions.md, "A disk create places from what its session last saw"; not exercised here: nothing else changes the VM). The read before each detach (what is removed is what carries our key now) stays.`,
          `pyvmomi: ${perCycle(pyCalls, n)}; pyvmomi login ${py.connectMs.toFixed(0)} ms, not in the cycle times.`,
          `Ansible: ${perCycle(ansibleCalls, nAnsible)}. Ansible runs only ${nAnsible} cycles (each of its 4 tasks starts a Python process and logs in again, ~seconds per cycle). The creates are vmware_guest_disk calls; the detach+delete tasks are \`command\` tasks running the pyvmomi script's detach (one Python start, login, ReconfigVM_Task), because vmware_guest_disk state=absent fails on the simulator: govmomi 0.24's vcsim does not add a disk placed at an explicit unit number to its controller's \`device\` list, where the module looks for it ("Not found disk"). A real vCenter keeps that list, and the module would then do about the same work. Per-cycle times come from timestamps taken by the playbook between cycles, so ansible-playbook's start-up is excluded. Ansible uses validate_certs: false (it cannot pin a thumbprint); storsweep and pyvmomi verify the certificate.`,
        );

        ctx.log('task-completion-to-notice latency');
        const slowMs = 200;
        const lat = await noticeLatency(sim, client, vm, ctx.quick ? 5 : 30, slowMs, prefix);
        figures.push(
          bounded('orchestration.task_notice_latency_median', median(lat.endToEnd), 'ms', { below: 20 }, `p90 ${quantile(lat.endToEnd, 0.9).toFixed(2)} ms over ${lat.endToEnd.length} tasks; includes the simulator's update batching (below)`),
          bounded('orchestration.task_notice_client_latency_median', median(lat.client), 'ms', { below: 20 }, `p90 ${quantile(lat.client, 0.9).toFixed(2)} ms: from the WaitForUpdatesEx response carrying the completion to waitForTask resolving (decode, dispatch to the wait)`),
        );
        notes.push(
          `Notice latency: ReconfigVM_Task with the harness's slowTask(${slowMs} ms), so the task completes ~${slowMs} ms after the call returned; measured from the task's server-side info.completeTime (same host clock, sub-ms precision) to the moment storsweep's waitForTask resolves (the session's shared PropertyCollector: the task in the session's task view, the one WaitForUpdatesEx long poll). The harness answers a waiting WaitForUpdatesEx as soon as the task's info changes, as vCenter does (src/lab/harness/vcsim/waitupdates.go; govmomi 0.24's vcsim looked for changes on a 250 ms ticker, which made this figure ~57 ms before 2026-12-01). The client-side figure is the part storsweep controls.`,
        );
      } finally {
        await client.logout().catch(() => undefined);
      }
    } finally {
      await sim.stop();
    }
    return { figures, notes };
  },
};

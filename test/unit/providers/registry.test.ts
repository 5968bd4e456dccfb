// The provider registry (src/providers/index.ts): one module per provider, exhaustive; typed step
// arguments parsed again on `run --resume` (a malformed stored plan is refused before anything is
// sent); each provider's transient errors, destroyed-name wording and ssh-host shell needs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkStoredPlan } from '../../../src/app/run/resume-checks.ts';
import { composeTargets, planRun } from '../../../src/app/compose.ts';
import { loadInventory, loadPlaybook, type LoadedInventory } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic, RemoteCommandFailed, UsageError } from '../../../src/errors.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { PROVIDER_NAMES, PROVIDERS, providerModule, stepArgumentsProblem } from '../../../src/providers/index.ts';
import { TaskFailed, VsphereFault } from '../../../src/providers/vsphere/fault.ts';
import { writeLabInventory } from '../../helpers/lab-inventory-file.ts';

let lab: Awaited<ReturnType<typeof writeLabInventory>>;
let inv: LoadedInventory;
let tmp: string;
beforeAll(async () => {
  lab = await writeLabInventory();
  inv = loadInventory(lab.inventory, {});
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-registry-'));
});
afterAll(async () => {
  await lab?.remove();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the registry', () => {
  it('lists every provider once, each module under its own name with a target schema for that name', () => {
    // the shipped ones, in this order; a provider added in its own folder comes after them
    expect(PROVIDER_NAMES.slice(0, 5)).toEqual(['local', 'ssh', 'vsphere', 'esxi-shell', 'hyperv']);
    expect(PROVIDER_NAMES).toEqual(Object.keys(PROVIDERS));
    for (const [key, m] of Object.entries(PROVIDERS)) {
      expect(m.name).toBe(key);
      expect(m.targetSchema.shape.provider.value).toBe(key);
    }
    expect(() => providerModule('proxmox' as never)).toThrow(UsageError);
  });
});

/** The plan of a shipped playbook on the lab, as `run` stores it (JSON). */
function storedPlan(file: string): RunPlan {
  const pb = loadPlaybook(file);
  const names = typeof pb.playbook.target === 'string' ? [pb.playbook.target] : pb.playbook.target;
  return JSON.parse(JSON.stringify(planRun(pb.playbook, composeTargets(names, inv), 'rstored00'))) as RunPlan;
}

describe('typed step arguments', () => {
  it('a stored plan parses again; one with a changed, missing or extra argument, an unknown operation or provider is refused with what is wrong', () => {
    const plan = storedPlan('playbooks/vmfs6-block-size.yaml');
    expect(() => checkStoredPlan(plan, '/runs/x')).not.toThrow();
    const disk = plan.permutations[0]!.steps.find((s) => s.step === 'disk')!;
    expect(disk.operation).toBe('ReconfigVM_Task');
    const refusal = (mutate: (args: Record<string, unknown>) => void, step = disk): string => {
      const copy = structuredClone(plan);
      const s = copy.permutations[0]!.steps.find((x) => x.step === step.step)!;
      mutate(s.arguments);
      try {
        checkStoredPlan(copy, '/runs/x');
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal((a) => (a.sizeGb = '4'))).toMatch(/^\/runs\/x: the stored plan is not one this storsweep \(.+\) can run: p[0-9a-f]{12} step "disk" \(vsphere "ReconfigVM_Task"\): arguments.sizeGb: .*number.*; nothing was sent/);
    expect(refusal((a) => delete a.datastore)).toMatch(/arguments.datastore: /);
    expect(refusal((a) => (a.busNumber = 1))).toMatch(/arguments: Unrecognized key: "busNumber"/);
    expect(refusal((a) => (a.controller = 'ide'))).toMatch(/arguments.controller: /);
    const ds = plan.permutations[0]!.steps.find((s) => s.step === 'datastore')!;
    expect(refusal((a) => (a.device = '/dev/sda'), ds)).toMatch(/arguments.device: expected a canonical device name/);
    expect(stepArgumentsProblem({ ...disk, operation: 'Destroy_Task' })).toBe(
      // each name quoted: operation names hold commas ("guest: find disk by WWN, partition, mkfs, mount")
      'vsphere has no operation "Destroy_Task" (it has "CreateVmfsDatastore", "CreateNasDatastore", "CreateSnapshot_Task", "CloneVM_Task", "ReconfigVM_Task", "guest: find disk by WWN", "guest: find disk by WWN, partition, mkfs, mount", "guest: find disk by WWN (Get-Disk), Set-Disk online", "guest: find disk by WWN (Get-Disk), Set-Disk online, Initialize-Disk GPT, New-Partition, Format-Volume", "guest: set I/O scheduler and queue depth (sysfs)", "guest: set the disk write cache policy (IOCTL_DISK_SET_CACHE_INFORMATION, IOCTL_DISK_SET_CACHE_SETTING)", "fio", "diskspd")',
    );
    expect(stepArgumentsProblem({ ...disk, provider: 'proxmox' as never })).toMatch(/provider "proxmox" is not one this storsweep knows/);
  });

  it('the workload step and the Hyper-V steps of the shipped playbooks parse; a Hyper-V step with a wrong type does not', () => {
    for (const file of ['playbooks/hyperv-volume-size.yaml', 'playbooks/disk-format.yaml', 'playbooks/quickstart.yaml']) {
      const plan = storedPlan(file);
      expect(() => checkStoredPlan(plan, 'r')).not.toThrow();
      expect(plan.permutations.flatMap((p) => p.steps).some((s) => s.step === 'workload')).toBe(true);
    }
    const hv = storedPlan('playbooks/hyperv-volume-size.yaml');
    const vhd = hv.permutations[0]!.steps.find((s) => s.operation === 'New-VHD')!;
    expect(stepArgumentsProblem({ ...vhd, arguments: { ...vhd.arguments, type: 'Differencing' } })).toMatch(/arguments.type: /);
    const workload = hv.permutations[0]!.steps.find((s) => s.step === 'workload')!;
    expect(stepArgumentsProblem({ ...workload, arguments: { ...workload.arguments, repetitions: 0 } })).toMatch(/arguments.repetitions: /);
  });
});

describe('what each provider says about its own errors and names', () => {
  const fault = (name: string) => new VsphereFault(name, `x: ${name}`, { method: 'CreateVmfsDatastore', host: 'vc', detail: {} });
  const lost = new RemoteCommandFailed({ host: 'h', command: 'c', exitCode: null, stderr: '', reason: 'connection' });
  const exited = new RemoteCommandFailed({ host: 'h', command: 'c', exitCode: 1, stderr: '', reason: 'exit' });
  const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

  it('isTransient: a task that ended busy is worth a step retry on vSphere only; a lost connection on the SSH providers; a refusal or a failed command nowhere', () => {
    const task = (name: string) => new TaskFailed(name, `task failed: ${name}`, { task: 'task-1', taskName: 'ReconfigVM_Task', entity: 'vm-1', detail: {} });
    expect(PROVIDERS.vsphere.isTransient(task('TaskInProgress'))).toBe(true);
    expect(PROVIDERS.vsphere.isTransient(task('FileLocked'))).toBe(true);
    expect(PROVIDERS.vsphere.isTransient(task('InvalidDatastore'))).toBe(false);
    // a SOAP busy fault is replayed by the round-tripper itself (vsphere/retrying.ts), never twice
    expect(PROVIDERS.vsphere.isTransient(fault('TaskInProgress'))).toBe(false);
    expect(PROVIDERS.vsphere.isTransient(fault('InvalidLogin'))).toBe(false);
    for (const m of [PROVIDERS.local, PROVIDERS.ssh, PROVIDERS['esxi-shell'], PROVIDERS.hyperv]) {
      expect(m.isTransient(lost), m.name).toBe(true);
      expect(m.isTransient(reset), m.name).toBe(true);
      expect(m.isTransient(task('TaskInProgress')), m.name).toBe(false);
    }
    for (const m of Object.values(PROVIDERS)) {
      expect(m.isTransient(exited), m.name).toBe(false);
      expect(m.isTransient(new Error('boom')), m.name).toBe(false);
    }
  });

  it('describeDestroyed: a Hyper-V host disk in words; a LUN or a guest device is no provider-specific name', () => {
    expect(PROVIDERS.hyperv.describeDestroyed('disk2:S4EWNX0R123456')).toBe('disk2:S4EWNX0R123456 (host disk 2, serial/id S4EWNX0R123456)');
    for (const m of Object.values(PROVIDERS)) for (const n of ['naa.6000c2900000000000000000000000a1', '/dev/sdb', '#1']) expect(m.describeDestroyed(n), `${m.name} ${n}`).toBeNull();
  });
});

describe('sshHosts.<name>.shell is read', () => {
  const inventory = (shell: string) => `sshHosts:
  guest:
    host: 127.0.0.1
    user: bench
    privateKeyFile: id_ed25519
    knownHostsFile: known_hosts
    shell: ${shell}
  hv:
    host: 127.0.0.1
    user: admin
    privateKeyFile: id_ed25519
    knownHostsFile: known_hosts
    shell: ${shell}
targets:
  g:
    provider: ssh
    sshHost: guest
    workdir: /tmp/bench
  h:
    provider: hyperv
    sshHost: hv
    vmName: bench-vm
    guestCredential: { username: admin, password: "\${env:REGISTRY_TEST_PW}" }
`;
  const load = (shell: string) => {
    const file = path.join(tmp, `inv-${shell}.yaml`);
    fs.writeFileSync(file, inventory(shell));
    return loadInventory(file, { REGISTRY_TEST_PW: 'not-a-real-password' });
  };

  it('a host that gets POSIX sh command lines (fio, ESXi tools) must be posix; a Hyper-V host takes either', () => {
    expect(() => load('posix')).not.toThrow();
    let diags: string[] = [];
    try {
      load('powershell');
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      diags = err.diagnostics.map(formatDiagnostic);
    }
    expect(diags).toEqual([expect.stringMatching(/inv-powershell\.yaml:17:14: targets\.g\.sshHost: sshHosts\.guest declares shell powershell, but target "g" \(ssh\) sends POSIX sh command lines there; set its shell to posix/)]);
  });
});

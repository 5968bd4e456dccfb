// The powershell.exe stand-in is as strict as Hyper-V for what vm.count on Hyper-V sends (issue 32
// item 1; src/lab/harness/windows/hyperv_vms.py): New-VHD -Differencing, New-VM, Start-VM, Stop-VM and
// Remove-VM refuse what Hyper-V documents it refuses, over the real OpenSSH server and the exact
// script shape the provider sends (runCalls). And the provider's own template check: a template a
// running VM has attached is refused before anything is created (the call log says so).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeOperation } from '../../src/errors.ts';
import { defaultHypervState, GUEST_CREDENTIAL, LAB_VM, readHypervState, readPsLog, seedHypervState, templateFile } from '../../src/lab/harness/windows/state.ts';
import { checkHypervTarget } from '../../src/providers/hyperv/config.ts';
import { hypervHost } from '../../src/providers/hyperv/host.ts';
import { checkTemplate } from '../../src/providers/hyperv/operations/new-diff-vhd.ts';
import { runCalls, runGuestCalls, type PsCall } from '../../src/providers/hyperv/powershell.ts';
import type { CommandRunner } from '../../src/ssh/command-runner.ts';
import { startWindowsStandin, type WindowsStandin } from '../helpers/windows-standin.ts';

const TEMPLATE = 'C:\\Templates\\ws2022.vhdx';
const GiB = 1024 ** 3;
const call = (cmdlet: PsCall['cmdlet'], params: PsCall['params'], select?: string[]): PsCall => ({ cmdlet, params, ...(select ? { select } : {}) });
const diff = (path: string, parent = TEMPLATE, extra: PsCall['params'] = {}) => call('New-VHD', { Path: path, ParentPath: parent, Differencing: true, ...extra }, ['Path', 'VhdType', 'ParentPath']);
const newVm = (name: string, vhd: string, extra: PsCall['params'] = {}) => call('New-VM', { Name: name, VHDPath: vhd, Generation: 2, MemoryStartupBytes: 2 * GiB, ...extra }, ['Name', 'State']);

describe('hyperv stand-in: differencing disks and member VMs', () => {
  let hv: WindowsStandin;
  let runner: CommandRunner;
  beforeAll(async () => {
    hv = await startWindowsStandin('ss-hvvm-');
    runner = await hv.connect();
  });
  afterAll(async () => {
    await runner?.close();
    await hv?.stop();
  });

  async function seed(mut: (s: { files: Record<string, unknown>; vms: Record<string, { drives: Record<string, unknown>; state?: string }> }) => void = () => undefined): Promise<void> {
    const s = defaultHypervState() as { files: Record<string, unknown>; vms: Record<string, { drives: Record<string, unknown>; state?: string }> };
    s.files[TEMPLATE] = templateFile(GUEST_CREDENTIAL);
    s.files['C:\\Templates\\old.vhd'] = { ...templateFile(GUEST_CREDENTIAL) };
    mut(s);
    await seedHypervState(hv.stateDir, s);
  }
  const refusal = (calls: PsCall[]) => runCalls(runner, calls).then(() => '', (e: Error) => e.message);

  it('New-VHD -Differencing: the parent must exist, be of the child\'s format, and not be open for writing by a running VM; -LogicalSectorSizeBytes is in no such parameter set', async () => {
    await seed();
    expect(await refusal([diff('D:\\bench\\c.vhdx', 'C:\\Templates\\missing.vhdx')])).toMatch(/cannot find the file specified/);
    expect(await refusal([diff('D:\\bench\\c.vhdx', 'C:\\Templates\\old.vhd')])).toMatch(/format of the differencing disk .* does not match its parent/);
    expect(await refusal([diff('D:\\bench\\c.vhdx', TEMPLATE, { LogicalSectorSizeBytes: 512 })])).toMatch(/Parameter set cannot be resolved/);
    expect(await refusal([call('New-VHD', { Path: 'D:\\bench\\c.vhdx', ParentPath: TEMPLATE, Differencing: true, Dynamic: true })])).toMatch(/Parameter set cannot be resolved/);
    await seed((s) => void (s.vms[LAB_VM]!.drives['SCSI:0:2'] = { Path: TEMPLATE }));
    expect(await refusal([diff('D:\\bench\\c.vhdx')])).toMatch(/being used by another process/);
    expect(Object.keys((await readHypervState(hv.stateDir)).files).filter((p) => p.startsWith('D:'))).toEqual([]);
    // allowed: a child in a bench folder, its parent the template
    await seed();
    expect(await runCalls(runner, [diff('D:\\bench\\c.vhdx')])).toEqual([{ Path: 'D:\\bench\\c.vhdx', VhdType: 'Differencing', ParentPath: TEMPLATE }]);
  });

  it('New-VM, Start-VM, Stop-VM, Remove-VM: generation, VHD format, memory, switch and state as Hyper-V has them; the new VM\'s guest is its own, reached by name', async () => {
    await seed();
    await runCalls(runner, [diff('D:\\bench\\c.vhdx')]);
    expect(await refusal([newVm('m1', 'C:\\Templates\\old.vhd')])).toMatch(/generation 2 virtual machine supports VHDX only/);
    expect(await refusal([newVm('m1', 'D:\\bench\\c.vhdx', { Generation: 3 })])).toMatch(/does not belong to the set "1,2"/);
    expect(await refusal([newVm('m1', 'D:\\bench\\c.vhdx', { MemoryStartupBytes: 1000000000 })])).toMatch(/multiple of 2 MB/);
    expect(await refusal([newVm('m1', 'D:\\bench\\c.vhdx', { SwitchName: 'nope' })])).toMatch(/unable to find a virtual switch/);
    expect(await runCalls(runner, [newVm('m1', 'D:\\bench\\c.vhdx')])).toEqual([{ Name: 'm1', State: 'Off' }]);
    // one disk, one VM: a second VM on the same child is refused
    expect(await refusal([newVm('m2', 'D:\\bench\\c.vhdx')])).toMatch(/being used by another process/);
    // off: no PowerShell Direct
    const guest = () => runGuestCalls(runner, 'm1', GUEST_CREDENTIAL, [{ cmdlet: 'Get-Disk', params: {}, select: ['Number', 'IsSystem', 'Location'] }]);
    await expect(guest()).rejects.toThrow(/not in running state/);
    expect(await refusal([call('Stop-VM', { Name: 'm1', TurnOff: true })])).toMatch(/failed to change state/);
    await runCalls(runner, [call('Start-VM', { Name: 'm1' })]);
    expect(await refusal([call('Start-VM', { Name: 'm1' })])).toMatch(/failed to change state/);
    // its own guest: its system disk (the template's Windows) on SCSI 0:0, nothing of the lab VM's
    expect(await guest()).toEqual([{ Number: 0, IsSystem: true, Location: 'Integrated : Adapter 1 : Port 0 : Target 0 : LUN 0' }]);
    await expect(runGuestCalls(runner, 'm1', { user: GUEST_CREDENTIAL.user, password: 'wrong' }, [{ cmdlet: 'Get-Disk', params: {} }])).rejects.toThrow(/credential is invalid/);
    expect(await refusal([call('Remove-VM', { Name: 'm1', Force: true })])).toMatch(/failed to delete/);
    expect(await refusal([call('Stop-VM', { Name: 'm1' })])).toMatch(/-TurnOff only/);
    await runCalls(runner, [call('Stop-VM', { Name: 'm1', TurnOff: true }), call('Remove-VM', { Name: 'm1', Force: true })]);
    const after = await readHypervState(hv.stateDir);
    expect(Object.keys(after.vms)).toEqual([LAB_VM]);
    // Remove-VM leaves the VM's disks; the child can go now that no VM holds it
    expect(Object.keys(after.files)).toContain('D:\\bench\\c.vhdx');
    await runCalls(runner, [call('Remove-Item', { LiteralPath: 'D:\\bench\\c.vhdx' })]);
  });

  it('the provider refuses a template a running VM has attached, before anything is created', async () => {
    await seed((s) => void (s.vms[LAB_VM]!.drives['SCSI:0:2'] = { Path: TEMPLATE }));
    const h = hypervHost(checkHypervTarget({ host: 'hv', vmName: LAB_VM, volumes: { '100': 'D:\\bench' } }), runner);
    await expect(checkTemplate(h, TEMPLATE, 'New-VHD -Differencing')).rejects.toThrow(UnsafeOperation);
    await expect(checkTemplate(h, TEMPLATE, 'New-VHD -Differencing')).rejects.toThrow(/attached to the running VM bench-vm/);
    expect((await readPsLog(hv.stateDir)).flatMap((l) => l.data.calls ?? []).filter((c) => c.cmdlet === 'New-VHD')).toEqual([]);
    // the same template, with that VM off: a parent nothing writes
    await seed((s) => {
      s.vms[LAB_VM]!.drives['SCSI:0:2'] = { Path: TEMPLATE };
      s.vms[LAB_VM]!.state = 'Off';
    });
    await expect(checkTemplate(h, TEMPLATE, 'New-VHD -Differencing')).resolves.toMatchObject({ VhdFormat: 'VHDX' });
  });
});

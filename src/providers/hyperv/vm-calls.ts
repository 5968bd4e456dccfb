// The member VMs of a Hyper-V `vm.count` permutation as PowerShell cmdlet calls (data for runCalls):
// a differencing disk of the template VHDX, a VM on it, started, turned off and removed.
//
// New-VHD's Differencing parameter set: `-Path -ParentPath [-SizeBytes] -Differencing
// [-BlockSizeBytes] [-PhysicalSectorSizeBytes]`, no -LogicalSectorSizeBytes (the child has its
// parent's) [psdocs hyper-v/New-VHD.md; the reference file, section 6]; the extension of -Path selects
// the format (.vhd / .vhdx).
// New-VM's "Existing VHD" parameter set: `[-Name] [-MemoryStartupBytes] [-SwitchName] -VHDPath
// [-Path] [-Generation]` [psdocs hyper-v/New-VM.md, winserver2012r2-ps and winserver2019-ps].
// Start-VM -Name, Stop-VM -Name -TurnOff ("the equivalent of pulling the power cord"), Remove-VM
// -Name -Force [psdocs hyper-v/Start-VM.md, Stop-VM.md, Remove-VM.md].
import type { PsCall } from './powershell.ts';
import { checkHyperv } from './validate.ts';
import { VHD_PROPS } from './vhd.ts';

/** what Get-VHD says of a disk, with the parent of a differencing one */
export const DIFF_VHD_PROPS = [...VHD_PROPS, 'ParentPath'];
export const VM_PROPS = ['Name', 'State', 'Generation'];

export function newDiffVhdCall(path: string, parentPath: string): PsCall {
  return { cmdlet: 'New-VHD', params: { Path: checkHyperv('vhdxPath', path, 'vhdx path'), ParentPath: checkHyperv('vhdxPath', parentPath, 'template vhdxPath'), Differencing: true }, select: DIFF_VHD_PROPS };
}

export const getDiffVhdCall = (path: string): PsCall => ({ cmdlet: 'Get-VHD', params: { Path: checkHyperv('vhdxPath', path, 'vhdx path') }, select: DIFF_VHD_PROPS });

export interface NewVmSpec {
  name: string;
  vhdPath: string;
  generation: 2;
  memoryStartupBytes: number;
  switchName?: string | undefined;
}

export function newVmCall(s: NewVmSpec): PsCall {
  const params: Record<string, string | number | boolean> = { Name: checkHyperv('ownedName', s.name, 'VM name'), VHDPath: checkHyperv('vhdxPath', s.vhdPath, 'vhdx path'), Generation: s.generation, MemoryStartupBytes: s.memoryStartupBytes };
  if (s.switchName !== undefined) params.SwitchName = checkHyperv('vmName', s.switchName, 'switchName');
  return { cmdlet: 'New-VM', params, select: VM_PROPS };
}

export const startVmCall = (name: string): PsCall => ({ cmdlet: 'Start-VM', params: { Name: checkHyperv('ownedName', name, 'VM name') } });
export const stopVmCall = (name: string): PsCall => ({ cmdlet: 'Stop-VM', params: { Name: checkHyperv('ownedName', name, 'VM name'), TurnOff: true } });
export const removeVmCall = (name: string): PsCall => ({ cmdlet: 'Remove-VM', params: { Name: checkHyperv('ownedName', name, 'VM name'), Force: true } });
/** every VM on the host with its state (Get-VM without parameters lists them all) */
export const listVmStatesCall = (): PsCall => ({ cmdlet: 'Get-VM', params: {}, select: VM_PROPS });

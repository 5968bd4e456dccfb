# STAND-IN for the Hyper-V VM lifecycle cmdlets (New-VM, Start-VM, Stop-VM, Remove-VM) and New-VHD's
# Differencing parameter set, on the powershell.exe stand-in's model host (hyperv.json). A model, not
# Hyper-V; what it enforces is what Hyper-V documents, with each source named:
#
# - New-VHD, Differencing set: `-Path -ParentPath [-SizeBytes] -Differencing [-BlockSizeBytes]
#   [-PhysicalSectorSizeBytes]`; -LogicalSectorSizeBytes is in no such set (the child has its parent's)
#   [psdocs hyper-v/New-VHD.md]. The parent must exist; the extension of -Path selects the format
#   [reference file, section 6], and a child's format is its parent's (UNVERIFIED wording of the error).
#   A parent a running VM has attached is open for writing by that VM's worker process: New-VHD cannot
#   open it (Windows' sharing-violation text, "being used by another process").
# - New-VM, "Existing VHD" set: `[-Name] [-MemoryStartupBytes] [-SwitchName] -VHDPath [-Path]
#   [[-Generation] 1|2]` [psdocs hyper-v/New-VM.md]; the "No VHD" and "New VHD" sets are valid but not
#   modelled (refused as such). Generation 2 boots from SCSI and from VHDX only; Generation 1 from IDE
#   (Learn, "Should I create a generation 1 or 2 virtual machine in Hyper-V?": generation 2 "Boot from
#   a SCSI virtual hard disk", ".VHDX file format" only). The VHD goes to SCSI 0:0 (generation 2) or
#   IDE 0:0 (generation 1). -SwitchName names a switch the host has (state['switches']). Startup memory
#   in multiples of 2 MB (UNVERIFIED: Hyper-V Manager's rule, applied to New-VM too). Hyper-V allows two
#   VMs of one name; the model keys VMs by name and refuses a second (a stand-in limit, said as such).
#   The new VM is Off. Its guest is what its system disk holds: a child of a sysprepped template boots
#   into the template's answer-file account (the root parent's `guestCredential` in the file model);
#   a disk without one has no account PowerShell Direct could use.
# - Start-VM -Name: Off → Running; a VM already running is "failed to change state" (Hyper-V's text
#   for a state change the VM's state does not allow); the host's memory (state['hostMemoryBytes'],
#   default 64 GiB) must hold every running VM's startup memory ("could not initialize … Not enough
#   memory in the system to start the virtual machine"). The guest answers PowerShell Direct
#   state['memberBootSec'] (default 0) seconds after Start-VM.
# - Stop-VM -Name -TurnOff: "the equivalent of pulling the power cord" [psdocs hyper-v/Stop-VM.md]: the
#   guest's processes end at once. Only -TurnOff is modelled (a guest shutdown needs integration
#   services the model has none of); an Off VM cannot change state.
# - Remove-VM -Name -Force: the VM's configuration goes; its virtual hard disks stay (Learn, Hyper-V
#   "Delete a virtual machine": the VHDs are not deleted). A running VM is refused (UNVERIFIED: the
#   conservative reading; storsweep turns it off first).
import os
import signal
import time
import uuid

# the cmdlets' parameter-set check and its error: one for the guest's and the host's cmdlets
from guest_storage import Fail, check_params, is_int  # noqa: F401

MiB = 1024 * 1024
GiB = 1024 * MiB


def format_of(path):
    return 'VHDX' if path.lower().endswith('.vhdx') else 'VHD'


def find_file(state, path):
    """The file model at `path` (NTFS compares names without case), as (its key, its model)."""
    key = next((k for k in state['files'] if isinstance(path, str) and k.lower() == path.lower()), None)
    return key, (state['files'][key] if key is not None else None)


def attached_to(state, path, running_only=False):
    return [name for name, vm in sorted(state['vms'].items()) if (not running_only or vm.get('state') == 'Running')
            and any(isinstance(d.get('Path'), str) and d['Path'].lower() == path.lower() for d in vm['drives'].values())]


def root_of(state, f):
    seen = 0
    while f is not None and f.get('parentPath') and seen < 64:
        f = find_file(state, f['parentPath'])[1]
        seen += 1
    return f


def new_differencing(state, p, folder_of):
    """New-VHD -Differencing (the caller resolved the parameter set)."""
    if 'LogicalSectorSizeBytes' in p:
        raise Fail('New-VHD : Parameter set cannot be resolved using the specified named parameters.')
    check_params('New-VHD', p, ['Path', 'ParentPath', 'Differencing'], ['SizeBytes', 'BlockSizeBytes', 'PhysicalSectorSizeBytes'])
    if p['Differencing'] is not True:
        raise Fail('New-VHD : Parameter set cannot be resolved using the specified named parameters.')
    if 'SizeBytes' in p or 'BlockSizeBytes' in p or 'PhysicalSectorSizeBytes' in p:
        raise Fail('stand-in: New-VHD -Differencing with -SizeBytes, -BlockSizeBytes or -PhysicalSectorSizeBytes is not implemented')
    path, parent_path = p['Path'], p['ParentPath']
    if not isinstance(path, str) or not path.lower().endswith(('.vhd', '.vhdx')) or len(path) < 4 or path[1:3] != ':\\':
        raise Fail(f"New-VHD : The path '{path}' is not a valid virtual hard disk path.")
    pkey, parent = find_file(state, parent_path)
    if parent is None:
        raise Fail(f"New-VHD : Failed to create the virtual hard disk. The system cannot find the file specified. ('{parent_path}')")
    if format_of(path) != format_of(pkey):
        raise Fail(f"New-VHD : Failed to create the virtual hard disk. The format of the differencing disk '{path}' ({format_of(path)}) does not match its parent '{pkey}' ({format_of(pkey)}).")
    users = attached_to(state, pkey, running_only=True)
    if users:
        raise Fail(f"New-VHD : Failed to open attachment '{pkey}'. Error: 'The process cannot access the file because it is being used by another process.'")
    vol = folder_of(state, path)
    if vol is None:
        raise Fail(f"New-VHD : Failed to create the virtual hard disk. The system cannot find the path specified. ('{path}')")
    if find_file(state, path)[1] is not None:
        raise Fail(f"New-VHD : Failed to create the virtual hard disk. The file exists. ('{path}')")
    if 4 * MiB > vol['freeBytes']:
        raise Fail('New-VHD : Failed to create the virtual hard disk. There is not enough space on the disk.')
    vol['freeBytes'] -= 4 * MiB
    state['files'][path] = {'type': 'Differencing', 'size': parent['size'], 'fileSize': 4 * MiB, 'block': 2 * MiB, 'logical': parent.get('logical', 512),
                            'physical': parent.get('physical', 4096), 'parentPath': pkey, 'diskIdentifier': str(uuid.uuid4()).upper()}
    return path


def vm_named(state, name, cmdlet):
    if not isinstance(name, str) or name not in state['vms']:
        raise Fail(f"{cmdlet} : Hyper-V was unable to find a virtual machine with name \"{name}\".")
    return state['vms'][name]


def new_vm(state, p):
    if 'NoVHD' in p or 'NewVHDPath' in p or 'NewVHDSizeBytes' in p or 'VHDPath' not in p:
        raise Fail('stand-in: New-VM is modelled with its "Existing VHD" parameter set (-VHDPath) only')
    check_params('New-VM', p, ['Name', 'VHDPath'], ['MemoryStartupBytes', 'Generation', 'SwitchName'])
    name, vhd, gen = p['Name'], p['VHDPath'], p.get('Generation', 1)
    if not isinstance(name, str) or not name.strip():
        raise Fail("New-VM : Cannot validate argument on parameter 'Name'. The argument is null or empty.")
    if gen not in (1, 2):
        raise Fail(f"New-VM : Cannot validate argument on parameter 'Generation'. The argument \"{gen}\" does not belong to the set \"1,2\".")
    mem = p.get('MemoryStartupBytes', 1 * GiB)
    if not is_int(mem) or mem < 32 * MiB or mem % (2 * MiB):
        raise Fail(f"New-VM : Failed to modify device 'Memory'. Invalid startup memory amount: {mem}. The amount of memory must be a multiple of 2 MB and at least 32 MB.")
    if name in state['vms']:
        raise Fail(f'stand-in: a second VM named "{name}" is not modelled (Hyper-V would allow it)')
    key, f = find_file(state, vhd)
    if f is None:
        raise Fail(f"New-VM : Failed to add device 'Virtual Hard Disk'. The system cannot find the file specified. ('{vhd}')")
    if gen == 2 and format_of(key) != 'VHDX':
        raise Fail(f"New-VM : Failed to add device 'Virtual Hard Disk'. '{key}' is a VHD; a generation 2 virtual machine supports VHDX only.")
    users = attached_to(state, key)
    if users:
        raise Fail(f"New-VM : Failed to add device 'Virtual Hard Disk'. The process cannot access the file because it is being used by another process. ('{key}' is attached to {users[0]})")
    if 'SwitchName' in p and p['SwitchName'] not in (state.get('switches') or []):
        raise Fail(f"New-VM : Hyper-V was unable to find a virtual switch with name \"{p['SwitchName']}\".")
    slot = 'SCSI:0:0' if gen == 2 else 'IDE:0:0'
    root = root_of(state, f) or {}
    state['vms'][name] = {'state': 'Off', 'generation': gen, 'memoryStartupBytes': mem, 'sanPolicy': 'OfflineShared', 'systemSlot': slot,
                          'guestCredential': root.get('guestCredential'), 'guestDisks': {'0': slot}, 'guestVolumes': {}, 'drives': {slot: {'Path': key}},
                          **({'switch': p['SwitchName']} if 'SwitchName' in p else {})}
    return [{'Name': name, 'State': 'Off', 'Generation': gen}]


def start_vm(state, p):
    check_params('Start-VM', p, ['Name'], [])
    vm = vm_named(state, p['Name'], 'Start-VM')
    if vm.get('state') == 'Running':
        raise Fail(f"Start-VM : '{p['Name']}' failed to change state. The operation cannot be performed while the object is in its current state.")
    used = sum(v.get('memoryStartupBytes', GiB) for v in state['vms'].values() if v.get('state') == 'Running')
    if used + vm.get('memoryStartupBytes', GiB) > state.get('hostMemoryBytes', 64 * GiB):
        raise Fail(f"Start-VM : '{p['Name']}' could not initialize. Not enough memory in the system to start the virtual machine {p['Name']}.")
    vm['state'] = 'Running'
    vm['readyAt'] = time.time() + float(state.get('memberBootSec', 0))
    return []


def stop_vm(state, p):
    if 'Save' in p or 'TurnOff' not in p:
        raise Fail('stand-in: Stop-VM is modelled with -TurnOff only (a guest shutdown needs integration services the model lacks)')
    check_params('Stop-VM', p, ['Name', 'TurnOff'], ['Force'])
    if p['TurnOff'] is not True:
        raise Fail("Stop-VM : Cannot convert 'System.String' to the type 'System.Management.Automation.SwitchParameter' required by parameter 'TurnOff'.")
    vm = vm_named(state, p['Name'], 'Stop-VM')
    if vm.get('state') != 'Running':
        raise Fail(f"Stop-VM : '{p['Name']}' failed to change state. The operation cannot be performed while the object is in its current state.")
    # pulling the power cord: every program in the guest ends now
    for q in vm.get('processes', []):
        if q.get('hostPid') is not None:
            try:
                os.kill(q['hostPid'], signal.SIGKILL)
            except ProcessLookupError:
                pass
    vm['processes'] = []
    vm['state'] = 'Off'
    vm.pop('readyAt', None)
    return []


def remove_vm(state, p):
    check_params('Remove-VM', p, ['Name'], ['Force'])
    vm = vm_named(state, p['Name'], 'Remove-VM')
    if vm.get('state') != 'Off':
        raise Fail(f"Remove-VM : '{p['Name']}' failed to delete. The operation cannot be performed while the virtual machine is in its current state.")
    # the configuration goes; the virtual hard disks stay where they are
    del state['vms'][p['Name']]
    return []


def guest_ready(vm, vm_name):
    """PowerShell Direct before the guest booted (UNVERIFIED wording: the error a VM whose guest is not up answers)."""
    if vm.get('readyAt') is not None and time.time() < vm['readyAt']:
        raise Fail(f'Invoke-Command : An error has occurred which Windows PowerShell cannot handle. A remote session might have ended. ({vm_name} is still starting)')
    if not vm.get('guestCredential'):
        raise Fail('Invoke-Command : The credential is invalid.')


VM_CMDLETS = {'New-VM': new_vm, 'Start-VM': start_vm, 'Stop-VM': stop_vm, 'Remove-VM': remove_vm}

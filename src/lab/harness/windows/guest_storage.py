# STAND-IN for the Windows Storage module (Get-Disk, Set-Disk, Initialize-Disk, New-Partition,
# Get-Partition, Format-Volume, Get-Volume, Clear-Disk) inside a Hyper-V guest, reached by the
# powershell.exe stand-in's PowerShell Direct GUEST_CALL shape. A model, not Windows:
#
# - Disks: vm.guestDisks maps the guest's disk number to the drive slot ('SCSI:c:l'). A drive added
#   to a running VM arrives as the lowest free number (UNVERIFIED: Windows' numbering order is not
#   documented; MSFT_StorageNodeToDisk.DiskNumber: "Disk numbers may not necessarily remain the same
#   across reboots"), and leaves with its drive.
# - SAN policy: a disk that arrives on the (shared) SCSI bus stays offline and read-only under the
#   default OfflineShared policy (Learn, diskpart "san": OfflineShared keeps "all newly discovered
#   disks that do not reside on a shared bus (such as SCSI and iSCSI)" online, and "disks that are
#   left offline will be read-only"; VDS_SAN_POLICY: VDS_SP_OFFLINE_SHARED is Windows Server's
#   default). UNVERIFIED: that Hyper-V's synthetic SCSI counts as a shared bus. vm.sanPolicy
#   'OnlineAll' brings new disks online and writable. Disks seeded without state are online.
# - What a disk carries (partition style, partitions, volumes) lives on its medium: the VHDX file
#   model, or the host disk of a pass-through drive, so it stays with the VHDX and shows on the host.
# - Location: "Integrated : Adapter <a> : Port 0 : Target 0 : LUN <controller location>" (Learn,
#   "Manage disks in standalone Storage Spaces on Windows Server hosted in Azure": "Integrated :
#   Adapter 1 : Port 0 : Target 0 : LUN 2"). The adapter number is the guest's enumeration of the
#   VM's SCSI controllers; here controller number + vm.adapterOffset (default 1) — UNVERIFIED.
# - SerialNumber / UniqueId (UNVERIFIED, no primary source found): a VHDX reports no serial and a
#   unique id derived from its disk identifier; a pass-through disk reports the host disk's serial
#   and unique id.
# Errors carry the cmdlet's documented status texts where Learn lists them (MSFT_Disk Initialize:
# "The disk has already been initialized." 41001; CreatePartition; MSFT_Disk.Offline: "The operation
# is not supported on a critical disk." 41009); where no text is documented the wording is marked.
import hashlib
import re
import uuid


class Fail(Exception):
    pass


GiB = 1024 ** 3
NTFS_UNITS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152]
# ReFS clusters are 4 KB or 64 KB (Learn, "Resilient File System (ReFS) overview": "ReFS supports
# 4K and 64K cluster sizes"); Format-Volume -AllocationUnitSize (psdocs storage/Format-Volume.md)
REFS_UNITS = [4096, 65536]


def check_params(cmdlet, params, required, optional):
    keys = set(params)
    missing = [k for k in required if k not in keys]
    unknown = keys - set(required) - set(optional)
    if missing:
        raise Fail(f"{cmdlet} : Cannot process command because of one or more missing mandatory parameters: {' '.join(missing)}.")
    if unknown:
        raise Fail(f"{cmdlet} : A parameter cannot be found that matches parameter name '{sorted(unknown)[0]}'.")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def medium(state, vm, slot):
    """What the disk at `slot` is: the VHDX file model, the host disk (pass-through), or the VM's OS disk."""
    drive = vm['drives'].get(slot)
    if not drive:
        return None
    if is_int(drive.get('DiskNumber')):
        return next((d for d in state['disks'] if d['Number'] == drive['DiskNumber']), None)
    # a VM booted from a differencing child of a template (hyperv_vms.py): its system disk is the guest's Windows
    system_child = slot == vm.get('systemSlot', 'SCSI:0:0') and (state['files'].get(drive.get('Path')) or {}).get('parentPath')
    if drive.get('Path') in state['files'] and not system_child:
        return state['files'][drive['Path']]
    if slot == vm.get('systemSlot', 'SCSI:0:0'):
        return vm.setdefault('systemDisk', {'size': 128 * GiB, 'system': True, 'PartitionStyle': 'GPT',
                                            'partitions': [{'PartitionNumber': n, 'Guid': '{%08d-0000-4000-8000-000000000000}' % n, 'Size': s, 'DriveLetter': dl, 'Type': t}
                                                           for n, s, dl, t in ((1, 100 * 1024 ** 2, None, 'System'), (2, 16 * 1024 ** 2, None, 'Reserved'), (3, 127 * GiB, 'C', 'Basic'))]})
    return None


def size_of(m):
    return m.get('size', m.get('Size', 0))


def layout(m):
    """The medium's partition table, created on first look from what was seeded (`formatted`, NumberOfPartitions)."""
    if 'partitions' not in m:
        n = m.get('NumberOfPartitions', 1 if m.get('formatted') else 0)
        m['partitions'] = [{'PartitionNumber': i + 1, 'Guid': '{f0f0f0f0-0000-4000-8000-%012d}' % (i + 1), 'Size': 0, 'DriveLetter': None, 'Type': 'Basic'} for i in range(n)]
        m.setdefault('PartitionStyle', 'GPT' if n else 'RAW')
    m.setdefault('PartitionStyle', 'RAW')
    sync_host_view(m)
    return m


def sync_host_view(m):
    # a pass-through medium is a host disk: what the guest wrote shows in the host's Get-Disk
    if 'Number' in m and 'SerialNumber' in m:
        m['NumberOfPartitions'] = len(m['partitions'])


def disk_ids(m, drive):
    if is_int(drive.get('DiskNumber')):
        return m.get('SerialNumber'), m.get('UniqueId')
    if m.get('system'):
        return None, '60022480000000000000000000005C00'
    ident = m.setdefault('diskIdentifier', str(uuid.uuid4()).upper())
    return None, '60022480' + hashlib.sha256(ident.encode()).hexdigest()[:24].upper()


def guest_state(vm, slot):
    return vm.setdefault('guestDiskState', {}).get(slot, {'IsOffline': False, 'IsReadOnly': False})


def disk_obj(state, vm, n, slot):
    m = medium(state, vm, slot)
    if m is None:
        return None
    lay = layout(m)
    c, loc = int(slot.split(':')[1]), int(slot.split(':')[2])
    serial, unique = disk_ids(m, vm['drives'][slot])
    st = guest_state(vm, slot)
    return {'Number': int(n), 'Location': f"Integrated : Adapter {c + vm.get('adapterOffset', 1)} : Port 0 : Target 0 : LUN {loc}",
            'SerialNumber': serial, 'UniqueId': unique, 'FriendlyName': m.get('FriendlyName', 'Msft Virtual Disk'), 'Size': size_of(m),
            'IsOffline': st['IsOffline'], 'IsReadOnly': st['IsReadOnly'], 'OperationalStatus': 'Offline' if st['IsOffline'] else 'Online',
            'IsSystem': bool(m.get('system')), 'IsBoot': bool(m.get('system')), 'PartitionStyle': lay['PartitionStyle'],
            'NumberOfPartitions': len(lay['partitions']), 'Guid': lay.get('diskGuid')}


def disks(state, vm):
    out = []
    for n, slot in sorted(vm.get('guestDisks', {}).items(), key=lambda kv: int(kv[0])):
        d = disk_obj(state, vm, n, slot)
        if d is not None:
            out.append(d)
    return out


def slot_of(state, vm, number, cmdlet):
    slot = vm.get('guestDisks', {}).get(str(number)) if is_int(number) else None
    if slot is None or disk_obj(state, vm, number, slot) is None:
        raise Fail(f"{cmdlet} : No MSFT_Disk objects found with property 'Number' equal to '{number}'.")
    return slot


def arrive(vm, slot):
    """A drive added to a running VM: the guest numbers it and applies its SAN policy."""
    nums = vm.setdefault('guestDisks', {})
    if slot in nums.values():
        return
    n = 0
    while str(n) in nums:
        n += 1
    nums[str(n)] = slot
    online = vm.get('sanPolicy', 'OfflineShared') == 'OnlineAll'
    vm.setdefault('guestDiskState', {})[slot] = {'IsOffline': not online, 'IsReadOnly': not online}


def leave(vm, slot):
    nums = vm.setdefault('guestDisks', {})
    for n in [k for k, v in nums.items() if v == slot]:
        del nums[n]
    vm.setdefault('guestDiskState', {}).pop(slot, None)


def used_letters(state, vm):
    letters = set()
    for slot in vm.get('guestDisks', {}).values():
        m = medium(state, vm, slot)
        if m is not None:
            letters |= {p['DriveLetter'] for p in layout(m)['partitions'] if p.get('DriveLetter')}
    return letters | {v.rstrip(':').upper() for v in vm.get('guestVolumes', {})}


def partition_obj(n, p):
    return {'DiskNumber': int(n), 'PartitionNumber': p['PartitionNumber'], 'DriveLetter': p.get('DriveLetter') or '\u0000', 'Guid': p['Guid'],
            'Offset': p.get('Offset', 0), 'Size': p['Size'], 'Type': p.get('Type', 'Basic'), 'AccessPaths': [f"{p['DriveLetter']}:\\"] if p.get('DriveLetter') else []}


# What a freshly formatted volume's own metadata takes before any file (NTFS: $MFT, $LogFile, the
# bitmap; ReFS alike): a fixed 64 MiB in this model (UNVERIFIED: the real figure depends on the
# volume's size and file system).
VOLUME_METADATA = 64 * 1024 ** 2


def volume_free(p):
    """A formatted volume's free bytes: its size less the metadata and every file diskspd made in it
    (diskspd_standin.py keeps them in the partition's guestFiles, by name → size)."""
    if not p.get('volume'):
        return 0
    return max(0, p['Size'] - VOLUME_METADATA - sum(p.get('guestFiles', {}).values()))


def volume_obj(p):
    # MSFT_Volume (Learn, "MSFT_Volume class"): Size "Total size of the volume" and SizeRemaining
    # "Available space on the volume", both UInt64 bytes; SizeRemaining falls as files take room
    v = p.get('volume') or {}
    return {'DriveLetter': p.get('DriveLetter') or '\u0000', 'FileSystem': v.get('FileSystem', ''), 'FileSystemType': v.get('FileSystem', 'Unknown'),
            'AllocationUnitSize': v.get('AllocationUnitSize', 0), 'FileSystemLabel': v.get('FileSystemLabel', ''), 'Size': p['Size'], 'SizeRemaining': volume_free(p)}


def writable(vm, slot, n, cmdlet):
    st = guest_state(vm, slot)
    if st['IsOffline']:
        # UNVERIFIED wording: Learn lists no status text for an offline disk for these methods
        raise Fail(f'{cmdlet} : The disk is offline. Bring disk {n} online (Set-Disk -IsOffline $false) first.')
    if st['IsReadOnly']:
        # MSFT_Disk method status "Access denied (40001)"; UNVERIFIED that a read-only disk yields it
        raise Fail(f'{cmdlet} : Access denied')


def run(state, vm, c):
    cmdlet, p = c.get('cmdlet'), c.get('params') or {}
    if cmdlet == 'Get-Disk':
        if 'Number' not in p:
            check_params(cmdlet, p, [], [])
            return disks(state, vm)
        check_params(cmdlet, p, ['Number'], [])
        return [disk_obj(state, vm, p['Number'], slot_of(state, vm, p['Number'], cmdlet))]
    if cmdlet == 'Set-Disk':
        flags = [k for k in ('IsOffline', 'IsReadOnly') if k in p]
        if len(flags) != 1:
            # -IsOffline and -IsReadOnly are in different parameter sets (psdocs storage/Set-Disk.md)
            raise Fail('Set-Disk : Parameter set cannot be resolved using the specified named parameters.')
        check_params(cmdlet, p, ['Number'] + flags, [])
        if not isinstance(p[flags[0]], bool):
            raise Fail(f'Set-Disk : Cannot bind parameter {flags[0]}: expected a Boolean.')
        slot = slot_of(state, vm, p['Number'], cmdlet)
        if medium(state, vm, slot).get('system') and p[flags[0]] is True:
            raise Fail('Set-Disk : The operation is not supported on a critical disk.')
        st = vm.setdefault('guestDiskState', {}).setdefault(slot, dict(guest_state(vm, slot)))
        st[flags[0]] = p[flags[0]]
        return []
    if cmdlet == 'Initialize-Disk':
        check_params(cmdlet, p, ['Number'], ['PartitionStyle'])
        style = p.get('PartitionStyle', 'GPT')
        if style not in ('GPT', 'MBR'):
            raise Fail(f'Initialize-Disk : Cannot validate argument on parameter PartitionStyle. The argument "{style}" does not belong to the set "MBR,GPT".')
        slot = slot_of(state, vm, p['Number'], cmdlet)
        writable(vm, slot, p['Number'], cmdlet)
        lay = layout(medium(state, vm, slot))
        if lay['PartitionStyle'] != 'RAW':
            raise Fail('Initialize-Disk : The disk has already been initialized.')
        lay['PartitionStyle'] = style
        lay['diskGuid'] = '{%s}' % uuid.uuid4() if style == 'GPT' else None
        return []
    if cmdlet == 'New-Partition':
        check_params(cmdlet, p, ['DiskNumber'], ['UseMaximumSize', 'Size', 'AssignDriveLetter', 'DriveLetter'])
        if ('UseMaximumSize' in p) == ('Size' in p) or ('AssignDriveLetter' in p and 'DriveLetter' in p):
            # -UseMaximumSize xor -Size; -AssignDriveLetter xor -DriveLetter (psdocs storage/New-Partition.md)
            raise Fail('New-Partition : Parameter set cannot be resolved using the specified named parameters.')
        n = p['DiskNumber']
        slot = slot_of(state, vm, n, cmdlet)
        writable(vm, slot, n, cmdlet)
        m = medium(state, vm, slot)
        lay = layout(m)
        if lay['PartitionStyle'] == 'RAW':
            # MSFT_Disk.CreatePartition status 41000 (UNVERIFIED code; the cmdlet needs an initialized disk)
            raise Fail('New-Partition : The disk has not been initialized.')
        offset = 16 * 1024 ** 2 + 1024 ** 2 if lay['PartitionStyle'] == 'GPT' else 1024 ** 2
        used = sum(x['Size'] for x in lay['partitions'])
        free = size_of(m) - offset - used - 1024 ** 2
        size = free if 'UseMaximumSize' in p else p['Size']
        if not is_int(size) or size <= 0 or size > free:
            raise Fail('New-Partition : Not enough available capacity')
        letter = p.get('DriveLetter')
        taken = used_letters(state, vm)
        if 'AssignDriveLetter' in p:
            letter = next((ch for ch in 'DEFGHIJKLMNOPQRSTUVWXYZ' if ch not in taken), None)
        elif letter is not None and (not re.fullmatch(r'[A-Za-z]', str(letter)) or str(letter).upper() in taken):
            raise Fail(f'New-Partition : The drive letter {letter} is not available.')
        part = {'PartitionNumber': len(lay['partitions']) + 1, 'Guid': '{%s}' % uuid.uuid4(), 'Offset': offset + used, 'Size': size,
                'DriveLetter': letter.upper() if letter else None, 'Type': 'Basic'}
        lay['partitions'].append(part)
        sync_host_view(m)
        return [partition_obj(n, part)]
    if cmdlet == 'Get-Partition':
        check_params(cmdlet, p, ['DiskNumber'], [])
        slot = slot_of(state, vm, p['DiskNumber'], cmdlet)
        return [partition_obj(p['DiskNumber'], x) for x in layout(medium(state, vm, slot))['partitions']]
    if cmdlet in ('Format-Volume', 'Get-Volume'):
        if cmdlet == 'Format-Volume':
            check_params(cmdlet, p, ['DriveLetter', 'FileSystem'], ['AllocationUnitSize', 'NewFileSystemLabel', 'Confirm', 'Force'])
        else:
            check_params(cmdlet, p, ['DriveLetter'], [])
        found = None
        for n, slot in vm.get('guestDisks', {}).items():
            m = medium(state, vm, slot)
            for x in (layout(m)['partitions'] if m is not None else []):
                if x.get('DriveLetter') and x['DriveLetter'] == str(p['DriveLetter']).upper():
                    found = (n, slot, m, x)
        if found is None:
            raise Fail(f"{cmdlet} : No MSFT_Volume objects found with property 'DriveLetter' equal to '{p['DriveLetter']}'.")
        n, slot, m, part = found
        if cmdlet == 'Get-Volume':
            return [volume_obj(part)]
        writable(vm, slot, n, cmdlet)
        fs, unit = p['FileSystem'], p.get('AllocationUnitSize')
        units = {'NTFS': NTFS_UNITS, 'ReFS': REFS_UNITS}.get(fs)
        if units is None:
            raise Fail(f'Format-Volume : Cannot validate argument on parameter FileSystem. The argument "{fs}" does not belong to the set "FAT,FAT32,exFAT,NTFS,ReFS".')
        if fs == 'ReFS' and not vm.get('serverEdition', True):
            # ReFS volumes are created on Windows Server and on Windows 10/11 Pro for Workstations and
            # Enterprise (Learn, "Resilient File System (ReFS) overview", availability). UNVERIFIED wording.
            raise Fail('Format-Volume : The file system ReFS is not supported on this edition of Windows.')
        if unit is not None and unit not in units:
            raise Fail(f'Format-Volume : The specified cluster size is invalid for {fs}.')
        if p.get('Confirm') is not False:
            raise Fail('Format-Volume : stand-in: -Confirm:$false is needed (a non-interactive session cannot answer the prompt)')
        part['volume'] = {'FileSystem': fs, 'AllocationUnitSize': unit or 4096, 'FileSystemLabel': p.get('NewFileSystemLabel', '')}
        part['files'] = {}
        part['guestFiles'] = {}
        part['written'] = {}
        return [volume_obj(part)]
    if cmdlet == 'Clear-Disk':
        check_params(cmdlet, p, ['Number'], ['RemoveData', 'RemoveOEM', 'Confirm'])
        slot = slot_of(state, vm, p['Number'], cmdlet)
        writable(vm, slot, p['Number'], cmdlet)
        m = medium(state, vm, slot)
        if m.get('system'):
            raise Fail('Clear-Disk : The operation is not supported on a critical disk.')
        lay = layout(m)
        if any(x.get('volume') or x.get('Type') != 'Reserved' for x in lay['partitions']) and p.get('RemoveData') is not True:
            # Clear-Disk: "-RemoveData: Enables the removal of all of the data on the disk" (psdocs storage/Clear-Disk.md)
            raise Fail('Clear-Disk : The disk contains data partitions; use -RemoveData to remove them.')
        if p.get('Confirm') is not False:
            raise Fail('Clear-Disk : stand-in: -Confirm:$false is needed (a non-interactive session cannot answer the prompt)')
        lay['partitions'] = []
        lay['PartitionStyle'] = 'RAW'
        lay['diskGuid'] = None
        sync_host_view(m)
        return []
    raise Fail(f'cmdlet not allowed: {cmdlet}')


def volume_for_letter(state, vm, letter):
    """(slot, medium, partition) of the volume with drive `letter`, or None."""
    for slot in vm.get('guestDisks', {}).values():
        m = medium(state, vm, slot)
        for x in (layout(m)['partitions'] if m is not None else []):
            if x.get('DriveLetter') == letter.upper() and x.get('volume'):
                return slot, m, x
    return None

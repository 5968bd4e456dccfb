# STAND-IN for disk.sys's write-cache control codes on a Windows guest's disk, as the vSphere
# guest's powershell.exe (vsphere_guest.py) reaches them through the one script storsweep sends
# (src/providers/windows-write-cache-script.ts: Add-Type, DeviceIoControl on \\.\PhysicalDrive<n>).
# Windows cannot run here; like the other stand-ins it does not interpret PowerShell or C#: the
# script must be exactly TOOLS_CACHE_BODY, and what it does is modelled from disk.sys's source
# (microsoft/Windows-driver-samples storage/class/disk/src, "disk.c" and "pnp.c"):
#
# - IOCTL_DISK_GET_CACHE_INFORMATION (DiskGetCacheInformation): a MODE SENSE of the caching page;
#   WriteCacheEnabled = WCE, ReadCacheEnabled = !RCD, ParametersSavable = PS. A device with no
#   caching page: STATUS_NOT_SUPPORTED ("The request is not supported", ERROR_NOT_SUPPORTED).
# - IOCTL_DISK_SET_CACHE_INFORMATION (DiskIoctlSetCacheInformation → DiskSetCacheInformation): the
#   page sent back with WCE as asked (MODE SELECT); no page: STATUS_NOT_SUPPORTED; a MODE SELECT the
#   device rejects: the IOCTL fails and CLASS_SPECIAL_MODIFY_CACHE_UNSUCCESSFUL is set (then
#   IOCTL_DISK_GET_CACHE_SETTING's State is DiskCacheModifyUnsuccessful). In EVERY case the value
#   asked for is stored as UserWriteCacheSetting (1 enabled, 0 disabled) in the device's
#   "Device Parameters\Disk" registry key.
# - IOCTL_DISK_SET_CACHE_SETTING (DiskIoctlSetCacheSetting): Version must be the structure's size
#   (else STATUS_INVALID_PARAMETER; the script always sends it right); IsPowerProtected is taken at
#   once (DEV_POWER_PROTECTED) and stored as CacheIsPowerProtected. It sends nothing to the device.
# - DiskStartFdo (pnp.c), at each start of the disk device: UserWriteCacheSetting, when present,
#   is applied to the device (WCE set or cleared through the same MODE SELECT); CacheIsPowerProtected
#   = 1 sets DEV_POWER_PROTECTED (IOCTL_DISK_GET_CACHE_SETTING's IsPowerProtected).
# - CreateFile of \\.\PhysicalDrive<n> with no disk n: ERROR_FILE_NOT_FOUND ("The system cannot
#   find the file specified"). The C# turns a failure into Win32Exception(GetLastWin32Error());
#   PowerShell reports a .NET method's exception as 'Exception calling "Run" with "3" argument(s): "<message>"'.
#
# Modelled choices, UNVERIFIED (no primary source found): the registry key is per device instance
# and a SCSI disk's instance id follows its bus location, so the stored value stays with the
# guest's SCSI slot and the next disk there starts with it; what VMware's virtual disk reports in
# its caching page (here: a page, WCE set, not savable, WCE changeable — a medium's `cache` can say
# otherwise); the error text when a device rejects the MODE SELECT (here STATUS_INVALID_DEVICE_REQUEST,
# "Incorrect function").
import json


class Fail(Exception):
    pass


# the C# type both scripts compile in the guest (windows-write-cache-script.ts states it once too)
CSHARP = r'''using System;
using System.ComponentModel;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
public static class StorsweepDiskCache {
  [StructLayout(LayoutKind.Sequential)]
  struct CacheInformation {
    [MarshalAs(UnmanagedType.U1)] public bool ParametersSavable;
    [MarshalAs(UnmanagedType.U1)] public bool ReadCacheEnabled;
    [MarshalAs(UnmanagedType.U1)] public bool WriteCacheEnabled;
    public int ReadRetentionPriority;
    public int WriteRetentionPriority;
    public ushort DisablePrefetchTransferLength;
    [MarshalAs(UnmanagedType.U1)] public bool PrefetchScalar;
    public ushort Minimum;
    public ushort Maximum;
    public ushort MaximumBlocks;
  }
  [StructLayout(LayoutKind.Sequential)]
  struct CacheSetting {
    public int Version;
    public int State;
    [MarshalAs(UnmanagedType.U1)] public bool IsPowerProtected;
  }
  public class Result {
    public bool WriteCacheEnabled { get; set; }
    public bool ReadCacheEnabled { get; set; }
    public bool ParametersSavable { get; set; }
    public bool IsPowerProtected { get; set; }
    public string State { get; set; }
  }
  [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
  static extern SafeFileHandle CreateFileW(string name, uint access, uint share, IntPtr security, uint disposition, uint flags, IntPtr template);
  [DllImport("kernel32.dll", SetLastError = true)]
  static extern bool DeviceIoControl(SafeFileHandle h, uint code, IntPtr inBuf, int inSize, IntPtr outBuf, int outSize, out int returned, IntPtr overlapped);
  static T Ioctl<T>(SafeFileHandle h, uint code, T data, bool input) where T : struct {
    int size = Marshal.SizeOf(typeof(T));
    IntPtr buf = Marshal.AllocHGlobal(size);
    try {
      Marshal.StructureToPtr(data, buf, false);
      int n;
      if (!DeviceIoControl(h, code, input ? buf : IntPtr.Zero, input ? size : 0, input ? IntPtr.Zero : buf, input ? 0 : size, out n, IntPtr.Zero)) throw new Win32Exception(Marshal.GetLastWin32Error());
      return (T)Marshal.PtrToStructure(buf, typeof(T));
    } finally {
      Marshal.FreeHGlobal(buf);
    }
  }
  public static Result Run(int disk, string writeCache, string flushing) {
    bool set = writeCache != "read" || flushing != "read";
    // GENERIC_READ (| GENERIC_WRITE to set), FILE_SHARE_READ | FILE_SHARE_WRITE, OPEN_EXISTING
    using (SafeFileHandle h = CreateFileW(@"\\.\PhysicalDrive" + disk, set ? 0xC0000000 : 0x80000000, 3, IntPtr.Zero, 3, 0, IntPtr.Zero)) {
      if (h.IsInvalid) throw new Win32Exception(Marshal.GetLastWin32Error());
      CacheInformation info = Ioctl(h, 0x740D4, new CacheInformation(), false);
      if (writeCache != "read") {
        info.WriteCacheEnabled = writeCache == "enabled";
        info.ParametersSavable = false;
        Ioctl(h, 0x7C0D8, info, true);
        info = Ioctl(h, 0x740D4, new CacheInformation(), false);
      }
      CacheSetting s = new CacheSetting();
      s.Version = Marshal.SizeOf(typeof(CacheSetting));
      if (flushing != "read") {
        s.IsPowerProtected = flushing == "off";
        Ioctl(h, 0x7C0E4, s, true);
      }
      s = Ioctl(h, 0x740E0, s, false);
      string[] states = { "Normal", "WriteThroughNotSupported", "ModifyUnsuccessful" };
      Result r = new Result();
      r.WriteCacheEnabled = info.WriteCacheEnabled;
      r.ReadCacheEnabled = info.ReadCacheEnabled;
      r.ParametersSavable = info.ParametersSavable;
      r.IsPowerProtected = s.IsPowerProtected;
      r.State = s.State >= 0 && s.State < states.Length ? states[s.State] : s.State.ToString();
      return r;
    }
  }
}'''

TOOLS_CACHE_BODY = r'''try {
  Add-Type -TypeDefinition @'
''' + CSHARP + r'''
'@
  $r = [StorsweepDiskCache]::Run([int]$p.disk, [string]$p.writeCache, [string]$p.flushing)
  [IO.File]::WriteAllText($p.out, (ConvertTo-Json -InputObject $r -Compress))
} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }
exit 0'''

# the same type over PowerShell Direct from the Hyper-V host (powershell.exe's GUEST_CACHE shape)
HYPERV_CACHE_BODY = r'''$s = [Console]::In.ReadLine() | ConvertFrom-Json
$cred = New-Object System.Management.Automation.PSCredential ($s.user, (ConvertTo-SecureString $s.password -AsPlainText -Force))
$src = @'
''' + CSHARP + r'''
'@
$r = Invoke-Command -VMName $p.vmName -Credential $cred -ScriptBlock { param($src, $disk, $writeCache, $flushing) $ErrorActionPreference = 'Stop'; Add-Type -TypeDefinition $src; [StorsweepDiskCache]::Run($disk, $writeCache, $flushing) } -ArgumentList $src, ([int]$p.disk), ([string]$p.writeCache), ([string]$p.flushing)
ConvertTo-Json -InputObject ([pscustomobject]@{ WriteCacheEnabled = $r.WriteCacheEnabled; ReadCacheEnabled = $r.ReadCacheEnabled; ParametersSavable = $r.ParametersSavable; IsPowerProtected = $r.IsPowerProtected; State = $r.State }) -Compress
exit 0'''

STATES = ['Normal', 'WriteThroughNotSupported', 'ModifyUnsuccessful']


def page(med):
    """The device's caching mode page and the driver's flag for a rejected set (see the top)."""
    return med.setdefault('cache', {'cachingPage': True, 'WCE': True, 'RCD': False, 'PS': False, 'wceChangeable': True, 'modifyUnsuccessful': False})


def parameters(vm, slot):
    """The device's "Device Parameters\\Disk" registry values (UserWriteCacheSetting, CacheIsPowerProtected)."""
    return vm.setdefault('diskParameters', {}).setdefault(slot, {})


def mode_select(c, wce):
    """DiskSetCacheInformation's MODE SELECT: True when the device took it."""
    if not c['wceChangeable']:
        c['modifyUnsuccessful'] = True
        return False
    c['WCE'] = bool(wce)
    return True


def start(vm, slot, med):
    """DiskStartFdo: a disk device starting in `slot` gets the stored UserWriteCacheSetting."""
    c = page(med)
    c['modifyUnsuccessful'] = False
    override = parameters(vm, slot).get('UserWriteCacheSetting')
    if c['cachingPage'] and override in (0, 1) and c['WCE'] != bool(override):
        mode_select(c, override)


def exception(message):
    return Fail(f'Exception calling "Run" with "3" argument(s): "{message}"')


def run(vm, slot, med, mode, flushing):
    """TOOLS_CACHE_BODY's [StorsweepDiskCache]::Run(disk, writeCache, flushing) on the disk in `slot` (None: no such disk)."""
    if med is None:
        raise exception('The system cannot find the file specified')
    c = page(med)
    if not c['cachingPage']:
        raise exception('The request is not supported')
    if mode != 'read':
        wce = mode == 'enabled'
        took = mode_select(c, wce)
        parameters(vm, slot)['UserWriteCacheSetting'] = 1 if wce else 0
        if not took:
            raise exception('Incorrect function')
    if flushing != 'read':
        parameters(vm, slot)['CacheIsPowerProtected'] = 1 if flushing == 'off' else 0
    state = 'ModifyUnsuccessful' if c['modifyUnsuccessful'] else 'Normal'
    return {'WriteCacheEnabled': c['WCE'], 'ReadCacheEnabled': not c['RCD'], 'ParametersSavable': c['PS'],
            'IsPowerProtected': parameters(vm, slot).get('CacheIsPowerProtected') == 1, 'State': state}

// The PowerShell that reads and sets a Windows guest disk's write cache (guest.writeCache:
// ./windows-write-cache.ts). Windows has no cmdlet that sets it: Device Manager's "Enable write
// caching on the device" box sends IOCTL_DISK_SET_CACHE_INFORMATION to the disk. This script does
// the same through DeviceIoControl (Add-Type, C# 5 as Windows PowerShell 5.1 compiles it) on
// \\.\PhysicalDrive<n>, n being Get-Disk's Number. "Turn off Windows write-cache buffer flushing"
// is IOCTL_DISK_SET_CACHE_SETTING's IsPowerProtected. It reads back with
// IOCTL_DISK_GET_CACHE_INFORMATION and IOCTL_DISK_GET_CACHE_SETTING. Like every guest script it is a
// CONSTANT body; its data ($p.disk; $p.writeCache: read, enabled or disabled; $p.flushing: read, on
// or off) comes in the prelude's JSON blob (hyperv/powershell.ts).
//
// Sources (Microsoft):
// - control codes, ntdddisk.h / winioctl.h: IOCTL_DISK_GET_CACHE_INFORMATION = CTL_CODE(IOCTL_DISK_BASE,
//   0x0035, METHOD_BUFFERED, FILE_READ_ACCESS) = 0x740D4; IOCTL_DISK_SET_CACHE_INFORMATION = CTL_CODE(…,
//   0x0036, …, FILE_READ_ACCESS | FILE_WRITE_ACCESS) = 0x7C0D8 (508120, windows-docs-rs);
//   IOCTL_DISK_GET_CACHE_SETTING = CTL_CODE(…, 0x0038, …, FILE_READ_ACCESS) = 0x740E0;
//   IOCTL_DISK_SET_CACHE_SETTING = CTL_CODE(…, 0x0039, …, FILE_READ_ACCESS | FILE_WRITE_ACCESS) = 0x7C0E4.
// - Learn "DISK_CACHE_INFORMATION structure (winioctl.h)": three BOOLEANs, two
//   DISK_CACHE_RETENTION_PRIORITY enums, a WORD, a BOOLEAN, then a union of three WORDs (24 bytes
//   with natural alignment); "DISK_CACHE_SETTING" (ntdddisk.h): ULONG Version = its size, the
//   DISK_CACHE_STATE enum (Normal, WriteThroughNotSupported, ModifyUnsuccessful), BOOLEAN IsPowerProtected.
// - The set is a MODE SELECT of the caching page with the caller's ParametersSavable as the
//   save-page bit (Windows-driver-samples storage/class/disk/src/disk.c DiskSetCacheInformation):
//   this script sends it FALSE, so the device keeps no copy in its non-volatile storage.
// - DiskIoctlSetCacheSetting (disk.c) takes a DISK_CACHE_SETTING whose Version is its size, else
//   STATUS_INVALID_PARAMETER; it sets IsPowerProtected at once and stores it as CacheIsPowerProtected.
/** The C# type both bodies compile in the guest (Add-Type): [StorsweepDiskCache]::Run(disk, writeCache, flushing). */
export const CACHE_TYPE_SOURCE = String.raw`using System;
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
}
`;

/** Guest operations (VMware Tools): the script runs in the guest itself; the result goes to $p.out, an error's text to $p.err. */
export const TOOLS_GUEST_CACHE_BODY = [
  'try {',
  `  Add-Type -TypeDefinition @'\n${CACHE_TYPE_SOURCE}'@`,
  '  $r = [StorsweepDiskCache]::Run([int]$p.disk, [string]$p.writeCache, [string]$p.flushing)',
  '  [IO.File]::WriteAllText($p.out, (ConvertTo-Json -InputObject $r -Compress))',
  '} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }',
  'exit 0',
].join('\n');

/**
 * PowerShell Direct from the Hyper-V host (hyperv/powershell.ts runGuestCache): the same type
 * compiled and run inside VM $p.vmName as the guest user whose credential arrives on stdin. A
 * remoted object comes back deserialized with PSComputerName and RunspaceId added, so the host
 * writes the five fields again as one JSON line.
 */
export const GUEST_CACHE_BODY = [
  '$s = [Console]::In.ReadLine() | ConvertFrom-Json',
  '$cred = New-Object System.Management.Automation.PSCredential ($s.user, (ConvertTo-SecureString $s.password -AsPlainText -Force))',
  `$src = @'\n${CACHE_TYPE_SOURCE}'@`,
  "$r = Invoke-Command -VMName $p.vmName -Credential $cred -ScriptBlock { param($src, $disk, $writeCache, $flushing) $ErrorActionPreference = 'Stop'; Add-Type -TypeDefinition $src; [StorsweepDiskCache]::Run($disk, $writeCache, $flushing) } -ArgumentList $src, ([int]$p.disk), ([string]$p.writeCache), ([string]$p.flushing)",
  'ConvertTo-Json -InputObject ([pscustomobject]@{ WriteCacheEnabled = $r.WriteCacheEnabled; ReadCacheEnabled = $r.ReadCacheEnabled; ParametersSavable = $r.ParametersSavable; IsPowerProtected = $r.IsPowerProtected; State = $r.State }) -Compress',
  'exit 0',
].join('\n');

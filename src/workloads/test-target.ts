// What a workload's test target is: a file the benchmark may create and overwrite, or a raw device
// (a disk, a partition) whose contents the benchmark destroys. Defined once for the inventory
// schema (validate refuses at file:line:col), the planner (a raw target makes the workload step
// destructive and named by --confirm-destroy) and the fio runner (which refuses a path it cannot
// tell apart).

/**
 * Why `p` cannot be a Linux guest's test file or work directory, or null. It must be absolute and
 * normalised: fio resolves a relative name against its working directory (the login's home over
 * SSH), so `../dev/sdz` from /root is /dev/sdz, and `.`/`..` segments or `//` hide where a path
 * goes. /proc and /sys are refused outright: `/proc/self/root/dev/sdz` is /dev/sdz, and nothing
 * under them is a place to measure storage.
 */
export function linuxTestPathProblem(p: string): string | null {
  if (!p.startsWith('/')) return 'must be an absolute path (fio would resolve a relative one against the login directory)';
  const segments = p.split('/').slice(1);
  if (p !== '/' && segments.some((s) => s === '' || s === '.' || s === '..')) return 'must be a normalised path: no "." or ".." segments, no "//", no trailing "/"';
  if (segments[0] === 'proc' || segments[0] === 'sys') return `must not be under /${segments[0]} (its entries lead to devices and kernel settings, not to storage to measure)`;
  return null;
}

/** A Linux path that names a device: anything under /dev except the tmpfs /dev/shm. */
function linuxRawTarget(p: string): boolean {
  return (p === '/dev' || p.startsWith('/dev/')) && !(p === '/dev/shm' || p.startsWith('/dev/shm/'));
}

/**
 * A Windows (diskspd) target that is a device, not a file. diskspd documents three kinds of target:
 * "regular files …, named partitions: DriveLetter:, e.g. C:, X:, …, physical devices:
 * #PhysicalDiskId, e.g. #1, #5" (microsoft/diskspd wiki, "Command line and parameters"; the usage
 * text of CmdLineParser.cpp lists `#<physical drive number>` and `<partition_drive_letter>:`).
 * Win32 device-namespace paths (`\\.\PhysicalDrive1`, `\\.\E:`, `\\?\Volume{…}`, and the NT
 * `\??\` prefix) reach a disk or a volume through the "file" kind; every such path is taken as a
 * device, even the rare `\\?\C:\file.dat`, because which it is cannot be told from the text.
 */
function windowsRawTarget(p: string): boolean {
  return /^#\d+$/.test(p) || /^[A-Za-z]:$/.test(p) || /^(\\\\[.?]\\|\\\?\?\\)/.test(p);
}

/**
 * Whether a diskspd target names a whole physical drive (`#1`, `\\.\PhysicalDrive1`): the only kind a
 * blank disk has. A pass-through disk is taken offline only without partitions
 * (providers/hyperv/passthrough.ts), so in the guest it has no volume: no drive letter to hold a
 * test file (`T:\storsweep.dat`) and no partition (`E:`) to measure.
 */
export function isWindowsPhysicalDrive(p: string): boolean {
  return /^#\d+$/.test(p.trim()) || /^\\\\[.?]\\PhysicalDrive\d+$/i.test(p.trim());
}

/**
 * The test target's name when it is a raw device the benchmark overwrites — for fio a Linux block
 * device (`/dev/sdb`, not a file under /dev/shm), for diskspd a partition (`E:`), a physical drive
 * (`#1`) or a device path (`\\.\PhysicalDrive1`) — else undefined. The name, as written, is what
 * the workload step's `destroys` and `--confirm-destroy` carry. A fio path that is not absolute and
 * normalised is refused before it gets here (linuxTestPathProblem); if one does, it counts as a
 * device, since where it leads cannot be known without the guest.
 */
export function rawTestTarget(testFile: unknown, tool: 'fio' | 'diskspd' = 'fio'): string | undefined {
  if (typeof testFile !== 'string') return undefined;
  const t = testFile.trim();
  if (t === '') return undefined;
  if (tool === 'diskspd') return windowsRawTarget(t) ? t : undefined;
  return linuxTestPathProblem(t) !== null || linuxRawTarget(t) ? t : undefined;
}

#!/usr/bin/python3
# STAND-IN for a program started by VMware Tools in a Windows guest of the vcsim harness
# (src/lab/harness/vcsim/guestwin.go: StartProgramInGuest on a VM whose guestId is windows*).
# Windows cannot run here. The harness runs `vsphere_guest.py <programPath> <arguments>` with the
# guest's file system at $STORSWEEP_GUEST_FS (<drive letter>/…), the VM's disks in
# $STORSWEEP_GUEST_MODEL and this guest's persisted disk state in $STORSWEEP_GUEST_STATE. Programs:
#   - cmd.exe: only `/c <command line>` (GuestProgramSpec.arguments: "For Windows guest operating
#     systems, prefixing the command with "cmd /c" can provide stdio redirection"), with
#     `>`, `>>`, `1>`, `2>`, `2>&1` redirection (cmd.exe's documented redirection operators,
#     learn.microsoft.com "Using command redirection operators") and the built-ins `echo` and
#     `type`; any other bare command name is "not recognized …" with exit code 9009 as cmd.exe says;
#   - diskspd.exe: the DiskSpd stand-in (diskspd_standin.py) on this guest's disks. Disk 0 is the
#     VM's first disk (the system disk, lowest controller slot); a disk attached later gets the
#     lowest free number and keeps it while attached. It runs for its warm-up + duration + cool-down
#     (-W, -d, -C; DiskSpd defaults 5 s, 10 s, 0 s) like the real tool, then prints its output.
# Anything else the guest has as a file is not a program the stand-in can run: exit 1.
# Arguments are split with the Microsoft C runtime rules (learn.microsoft.com "Parsing C++
# command-line arguments": whitespace separates, "…" groups, \" is a quote).
import base64
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import disk_cache  # noqa: E402
import diskspd_standin  # noqa: E402
import guest_storage  # noqa: E402
# the Microsoft C runtime's argument splitting; a process's start time as .NET's Process.StartTime
from guest_process import split_args, start_time  # noqa: E402,F401
from importlib.machinery import SourceFileLoader  # noqa: E402

# the Hyper-V powershell.exe stand-in's -EncodedCommand decoding and prelude (same provider code)
ps_standin = SourceFileLoader('ps_standin', os.path.join(os.path.dirname(os.path.realpath(__file__)), 'powershell.exe')).load_module()

FS = os.environ.get('STORSWEEP_GUEST_FS', '')
MODEL = os.environ.get('STORSWEEP_GUEST_MODEL', '')
STATE = os.environ.get('STORSWEEP_GUEST_STATE', '')
CWD = os.environ.get('STORSWEEP_GUEST_CWD', 'C:\\')


def host_path(p):
    """A Windows path (absolute, or relative to the working directory) → the file here."""
    if not re.match(r'^[A-Za-z]:[\\/]', p):
        p = CWD.rstrip('\\') + '\\' + p
    drive, rest = p[0].upper(), p[3:]
    cur = os.path.join(FS, drive)
    parts = []
    for c in re.split(r'[\\/]+', rest):
        if c in ('', '.'):
            continue
        if c == '..':
            parts = parts[:-1]
            continue
        parts.append(c)
    for c in parts:
        nxt = os.path.join(cur, c)
        if not os.path.lexists(nxt) and os.path.isdir(cur):
            for e in os.listdir(cur):
                if e.lower() == c.lower():
                    nxt = os.path.join(cur, e)
                    break
        cur = nxt
    return cur


def load_guest():
    """The Windows guest's view of the VM's disks, in the model guest_storage.py and
    diskspd_standin.py work on. Each VMware disk is a medium of its own with the identity the guest
    reads (SerialNumber and UniqueId: the WWN the harness gives it, a VMDK's backing uuid with
    disk.EnableUUID = TRUE, a physical RDM's NAA id; UNVERIFIED how Windows formats a VMware disk's
    serial — the same value in both), reached like a pass-through disk (drive.DiskNumber). The VM's
    first disk is the system disk (C:). Disks the VM had when the harness started are online;
    one attached later arrives as guest_storage.arrive says (lowest free number, the SAN policy)."""
    with open(MODEL, encoding='utf-8') as f:
        model = json.load(f)
    try:
        with open(STATE, encoding='utf-8') as f:
            st = json.load(f)
    except FileNotFoundError:
        st = {'vm': {}, 'media': {}}
    vm = st['vm']
    # which edition the guest is (what Get-CimInstance Win32_OperatingSystem answers): ReFS volumes are
    # created on Windows Server and on Windows 10/11 Pro for Workstations and Enterprise only (Learn,
    # "Resilient File System (ReFS) overview", availability); guest_storage.py's Format-Volume refuses
    # ReFS elsewhere, as it does for a Hyper-V guest
    caption = str({**ps_standin.DEFAULT_OS, **(model.get('guestOs') or {})}.get('Caption', ''))
    vm['serverEdition'] = any(k in caption for k in ('Windows Server', 'Enterprise', 'Pro for Workstations'))
    vm.setdefault('guestDisks', {})
    vm.setdefault('guestDiskState', {})
    vm['drives'] = {}
    state = {'disks': [], 'files': {}}
    slots = [d['slot'] for d in model['disks']]
    if slots:
        vm['systemSlot'] = slots[0]
    for slot in list(vm['guestDisks'].values()):
        if slot not in slots:
            guest_storage.leave(vm, slot)
            st['media'].pop(slot, None)
    for i, d in enumerate(model['disks']):
        slot = d['slot']
        if slot == vm.get('systemSlot'):
            vm['drives'][slot] = {'Path': 'system'}
        else:
            med = st['media'].get(slot)
            if med is None or med.get('serial') != d['serial'] or med.get('Size') != d['size']:
                # another disk in that slot: what the last one carried is not on it
                med = {'serial': d['serial'], 'Size': d['size'], 'SerialNumber': d['serial'] or None,
                       'UniqueId': d['serial'].upper() if d['serial'] else None,
                       'FriendlyName': 'VMware Virtual disk SCSI Disk Device', 'PartitionStyle': 'RAW', 'partitions': []}
                st['media'][slot] = med
                # a disk device starting in that slot: disk.sys applies the slot's stored write cache setting
                disk_cache.start(vm, slot, med)
            med['Number'] = 1000 + i  # the medium's own number (never shown to the guest)
            state['disks'].append(med)
            vm['drives'][slot] = {'DiskNumber': med['Number']}
        if slot not in vm['guestDisks'].values():
            guest_storage.arrive(vm, slot)
            if d.get('atStart'):
                vm['guestDiskState'][slot] = {'IsOffline': False, 'IsReadOnly': False}
    return model, st, state, vm


def save_guest(st):
    tmp = STATE + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(st, f)
    os.replace(tmp, STATE)


def run_diskspd(argv):
    model, st, state, vm = load_guest()
    try:
        opts, _ = diskspd_standin.parse(argv)
        secs = sum(int(opts.get(o, d) or d) for o, d in (('-W', '5'), ('-d', '10'), ('-C', '0')))
    except diskspd_standin.DiskspdError:
        secs = 0
    code, out = diskspd_standin.run(state, vm, model['vmName'], argv)
    if code == 0:
        time.sleep(secs)
    save_guest(st)
    return code, out, ''


def is_diskspd(path):
    return re.split(r'[\\/]', path)[-1].lower() == 'diskspd.exe'


def run_program(prog, argv):
    """(exit code, stdout, stderr) of a program given by Windows path."""
    if is_diskspd(prog):
        return run_diskspd(argv)
    if re.split(r'[\\/]', prog)[-1].lower() == 'powershell.exe':
        return run_powershell(argv)
    return 1, '', f'stand-in: {prog} is not a program the Windows guest stand-in runs\r\n'


# --- powershell.exe: the vSphere provider's guest-operations script shapes ----------------------
# (src/providers/hyperv/powershell.ts TOOLS_GUEST_CALL_BODY / TOOLS_GUEST_RUN_BODY /
# TOOLS_GUEST_REMOVE_BODY, run by src/providers/vsphere/guest-runner.ts). Like the Hyper-V
# stand-in, it does not interpret PowerShell: a script must be exactly one of these shapes.
GUEST_CMDLETS = ps_standin.GUEST_ALLOWED
GUEST_CALLS_INLINE = ("$allowed = @('" + "', '".join(GUEST_CMDLETS) + "'); $out = @(); foreach ($c in $p.calls) { if ($allowed -notcontains $c.cmdlet) { throw \"cmdlet not allowed: $($c.cmdlet)\" }; "
                      "$a = @{}; foreach ($q in $c.params.PSObject.Properties) { $a[$q.Name] = $q.Value }; $x = & $c.cmdlet @a; if ($null -ne $c.select) { $out += @($x | ForEach-Object { $o = [ordered]@{}; "
                      "foreach ($n in $c.select) { $v = $_.$n; if ($v -is [Enum]) { $v = \"$v\" }; if ($v -is [char]) { $v = \"$v\" }; $o[$n] = $v }; [pscustomobject]$o }) } }")
TOOLS_CALL_BODY = '\n'.join([
    'try {',
    '  ' + GUEST_CALLS_INLINE,
    '  [IO.File]::WriteAllText($p.out, (ConvertTo-Json -InputObject @($out) -Depth 5 -Compress))',
    '} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }',
    'exit 0',
])
TOOLS_RUN_BODY = '\n'.join([
    'try {',
    '  $q = Start-Process -FilePath $p.exe -ArgumentList $p.args -NoNewWindow -PassThru -RedirectStandardOutput $p.out -RedirectStandardError $p.err',
    '  $h = $q.Handle',
    "  [IO.File]::WriteAllText($p.pid, [string]$q.Id + ' ' + $q.StartTime.ToUniversalTime().ToString('o'))",
    '  $q.WaitForExit()',
    '  exit $q.ExitCode',
    '} catch { [IO.File]::WriteAllText($p.err, ($_ | Out-String)); exit 1 }',
])
TOOLS_REMOVE_BODY = '\n'.join(['foreach ($f in $p.files) { Remove-Item -LiteralPath $f -Force -ErrorAction SilentlyContinue }', 'exit 0'])


def decode_ps(argv):
    if argv[:5] != ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand'] or len(argv) != 6:
        raise PsFail('powershell.exe stand-in: expected exactly -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand <base64>', 64)
    try:
        raw = base64.b64decode(argv[5], validate=True)
    except Exception:
        raise PsFail('Cannot process the command because the value specified with -EncodedCommand is not properly encoded. The value must be Base64 encoded.', 64)
    if len(raw) % 2 or not raw.startswith('$'.encode('utf-16le')):
        raise PsFail('powershell.exe stand-in: -EncodedCommand is not UTF-16LE text (UTF-8 is the usual mistake)', 64)
    script = raw.decode('utf-16le')
    m = re.fullmatch(re.escape(ps_standin.PRELUDE).replace(re.escape('{DATA}'), '([A-Za-z0-9+/]*={0,2})') + '(.*)', script, re.S)
    if not m:
        raise PsFail('powershell.exe stand-in: script does not start with the known prelude', 65)
    body = m.group(2).rstrip('\n')
    shape = {TOOLS_CALL_BODY: 'call', TOOLS_RUN_BODY: 'run', TOOLS_REMOVE_BODY: 'remove', disk_cache.TOOLS_CACHE_BODY: 'cache'}.get(body)
    if shape is None:
        raise PsFail('powershell.exe stand-in: unknown script shape (only the vSphere guest-operations CALL, RUN, REMOVE and CACHE bodies are implemented)', 65)
    return shape, json.loads(base64.b64decode(m.group(1)).decode('utf-8'))


class PsFail(Exception):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code


def write_text(win_path, text):
    """[IO.File]::WriteAllText: UTF-8 without BOM; the directory must exist."""
    p = host_path(win_path)
    if not os.path.isdir(os.path.dirname(p)):
        raise OSError(f'Could not find a part of the path \'{win_path}\'.')
    with open(p, 'w', encoding='utf-8', newline='') as f:
        f.write(text)


def run_powershell(argv):
    try:
        shape, p = decode_ps(argv)
    except PsFail as e:
        return e.code, '', str(e) + '\r\n'
    if shape == 'remove':
        for f in p.get('files') or []:
            try:
                os.remove(host_path(str(f)))
            except OSError:
                pass
        return 0, '', ''
    try:
        if shape == 'call':
            model, st, state, vm = load_guest()
            out = []
            try:
                for c in p.get('calls') or []:
                    if c.get('cmdlet') not in GUEST_CMDLETS:
                        raise guest_storage.Fail(f"cmdlet not allowed: {c.get('cmdlet')}")
                    if c.get('cmdlet') == 'Get-CimInstance':
                        # Win32_OperatingSystem as the Hyper-V stand-in answers it (Microsoft docs,
                        # "Win32_OperatingSystem class"); the guest's from the model (guestOs), else
                        # Windows Server 2022 Datacenter
                        try:
                            r = ps_standin.cim_instance(c.get('params') or {}, model.get('guestOs'))
                        except ps_standin.Fail as e:
                            raise guest_storage.Fail(str(e))
                    else:
                        r = guest_storage.run(state, vm, c)
                    if c.get('select') is not None:
                        out += [{k: o.get(k) for k in c['select']} for o in r]
            finally:
                save_guest(st)
            write_text(p['out'], json.dumps(out, separators=(',', ':')))
            return 0, '', ''
        if shape == 'cache':
            return run_cache(p)
        return start_process(p)
    except (guest_storage.Fail, disk_cache.Fail, OSError) as e:
        try:
            write_text(p['err'], str(e) + '\r\n')
        except OSError:
            pass
        return 1, '', ''


def run_cache(p):
    """TOOLS_CACHE_BODY (disk_cache.py): [StorsweepDiskCache]::Run([int]$p.disk, [string]$p.writeCache, [string]$p.flushing),
    its result as ConvertTo-Json -Compress to $p.out."""
    model, st, state, vm = load_guest()
    try:
        disk = p.get('disk')
        if not isinstance(disk, int) or isinstance(disk, bool):
            # [int]$p.disk of a value that is not a number (PowerShell's conversion error)
            raise disk_cache.Fail(f'Cannot convert value "{disk}" to type "System.Int32". Error: "Input string was not in a correct format."')
        slot = vm.get('guestDisks', {}).get(str(disk))
        med = guest_storage.medium(state, vm, slot) if slot is not None else None
        # [string]$null is the empty string
        r = disk_cache.run(vm, slot, med, *('' if p.get(k) is None else str(p.get(k)) for k in ('writeCache', 'flushing')))
    finally:
        save_guest(st)
    write_text(p['out'], json.dumps(r, separators=(',', ':')))
    return 0, '', ''


def start_process(p):
    """Start-Process -FilePath exe -ArgumentList args -RedirectStandardOutput/-Error: a child
    process of its own (its pid written to $p.pid), waited for; its exit code is PowerShell's."""
    exe = str(p['exe'])
    if not re.match(r'^[A-Za-z]:[\\/]', exe) or not os.path.isfile(host_path(exe)):
        raise OSError('This command cannot be run due to the error: The system cannot find the file specified.')
    out, err = host_path(p['out']), host_path(p['err'])
    for f in (out, err):
        if not os.path.isdir(os.path.dirname(f)):
            raise OSError(f'Could not find a part of the path \'{f}\'.')
    exit_file = host_path(p['pid']) + '.exit'
    env = dict(os.environ, STORSWEEP_GUEST_EXIT=exit_file, STORSWEEP_GUEST_PROGRAM=exe, STORSWEEP_GUEST_CMDLINE=f'"{exe}" {p.get("args", "")}'.rstrip())
    with open(out, 'wb') as o, open(err, 'wb') as e:
        child = subprocess.Popen([sys.executable, os.path.realpath(__file__), exe, str(p.get('args', ''))], stdout=o, stderr=e, env=env, cwd=os.getcwd())
    # $q.Id + ' ' + $q.StartTime.ToUniversalTime().ToString('o'): the pid and the process's start
    # time (System.Diagnostics.Process.StartTime; "o" is the round-trip format, 7 fraction digits, Z)
    # as the kernel has it, which is also what the harness's ListProcessesInGuest reports (procStart)
    write_text(p['pid'], f'{child.pid} {start_time(child.pid)}')
    child.wait()
    code = 1  # a process ended by TerminateProcessInGuest leaves no exit file
    try:
        with open(exit_file, encoding='utf-8') as f:
            code = int(f.read().strip())
        os.remove(exit_file)
    except (OSError, ValueError):
        pass
    return code, '', ''


def run_cmd(arguments):
    m = re.match(r'^\s*/[cC]\s+(.*)$', arguments, re.S)
    if not m:
        return 1, '', 'stand-in: cmd.exe is only implemented with /c <command>\r\n'
    line = m.group(1).strip()
    if len(line) >= 2 and line[0] == '"' and line[-1] == '"' and line.count('"') == 2:
        line = line[1:-1]  # cmd /c "…": outer quotes stripped (cmd /? rules for exactly two quotes)
    # redirections, outside quotes
    redirs, rest, i, quoted = [], [], 0, False
    while i < len(line):
        c = line[i]
        if c == '"':
            quoted = not quoted
        if not quoted:
            if line.startswith('2>&1', i):
                redirs.append(('2>&1', None))
                i += 4
                continue
            r = re.match(r'([12]?>>|[12]?>)\s*("[^"]*"|[^\s"]+)', line[i:])
            if r:
                redirs.append((r.group(1), r.group(2).strip('"')))
                i += len(r.group(0))
                continue
            if c in '&|':
                return 1, '', 'stand-in: cmd.exe command chaining and pipes are not implemented\r\n'
        rest.append(c)
        i += 1
    argv = split_args(''.join(rest))
    if not argv:
        return 0, '', ''
    name = argv[0]
    if name.lower() == 'echo':
        code, out, err = 0, ''.join(rest).strip()[4:].strip() + '\r\n', ''
    elif name.lower() == 'type':
        try:
            with open(host_path(argv[1]), encoding='utf-8', errors='replace') as f:
                code, out, err = 0, f.read(), ''
        except (IndexError, OSError):
            code, out, err = 1, '', 'The system cannot find the file specified.\r\n'
    elif re.match(r'^[A-Za-z]:[\\/]', name) or '\\' in name:
        if not os.path.isfile(host_path(name)):
            code, out, err = 1, '', 'The system cannot find the path specified.\r\n'
        else:
            code, out, err = run_program(name, argv[1:])
    else:
        # no PATH search in the stand-in: the guest's PATH has no diskspd, as a plain install
        code, out, err = 9009, '', f"'{name}' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n"
    streams = {'1': None, '2': None}
    for op, tgt in redirs:
        if op == '2>&1':
            streams['2'] = streams['1']
            continue
        fd = '2' if op.startswith('2') else '1'
        p = host_path(tgt)
        if not os.path.isdir(os.path.dirname(p)):
            return 1, '', 'The system cannot find the path specified.\r\n'
        streams[fd] = (p, 'a' if op.endswith('>>') else 'w')
    for fd, text in (('1', out), ('2', err)):
        if streams[fd] is not None:
            p, mode = streams[fd]
            with open(p, mode, encoding='utf-8', newline='') as f:
                f.write(text)
            if fd == '1' and streams['2'] == streams['1']:
                streams['2'] = (p, 'a')
    return code, '', ''


def main():
    prog, arguments = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ''
    base = re.split(r'[\\/]', prog)[-1].lower()
    if base == 'cmd.exe':
        code, _, _ = run_cmd(arguments)
    else:
        # started by Tools, stdout/stderr go nowhere (the harness gives /dev/null); started by
        # Start-Process, to its redirection files
        code, out, err = run_program(prog, split_args(arguments))
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.stdout.flush()
        sys.stderr.flush()
    # Windows exit codes are 32-bit; a Linux exit status keeps 8 bits, so the harness reads this
    if os.environ.get('STORSWEEP_GUEST_EXIT'):
        with open(os.environ['STORSWEEP_GUEST_EXIT'], 'w', encoding='utf-8') as f:
            f.write(str(code))
    sys.exit(code & 0xFF)


if __name__ == '__main__':
    main()

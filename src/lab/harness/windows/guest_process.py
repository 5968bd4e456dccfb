# STAND-IN for the processes of a Hyper-V guest (Windows cannot run here), used by the powershell.exe
# stand-in's PowerShell Direct shapes. A program started in the VM (the GUEST_RUN shape's
# Start-Process) is a REAL background process here — `python3 guest_process.py <state dir> <vm>
# <ProcessId> <argv as JSON>` in a session of its own, so it outlives the SSH session and the
# storsweep that started it, as a guest process outlives the host process that asked for it — and an
# entry in the VM's process table (hyperv.json vms[<vm>].processes):
#   {ProcessId, Name, CreationDate (UTC, .NET round-trip "o" format), CommandLine, ExecutablePath,
#    hostPid, hostStart (the host process's start in clock ticks since boot, /proc/<pid>/stat field 22)}
# An entry is running while its host process is (same pid AND same start: Linux reuses pids too);
# one whose host process is gone is gone from the table. Windows numbers processes with multiples of
# 4; the table hands them out from vms[<vm>].nextProcessId. `System Idle Process` (0) and `System`
# (4) are always there (Win32_Process lists them on every Windows).
#
# What runs: diskspd.exe only (diskspd_standin.py on the VM's disks, under the model's lock), then it
# lasts its warm-up + duration + cool-down (-W, -d, -C; DiskSpd's defaults 5 s, 10 s, 0 s) like the
# real tool, prints its output to stdout (Start-Process's -RedirectStandardOutput file) and leaves
# the table. Stop-Process ends it at once (TerminateProcess: SIGKILL here).
import fcntl
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import diskspd_standin  # noqa: E402

SYSTEM_PROCESSES = [
    {'ProcessId': 0, 'Name': 'System Idle Process', 'CommandLine': None, 'ExecutablePath': None},
    {'ProcessId': 4, 'Name': 'System', 'CommandLine': None, 'ExecutablePath': None},
]


def split_args(line):
    """A Windows command line → argv, by the Microsoft C runtime's rules (learn.microsoft.com "Parsing
    C++ command-line arguments": whitespace separates, "…" groups, backslashes are literal except
    before a quote, where 2n of them make n and 2n+1 make n and a literal quote)."""
    out, cur, i, quoted, have = [], [], 0, False, False
    while i < len(line):
        c = line[i]
        if c == '\\':
            j = i
            while j < len(line) and line[j] == '\\':
                j += 1
            n = j - i
            if j < len(line) and line[j] == '"':
                cur.append('\\' * (n // 2))
                if n % 2:
                    cur.append('"')
                    i = j + 1
                else:
                    i = j
                have = True
                continue
            cur.append('\\' * n)
            i, have = j, True
            continue
        if c == '"':
            quoted, have = not quoted, True
        elif c in ' \t' and not quoted:
            if have:
                out.append(''.join(cur))
            cur, have = [], False
        else:
            cur.append(c)
            have = True
        i += 1
    if have:
        out.append(''.join(cur))
    return out


def start_ticks(pid):
    """A host process's start (clock ticks since boot), or None when it is gone or a zombie."""
    try:
        with open(f'/proc/{pid}/stat', encoding='utf-8') as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(')') + 1:].split()
    return None if rest[0] in ('Z', 'X') else int(rest[19])


def start_time(pid):
    """A host process's start time (stat field 22 in clock ticks since boot, plus btime), in .NET's
    round-trip format ("o": UTC, 7 fraction digits, Z) — what Process.StartTime.ToUniversalTime()
    .ToString('o') gives for the process on Windows."""
    ticks = start_ticks(pid)
    with open('/proc/stat', encoding='utf-8') as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith('btime '))
    t = btime + (ticks or 0) / os.sysconf('SC_CLK_TCK')
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t)) + f'.{int(round((t % 1) * 1e7)) % 10**7:07d}Z'


def running(entry):
    return entry.get('hostPid') is None or start_ticks(entry['hostPid']) == entry.get('hostStart')


def live(vm):
    """The VM's running processes (the table pruned of ended ones), system processes first."""
    vm['processes'] = [p for p in vm.get('processes', []) if running(p)]
    return [{**p, 'CreationDate': None} for p in SYSTEM_PROCESSES] + vm['processes']


def new_process_id(vm):
    pid = vm.get('nextProcessId', 4000)
    vm['nextProcessId'] = pid + 4
    return pid


def lock(state_dir):
    f = open(os.path.join(state_dir, 'hyperv.lock'), 'w')
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def load(state_dir):
    with open(os.path.join(state_dir, 'hyperv.json'), encoding='utf-8') as f:
        return json.load(f)


def save(state_dir, state):
    path = os.path.join(state_dir, 'hyperv.json')
    with open(path + '.tmp', 'w', encoding='utf-8') as f:
        json.dump(state, f, indent=1)
    os.replace(path + '.tmp', path)


def main():
    state_dir, vm_name, process_id, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    with lock(state_dir):
        state = load(state_dir)
        vm = state['vms'][vm_name]
        code, out = diskspd_standin.run(state, vm, vm_name, argv)
        save(state_dir, state)
    secs = 0
    if code == 0:
        opts, _ = diskspd_standin.parse(argv)
        secs = sum(int(opts.get(o, d) or d) for o, d in (('-W', '5'), ('-d', '10'), ('-C', '0')))
    time.sleep(secs)
    sys.stdout.write(out)
    sys.stdout.flush()
    with lock(state_dir):
        state = load(state_dir)
        vm = state['vms'].get(vm_name)
        if vm is not None:
            vm['processes'] = [p for p in vm.get('processes', []) if p.get('ProcessId') != process_id or p.get('hostPid') != os.getpid()]
            save(state_dir, state)
    sys.exit(code)


if __name__ == '__main__' and len(sys.argv) == 5 and re.fullmatch(r'\d+', sys.argv[3]):
    main()

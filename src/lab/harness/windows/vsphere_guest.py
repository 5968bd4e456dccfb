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
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import diskspd_standin  # noqa: E402

FS = os.environ.get('STORSWEEP_GUEST_FS', '')
MODEL = os.environ.get('STORSWEEP_GUEST_MODEL', '')
STATE = os.environ.get('STORSWEEP_GUEST_STATE', '')
CWD = os.environ.get('STORSWEEP_GUEST_CWD', 'C:\\')


def split_args(line):
    """Microsoft C runtime argument splitting."""
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
    with open(MODEL, encoding='utf-8') as f:
        model = json.load(f)
    try:
        with open(STATE, encoding='utf-8') as f:
            st = json.load(f)
    except FileNotFoundError:
        st = {'numbers': {}, 'media': {}}
    slots = [d['slot'] for d in model['disks']]
    # a detached disk gives its number back
    st['numbers'] = {s: n for s, n in st['numbers'].items() if s in slots}
    for s in slots:
        if s not in st['numbers']:
            used = set(st['numbers'].values())
            st['numbers'][s] = next(n for n in range(len(slots) + 1) if n not in used)
    state = {'disks': [], 'files': {}}
    vm = {'drives': {}, 'guestDisks': {}, 'guestVolumes': {}, 'guestDiskState': {}}
    for d in model['disks']:
        key = 'vsphere:' + d['slot']
        med = st['media'].setdefault(d['slot'], {})
        if med.get('serial') != d['serial'] or med.get('size') != d['size']:
            # another disk in that slot: what the last one had written is not on it
            med.clear()
            med.update({'serial': d['serial'], 'size': d['size'], 'type': 'Fixed', 'formatted': False})
        state['files'][key] = med
        vm['drives'][d['slot']] = {'Path': key}
        vm['guestDisks'][str(st['numbers'][d['slot']])] = d['slot']
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
    return 1, '', f'stand-in: {prog} is not a program the Windows guest stand-in runs\r\n'


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
        # no console: a started program's output goes nowhere (StartProgramInGuest has no stdio)
        code, _, _ = run_program(prog, split_args(arguments))
    # Windows exit codes are 32-bit; a Linux exit status keeps 8 bits, so the harness reads this
    if os.environ.get('STORSWEEP_GUEST_EXIT'):
        with open(os.environ['STORSWEEP_GUEST_EXIT'], 'w', encoding='utf-8') as f:
            f.write(str(code))
    sys.exit(code & 0xFF)


main()

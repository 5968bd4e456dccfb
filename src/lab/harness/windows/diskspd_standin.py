# STAND-IN for Microsoft DiskSpd (`diskspd.exe`, github.com/microsoft/diskspd) inside a Hyper-V guest,
# reached by the powershell.exe stand-in's PowerShell Direct shape. DiskSpd cannot run here, so this
# module: (1) parses the command line with DiskSpd's documented grammar (CmdLineParser.cpp and the
# wiki "Command line and parameters": options start with '-' or '/', all options precede the targets,
# sizes take K/M/G/T suffixes or 'b' = blocks where documented) and refuses anything else the way
# diskspd does ("Invalid option", exit 1); (2) resolves the target in the guest model: a file on a
# guest volume letter (vm.guestVolumes → the host drive slot holding the VHDX; only a VHDX the model
# marks `formatted` has a volume — New-VHD never does) or #<disk number> (vm.guestDisks → the slot,
# holding a VHDX or a pass-through disk; any other number is no disk); a file must exist or be created with -c, which records it inside the attached VHDX
# (so it disappears with the VHDX); (3) prints -Rxml output in DiskSpd 2.2's XML layout
# (XmlResultParser.cpp), with numbers from a small deterministic device model — latency = fixed cost
# + transfer time, concurrency capped, bandwidth capped — so results are plausible, reproducible and
# follow the parameters. It measures nothing.
#
# What was written: every run's writes are recorded per target (file name, or the raw disk) as the
# byte ranges they covered — sequential from the base offset -B within the region (-f, else the file or
# disk size), random ones as a covered share. `-c` re-creates the file on EVERY run and writes no data:
# diskspd IORequestGenerator.cpp `_GenerateRequestsForTimeSpan` ("check if user wanted to create a
# file" → `_CreateFile` for each target with a size, skipping `#N` and `X:`), and `_CreateFile` does
# CreateFile(CREATE_ALWAYS), SetEndOfFile, then SetFileValidData — no data written when the
# SE_MANAGE_VOLUME_NAME privilege is held (an elevated guest session). On a Dynamic VHDX, a read of a
# block no one wrote returns zeros from the VHDX's block allocation table without touching the host
# volume, so it is far faster than a read of written data; on a Fixed VHDX every block is on disk.
# (Simplification: a re-created file starts with nothing written; stale clusters are not modelled.)
import re

import guest_storage

MiB = 1024 * 1024
UNITS = {'K': 1024, 'M': MiB, 'G': 1024 * MiB, 'T': 1024 ** 4}
VERSION, VERSION_DATE = '2.2', '2024/6/3'

# The device model: per-I/O fixed cost in ms (random adds seek-like overhead), a bandwidth ceiling and
# the number of I/Os the virtual disk serves concurrently.
READ_MS, WRITE_MS, RANDOM_MS = 0.060, 0.090, 0.020
BANDWIDTH = 1_600_000_000  # bytes/s
# a read of an unallocated Dynamic-VHDX block: no host I/O, a memory-speed zero fill
ZERO_READ_MS, ZERO_BANDWIDTH = 0.008, 12_000_000_000
PARALLEL = 16
PERCENTILES = [(0, 0.35), (25, 0.8), (50, 0.95), (75, 1.1), (90, 1.35), (95, 1.6), (99, 2.4), (99.9, 4.0), (99.99, 7.5), (100, 12.0)]


class DiskspdError(Exception):
    pass


SIZE = r'(\d+)([KMGT]?)'
# option letter(s) → value pattern (None: no value). Only options DiskSpd documents; values checked.
OPTIONS = [
    ('-ag', r''), ('-a', r'\d+(,\d+)*'), ('-b', SIZE), ('-B', SIZE + r'|\d+b'), ('-c', SIZE + r'|\d+b'), ('-C', r'\d+'),
    ('-D', r'\d*'), ('-d', r'\d+'), ('-fr', r''), ('-fs', r''), ('-ft', r''), ('-f', SIZE + r'|\d+b'), ('-F', r'\d+'),
    ('-g', r'\d+i?'), ('-h', r''), ('-i', r'\d+'), ('-I', r'[123]'), ('-j', r'\d+'), ('-l', r''), ('-L', r''), ('-n', r''),
    ('-o', r'\d+'), ('-O', r'\d+'), ('-p', r''), ('-P', r'\d+'), ('-rs', r'\d{1,3}'), ('-r', r'(' + SIZE + r'|\d+b)?'),
    ('-R', r'p?(text|xml)'), ('-si', r'(' + SIZE + r')?'), ('-s', r'(' + SIZE + r')?'), ('-S', r'[bhmruw]*'),
    ('-t', r'\d+'), ('-T', SIZE + r'|\d+b'), ('-v', r''), ('-w', r'\d{1,3}'), ('-W', r'\d+'), ('-x', r''),
    ('-z', r'\d*'), ('-Z', r'.*'),
]

# -Z, exactly as diskspd reads it (CmdLineParser.cpp `case 'Z'`, `_GetRandomDataWriteBufferData`,
# `_GetSizeInBytes`; usage "Write buffers"): `-Z` zeros; `-Zr` (nothing after the r) per-I/O random
# data; otherwise `-Z<size>[,<file>]`: digits, then at most one of K M G T (binary) or B (blocks of the
# block size stated so far, 64K before any -b), upper or lower case, and nothing else; a size of 0 is
# refused ("invalid size passed to -Z"). A buffer smaller than the block is refused when the profile
# is checked (Common.cpp "custom write buffer (-Z) is smaller than the block size").
Z_SIZE = re.compile(r'(\d+)([KMGTBkmgtb]?)')


def write_buffer(value, opts):
    """The -Z value → ('zero' | 'random-per-io' | ('random', bytes, file or '')); DiskspdError as diskspd words it."""
    if value == '':
        return 'zero'
    if value == 'r':
        return 'random-per-io'
    text, _, path = value.partition(',')
    m = Z_SIZE.fullmatch(text)
    if not m:
        digits = re.match(r'\d*', text).group(0)
        rest = text[len(digits):]
        if not digits:
            detail = 'Invalid integer'
        elif rest[:1].upper() not in ('K', 'M', 'G', 'T', 'B'):
            detail = f"Invalid size '{rest[:1]}'. Valid: K - KiB, M - MiB, G - GiB, T - TiB, B - block"
        else:
            detail = 'Unrecognized characters after size specification'
        raise DiskspdError(f"{detail}\nERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Z{value}'")
    unit = m.group(2).upper()
    mult = size(opts['-b']) if unit == 'B' and '-b' in opts else 64 * 1024 if unit == 'B' else UNITS.get(unit, 1)
    cb = int(m.group(1)) * mult
    if cb <= 0:
        raise DiskspdError(f"ERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Z{value}'")
    return ('random', cb, path)


def size(tok, block=None):
    if tok.endswith('b'):
        return int(tok[:-1]) * block
    m = re.fullmatch(SIZE, tok)
    return int(m.group(1)) * UNITS.get(m.group(2), 1)


def parse(argv):
    """argv → ({option: value}, [targets]); raises DiskspdError with diskspd's wording."""
    opts, i = {}, 0
    while i < len(argv) and argv[i][:1] in ('-', '/') and len(argv[i]) > 1:
        a = '-' + argv[i][1:]
        for name, pat in OPTIONS:
            if a.startswith(name) and re.fullmatch(pat, a[len(name):]):
                if name in opts:
                    raise DiskspdError(f'ERROR: option {name} specified more than once')
                opts[name] = a[len(name):]
                if name == '-Z':
                    # read where it stands: a `b` suffix counts the blocks of the -b given before it
                    opts['#Z'] = write_buffer(opts[name], opts)
                break
        else:
            raise DiskspdError(f"Invalid option: '{argv[i]}'")
        i += 1
    targets = argv[i:]
    for t in targets:
        if t[:1] in ('-', '/'):
            raise DiskspdError(f"ERROR: options must precede targets: '{t}'")
    if not targets:
        raise DiskspdError('ERROR: need to provide at least one filename')
    return opts, targets


def check(opts):
    block = size(opts.get('-b', '64K'))
    if block <= 0:
        raise DiskspdError('ERROR: block size must be greater than 0')
    for k in ('-o', '-t', '-d'):
        if k in opts and int(opts[k]) < 1:
            raise DiskspdError(f'ERROR: {k} must be at least 1')
    if '-w' in opts and int(opts['-w']) > 100:
        raise DiskspdError('ERROR: write ratio (-w) must be between 0 and 100')
    if '-r' in opts and ('-s' in opts or '-si' in opts):
        raise DiskspdError('ERROR: -r and -s are mutually exclusive')
    if '-h' in opts and '-S' in opts:
        raise DiskspdError('ERROR: -h is a deprecated alias of -Sh and cannot be combined with -S')
    buf = opts.get('#Z')
    if isinstance(buf, tuple) and buf[1] < block:
        raise DiskspdError(f'ERROR: custom write buffer (-Z) is smaller than the block size. Write buffer size: {buf[1]} block size: {block}')
    return block


def resolve(state, vm, target):
    """The guest target → (host VHDX file model, file name inside it or None for a raw disk/partition).

    DiskSpd takes three kinds of target: "regular files …, named partitions: DriveLetter:, e.g. C:,
    X:, …, physical devices: #PhysicalDiskId, e.g. #1, #5" (microsoft/diskspd wiki, "Command line
    and parameters"; CmdLineParser.cpp usage: `#<physical drive number>`, `<partition_drive_letter>:`).
    A partition is I/O on the volume itself, bounded by it, like a disk: no file is created in it.
    """
    not_found = DiskspdError(f'ERROR: Could not open {target}: The system cannot find the path specified. (error code: 3)')
    letter = re.match(r'([A-Za-z]):', target)
    if letter and target[:2].upper() not in vm.get('guestVolumes', {}):
        # a volume the guest's Storage cmdlets made (guest_storage.py): New-Partition gave it the
        # letter, Format-Volume a file system; files live in that volume
        found = guest_storage.volume_for_letter(state, vm, letter.group(1))
        if found is None:
            raise not_found
        slot, med, part = found
        part['size'], part['type'] = part['Size'], med.get('type')
        if len(target) == 2:
            return part, None, slot
        m = re.fullmatch(r'([A-Za-z]:)\\((?:[\w .-]+\\)*[\w .-]+)', target)
        if not m:
            raise DiskspdError(f'ERROR: The filename, directory name, or volume label syntax is incorrect: {target}')
        return part, m.group(2).lower(), slot
    m = re.fullmatch(r'#(\d+)', target)
    if m:
        # #N exists only for a disk the guest has: vm.guestDisks maps the guest's disk number to the
        # drive slot; no slot, or nothing attached there, and Windows has no PhysicalDriveN to open
        slot, name = vm.get('guestDisks', {}).get(m.group(1)), None
        drive = vm['drives'].get(slot) if slot else None
        if drive and isinstance(drive.get('DiskNumber'), int):
            # a pass-through disk: the whole host disk
            disk = next((d for d in state['disks'] if d['Number'] == drive['DiskNumber']), None)
            if disk is None:
                raise not_found
            return {'size': disk['Size']}, None, slot
    elif re.fullmatch(r'[A-Za-z]:', target):
        slot, name = vm.get('guestVolumes', {}).get(target.upper()), None
    else:
        m = re.fullmatch(r'([A-Za-z]:)\\((?:[\w .-]+\\)*[\w .-]+)', target)
        if not m:
            raise DiskspdError(f'ERROR: The filename, directory name, or volume label syntax is incorrect: {target}')
        slot, name = vm.get('guestVolumes', {}).get(m.group(1).upper()), m.group(2).lower()
    drive = vm['drives'].get(slot) if slot else None
    if not drive or drive.get('Path') not in state['files']:
        raise not_found
    f = state['files'][drive['Path']]
    if target[:1] != '#' and not f.get('formatted'):
        # A drive letter exists only for a volume: New-VHD makes an uninitialised disk (no partition
        # table, no partition, no filesystem; Microsoft's New-VHD examples pipe it into
        # Initialize-Disk | New-Partition -AssignDriveLetter | Format-Volume before it is usable,
        # learn.microsoft.com/powershell/module/hyper-v/new-vhd), so the guest has no such letter.
        raise not_found
    return f, name, slot


def usage():
    # CmdLineParser.cpp _DisplayUsageInfo: a blank line, "Usage: %s [options] target1 [ target2 [ target3 ...] ]",
    # "version %s (%s)" (DISKSPD_NUMERIC_VERSION_STRING, DISKSPD_DATE_VERSION_STRING), then the options
    # (left out here); shown for -? and when no argument is given, and the command fails.
    return f'\nUsage: diskspd [options] target1 [ target2 [ target3 ...] ]\nversion {VERSION} ({VERSION_DATE})\n\nAvailable targets:\n       file_path\n       #<physical drive number>\n       <partition_drive_letter>:\n'


def run(state, vm, vm_name, argv):
    """One diskspd invocation → (exit code, output text)."""
    if argv in ([], ['-?'], ['/?']):
        return 1, usage()
    try:
        opts, targets = parse(argv)
        block = check(opts)
        if len(targets) != 1:
            raise DiskspdError('stand-in: exactly one target is implemented')
        if opts.get('-R', 'text').lstrip('p') != 'xml':
            raise DiskspdError('stand-in: only -Rxml output is implemented')
        z = opts.get('#Z')
        if isinstance(z, tuple) and z[2]:
            # the model holds no guest file but the test targets: an entropy file never opens
            # (Common.cpp `_FillRandomDataWriteBuffer`: "Unable to open entropy file")
            raise DiskspdError(f"ERROR: Unable to open entropy file '{z[2]}'")
        target = targets[0]
        vhd, name, slot = resolve(state, vm, target)
        st = vm.get('guestDiskState', {}).get(slot, {})
        if int(opts.get('-w', '0')) > 0 and (st.get('IsOffline') or st.get('IsReadOnly')):
            # Windows blocks writes to an offline or read-only disk: "disks that are left offline will
            # be read-only" (Learn, diskpart "san"); a write then fails with ERROR_WRITE_PROTECT (19),
            # which diskspd prints from its I/O loop (IORequestGenerator.cpp: "error during overlapped
            # IO operation (error code: %u)") before giving up on the threads (layout as captured in
            # a public diskspd report for another error code)
            return 1, ('error during overlapped IO operation (error code: 19)\n'
                       'There has been an error during threads execution\nError generating I/O requests\n')
        written = vhd.setdefault('guestWritten', {}) if vhd is not None else {}
        key = name if name is not None else '#raw'
        if name is not None:
            files = vhd.setdefault('guestFiles', {})
            if '-c' in opts:
                want = size(opts['-c'], block)
                # IORequestGenerator.cpp `_CreateFile`: CreateFile(CREATE_ALWAYS) empties the file (its
                # room is free again), SetFilePointerEx to the size, then SetEndOfFile, which fails
                # with ERROR_DISK_FULL (112) when the volume cannot hold it: diskspd prints "Error
                # setting end of file (error code: %u)" and gives up (GenerateRequests returns false);
                # the file stays, empty. On a volume the storage cmdlets made, the room is the
                # volume's free space (guest_storage.volume_free, what Get-Volume's SizeRemaining says).
                formatted = vhd.get('volume') is not None
                files[name] = 0
                room = guest_storage.volume_free(vhd) if formatted else vhd['size'] - block
                if want > room:
                    written[key] = {'ranges': [], 'random': 0.0}
                    raise DiskspdError('Error setting end of file (error code: 112)')
                files[name] = want
                written[key] = {'ranges': [], 'random': 0.0}  # SetFileValidData: sized, nothing written
            if name not in files:
                raise DiskspdError(f'ERROR: Could not open {target}: The system cannot find the file specified. (error code: 2)')
            file_size = files[name]
        else:
            file_size = vhd['size'] if vhd else 1024 ** 4
        if file_size < block:
            raise DiskspdError(f'ERROR: The file is too small. File: {target} (size: {file_size}, block size: {block})')
        region = min(size(opts['-f'], block), file_size) if '-f' in opts else file_size
        base = size(opts['-B'], block) if '-B' in opts else 0
        if base >= region:
            raise DiskspdError(f'ERROR: base file offset ({base}) is not below the target size ({region}): {target}')
        w = written.setdefault(key, {'ranges': [], 'random': 0.0})
        dynamic = vhd is not None and vhd.get('type') == 'Dynamic'
        unwritten = 1.0 - written_share(w, region) if dynamic else 0.0
        out, write_bytes = xml(vm_name, target, opts, block, file_size, unwritten)
        if vhd is not None and write_bytes > 0:
            record_writes(w, '-r' in opts, base, write_bytes, region)
            # what the writes carried, for a test to read back: the -Z buffer (bytes), zero, per-io, or
            # diskspd's default repeating 0..255 pattern
            data = f'random:{z[1]}' if isinstance(z, tuple) else z if isinstance(z, str) else 'pattern'
            if data not in w.setdefault('data', []):
                w['data'].append(data)
        return 0, out
    except DiskspdError as e:
        return 1, str(e) + '\n'


def merge(ranges):
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def written_share(w, region):
    """The share of [0, region) written so far: sequential ranges, then random writes over the rest."""
    seq = sum(min(b, region) - a for a, b in w['ranges'] if a < region) / region
    return seq + (1 - seq) * w['random']


def record_writes(w, rnd, base, nbytes, region):
    """A pass's writes: sequential from -B, wrapping to the base at the end of the region; random ones
    land uniformly, so n bytes cover 1 - e^(-n/size) of the region in expectation."""
    if rnd:
        import math
        w['random'] = 1 - (1 - w['random']) * math.exp(-nbytes / region)
    else:
        w['ranges'] = merge(w['ranges'] + [[base, min(region, base + nbytes)]])


def xml(vm_name, target, opts, block, file_size, unwritten=0.0):
    qd, threads, wpct = int(opts.get('-o', '2')), int(opts.get('-t', '1')), int(opts.get('-w', '0'))
    dur, warm, cool = int(opts.get('-d', '10')), int(opts.get('-W', '5')), int(opts.get('-C', '0'))
    rnd = '-r' in opts
    outstanding = qd * threads
    # service time of one I/O, then Little's law with a concurrency cap and a bandwidth cap
    mix = (READ_MS * (100 - wpct) + WRITE_MS * wpct) / 100
    svc_ms = mix + (RANDOM_MS if rnd else 0) + block / BANDWIDTH * 1000
    rd_svc = READ_MS + (RANDOM_MS if rnd else 0) + block / BANDWIDTH * 1000
    cap = BANDWIDTH / block
    if unwritten > 0:
        # reads of never-written blocks of a Dynamic VHDX: zeros without host I/O
        rd_svc = (1 - unwritten) * rd_svc + unwritten * (ZERO_READ_MS + block / ZERO_BANDWIDTH * 1000)
        wr_svc = WRITE_MS + (RANDOM_MS if rnd else 0) + block / BANDWIDTH * 1000
        svc_ms = (rd_svc * (100 - wpct) + wr_svc * wpct) / 100
        read_bw = 1 / ((1 - unwritten) / BANDWIDTH + unwritten / ZERO_BANDWIDTH)
        cap = 1 / (((100 - wpct) / 100) / read_bw + (wpct / 100) / BANDWIDTH) / block
    iops = min(min(outstanding, PARALLEL) / svc_ms * 1000, cap)
    lat_ms = outstanding / iops * 1000
    per_thread = int(iops * dur) // threads
    writes_pt = per_thread * wpct // 100
    reads_pt = per_thread - writes_pt
    rd_ms = lat_ms * rd_svc / svc_ms
    wr_ms = lat_ms * (WRITE_MS + (RANDOM_MS if rnd else 0) + block / BANDWIDTH * 1000) / svc_ms
    has_r, has_w = wpct < 100, wpct > 0
    cpu = min(95.0, 2.0 + iops / 20000)
    sh = '-Sh' if '-h' in opts else opts.get('-S')
    # CmdLineParser.cpp usage: "-S or -Su: disable software caching", "-Sw: enable writethrough (no hardware
    # write caching)", "-Sh: equivalent -Suw" — a bare -S turns the OS cache off and leaves write-through off.
    no_cache = sh is not None and ('h' in sh or 'u' in sh or sh == '')
    write_through = sh is not None and ('h' in sh or 'w' in sh)
    # Common.cpp Target::GetXml <WriteBufferContent>: zero; random with <RandomDataSource> (-Z<size>[,file]);
    # else sequential — -Zr too: per-I/O random data is a time span setting the target XML does not show
    z = opts.get('#Z')
    if isinstance(z, tuple):
        buf = '<Pattern>random</Pattern><RandomDataSource>' + f'<SizeInBytes>{z[1]}</SizeInBytes>' + (f'<FilePath>{z[2]}</FilePath>' if z[2] else '') + '</RandomDataSource>'
    else:
        buf = '<Pattern>zero</Pattern>' if z == 'zero' else '<Pattern>sequential</Pattern>'
    f = lambda v: f'{v:.3f}'  # noqa: E731
    out = ['<Results>', '  <System>', f'    <ComputerName>{vm_name}</ComputerName>', '    <Tool>', f'      <Version>{VERSION}</Version>',
           f'      <VersionDate>{VERSION_DATE}</VersionDate>', '    </Tool>', '    <RunTime>2024/06/03 12:00:00 UTC</RunTime>',
           '    <ProcessorTopology>', '      <Group Group="0" MaximumProcessors="2" ActiveProcessors="2" ActiveProcessorMask="0x3"/>',
           '      <Node Node="0" Group="0" Mask="0x3"/>', '      <Socket>', '        <Group Group="0" Mask="0x3"/>', '      </Socket>',
           '      <Core Group="0" Mask="0x1" EfficiencyClass="0"/>', '      <Core Group="0" Mask="0x2" EfficiencyClass="0"/>',
           '    </ProcessorTopology>', '  </System>', '  <Profile>', '    <Progress>0</Progress>', '    <ResultFormat>xml</ResultFormat>',
           '    <Verbose>false</Verbose>', '    <TimeSpans>', '      <TimeSpan>', '        <CompletionRoutines>false</CompletionRoutines>',
           f'        <MeasureLatency>{"true" if "-L" in opts else "false"}</MeasureLatency>', '        <CalculateIopsStdDev>false</CalculateIopsStdDev>',
           f'        <DisableAffinity>{"true" if "-n" in opts else "false"}</DisableAffinity>', f'        <Duration>{dur}</Duration>',
           f'        <Warmup>{warm}</Warmup>', f'        <Cooldown>{cool}</Cooldown>', '        <ThreadCount>0</ThreadCount>', '        <RequestCount>0</RequestCount>',
           '        <IoBucketDuration>1000</IoBucketDuration>', '        <RandSeed>0</RandSeed>', '        <Targets>', '          <Target>',
           f'            <Path>{target}</Path>', f'            <BlockSize>{block}</BlockSize>', '            <BaseFileOffset>0</BaseFileOffset>',
           '            <SequentialScan>false</SequentialScan>', '            <RandomAccess>false</RandomAccess>', '            <TemporaryFile>false</TemporaryFile>',
           '            <UseLargePages>false</UseLargePages>', f'            <DisableOSCache>{str(no_cache).lower()}</DisableOSCache>',
           f'            <WriteThrough>{str(write_through).lower()}</WriteThrough>', f'            <WriteBufferContent>{buf}</WriteBufferContent>',
           '            <ParallelAsyncIO>false</ParallelAsyncIO>', f'            <FileSize>{size(opts["-c"], block) if "-c" in opts else 0}</FileSize>',
           (f'            <Random>{block}</Random>' if rnd else f'            <StrideSize>{block}</StrideSize>\n            <InterlockedSequential>{"true" if "-si" in opts else "false"}</InterlockedSequential>'),
           '            <ThreadStride>0</ThreadStride>', '            <MaxFileSize>0</MaxFileSize>', f'            <RequestCount>{qd}</RequestCount>',
           f'            <WriteRatio>{wpct}</WriteRatio>', '            <Throughput>0</Throughput>', f'            <ThreadsPerFile>{threads}</ThreadsPerFile>',
           '            <IOPriority>3</IOPriority>', '            <Weight>1</Weight>', '          </Target>', '        </Targets>', '      </TimeSpan>',
           '    </TimeSpans>', '  </Profile>', '  <TimeSpan>', f'    <TestTimeSeconds>{dur}.00</TestTimeSeconds>', f'    <ThreadCount>{threads}</ThreadCount>',
           '    <RequestCount>0</RequestCount>', '    <ProcCount>2</ProcCount>', '    <CpuUtilization>']
    for i in range(2):
        out += ['      <CPU>', '        <Socket>0</Socket>', '        <Node>0</Node>', '        <Group>0</Group>', f'        <Core>{i}</Core>',
                '        <EfficiencyClass>0</EfficiencyClass>', f'        <Id>{i}</Id>', f'        <UsagePercent>{cpu:.2f}</UsagePercent>',
                f'        <UserPercent>{cpu / 5:.2f}</UserPercent>', f'        <KernelPercent>{cpu * 4 / 5:.2f}</KernelPercent>', f'        <IdlePercent>{100 - cpu:.2f}</IdlePercent>', '      </CPU>']
    out += ['      <Average>', f'        <UsagePercent>{cpu:.2f}</UsagePercent>', f'        <UserPercent>{cpu / 5:.2f}</UserPercent>',
            f'        <KernelPercent>{cpu * 4 / 5:.2f}</KernelPercent>', f'        <IdlePercent>{100 - cpu:.2f}</IdlePercent>', '      </Average>', '    </CpuUtilization>']
    if '-L' in opts:
        out.append(f'    <Latency ReadHistoBuckets="{len(PERCENTILES) if has_r else 0}" WriteHistoBuckets="{len(PERCENTILES) if has_w else 0}" TotalHistoBuckets="{len(PERCENTILES)}">')
        if has_r:
            out += [f'      <AverageReadMilliseconds>{f(rd_ms)}</AverageReadMilliseconds>', f'      <ReadLatencyStdev>{f(rd_ms * 0.3)}</ReadLatencyStdev>']
        if has_w:
            out += [f'      <AverageWriteMilliseconds>{f(wr_ms)}</AverageWriteMilliseconds>', f'      <WriteLatencyStdev>{f(wr_ms * 0.3)}</WriteLatencyStdev>']
        out += [f'      <AverageTotalMilliseconds>{f(lat_ms)}</AverageTotalMilliseconds>', f'      <LatencyStdev>{f(lat_ms * 0.3)}</LatencyStdev>']
        for p, k in PERCENTILES:
            out += ['      <Bucket>', f'        <Percentile>{p}</Percentile>']
            if has_r:
                out.append(f'        <ReadMilliseconds>{f(rd_ms * k)}</ReadMilliseconds>')
            if has_w:
                out.append(f'        <WriteMilliseconds>{f(wr_ms * k)}</WriteMilliseconds>')
            out += [f'        <TotalMilliseconds>{f(lat_ms * k)}</TotalMilliseconds>', '      </Bucket>']
        out.append('    </Latency>')
    for t in range(threads):
        out += ['    <Thread>', f'      <Id>{t}</Id>', '      <Target>', f'        <Path>{target}</Path>', f'        <BytesCount>{per_thread * block}</BytesCount>',
                f'        <FileSize>{file_size}</FileSize>', f'        <IOCount>{per_thread}</IOCount>', f'        <ReadBytes>{reads_pt * block}</ReadBytes>',
                f'        <ReadCount>{reads_pt}</ReadCount>', f'        <WriteBytes>{writes_pt * block}</WriteBytes>', f'        <WriteCount>{writes_pt}</WriteCount>']
        if '-L' in opts:
            if has_r:
                out += [f'        <AverageReadLatencyMilliseconds>{f(rd_ms)}</AverageReadLatencyMilliseconds>', f'        <ReadLatencyStdev>{f(rd_ms * 0.3)}</ReadLatencyStdev>']
            if has_w:
                out += [f'        <AverageWriteLatencyMilliseconds>{f(wr_ms)}</AverageWriteLatencyMilliseconds>', f'        <WriteLatencyStdev>{f(wr_ms * 0.3)}</WriteLatencyStdev>']
            out += [f'        <AverageLatencyMilliseconds>{f(lat_ms)}</AverageLatencyMilliseconds>', f'        <LatencyStdev>{f(lat_ms * 0.3)}</LatencyStdev>']
        out += ['      </Target>', '    </Thread>']
    out += ['  </TimeSpan>', '</Results>']
    return '\r\n'.join(out) + '\r\n', writes_pt * threads * block

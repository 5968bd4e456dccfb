// The pure parts of a host monitor's ownership (providers/esxi-shell/host-process.ts): the names it
// carries, the command lines, what a stop's lines mean, and how cleanup and resume say them.
import { describe, expect, it } from 'vitest';
import { monitorFiles, parseMonitorStop, startMonitorCommand, stopMonitorCommand } from '../../../../src/providers/esxi-shell/host-process.ts';
import { hostStopEvent, hostStopLines } from '../../../../src/run/host-leftovers.ts';

const spec = { kind: 'esxtop', ext: 'csv', dir: '/tmp' };
const OWNER = 'r1tabcdef01';
const NONCE = '0123456789abcdef';

describe('a monitor started so that the host can prove it ours', () => {
  it('names its pidfile, output and command-line mark after the owner and this start', () => {
    expect(monitorFiles(spec, OWNER, NONCE)).toEqual({ token: `${OWNER}-${NONCE}`, pidFile: `/tmp/storsweep-esxtop-${OWNER}-${NONCE}.pid`, out: `/tmp/storsweep-esxtop-${OWNER}-${NONCE}.csv` });
    const cmd = startMonitorCommand(spec, OWNER, NONCE, ['esxtop', '-b', '-d', '2', '-n', '3600']);
    // the mark leads the wrapper's script (the first words ps -c shows after `sh -c`), with the host's start time
    expect(cmd).toContain(`sh -c ": storsweep-esxtop ${OWNER}-${NONCE} $s; "'`);
    // the pidfile is created before anything starts, never through a file already there
    expect(cmd.indexOf(`set -C; { : >/tmp/storsweep-esxtop-${OWNER}-${NONCE}.pid; }`)).toBeLessThan(cmd.indexOf('sh -c'));
    expect(cmd).toMatch(/esxtop -b -d 2 -n 3600 <\/dev\/null >\/dev\/null 2>&1 & p=\$!; echo "\$p \$s" >\S+\.pid; echo "\$p \$s"$/);
  });

  it('refuses an owner, nonce, kind or directory that could break out of its quoting', () => {
    expect(() => monitorFiles(spec, 'r1;rm', NONCE)).toThrow(/owner/);
    expect(() => monitorFiles(spec, OWNER, '0123')).toThrow(/nonce/);
    expect(() => monitorFiles({ ...spec, kind: 'es xtop' }, OWNER, NONCE)).toThrow(/kind/);
    expect(() => monitorFiles({ ...spec, dir: "/tmp/'x" }, OWNER, NONCE)).toThrow(/directory/);
    expect(() => stopMonitorCommand(spec, OWNER, '$(reboot)', 5)).toThrow(/nonce/);
  });

  it('stops by `ps -c` (pid and command line), never by a bare pid, in one line of sh', () => {
    const cmd = stopMonitorCommand(spec, OWNER, NONCE, 5);
    expect(cmd).not.toContain('\n');
    expect(cmd).toContain('ps -c');
    expect(cmd).toContain('index($0,m)');
    expect(cmd).not.toContain('/proc');
    expect(cmd.endsWith(` storsweep-stop /tmp storsweep-esxtop ${OWNER} ${NONCE} csv 5`)).toBe(true);
  });
});

describe('what a stop found', () => {
  it('one outcome per pidfile; the whole is stopped when any was, naming what was left alone', () => {
    const s = parseMonitorStop(`stopped ${NONCE} 4100 1764972000\nleft-alone fedcba9876543210 4200 1764971000\n`, OWNER, 'esxtop');
    expect(s).toEqual({
      pgid: null,
      what: 'esxtop',
      outcome: 'stopped',
      signal: 'TERM',
      pids: [4100],
      detail: 'pid 4200 now runs another program: left alone',
      processes: [
        { token: `${OWNER}-${NONCE}`, pid: 4100, startedAt: '2025-12-05T22:00:00.000Z', outcome: 'stopped' },
        { token: `${OWNER}-fedcba9876543210`, pid: 4200, startedAt: '2025-12-05T21:43:20.000Z', outcome: 'left-alone' },
      ],
    });
    expect(hostStopEvent(s)).toBe('stopped');
    expect(hostStopLines(s, 'lab-esxi').map((l) => l.text)).toEqual([
      'stopped esxtop left running on lab-esxi (pid 4100, started 2025-12-05T22:00:00.000Z, SIGTERM); its output removed',
      'esxtop of this run on lab-esxi had ended (pid 4200, started 2025-12-05T21:43:20.000Z); that pid now runs another program: left alone',
    ]);
  });

  it('still running or unknown wins over stopped; nothing there is not-running and says nothing', () => {
    const still = parseMonitorStop(`stopped ${NONCE} 4100 1\nstill-running fedcba9876543210 4200 2\n`, OWNER, 'esxtop');
    expect(still).toMatchObject({ outcome: 'still-running', pids: [4200] });
    expect(hostStopEvent(still)).toBe('stop-failed');
    expect(hostStopLines(still, 't').map((l) => l.level)).toEqual(['warn', 'error']);
    const unknown = parseMonitorStop(`unknown ${NONCE} 4100 1 cannot list processes (ps -c): nothing signalled\n`, OWNER, 'esxtop');
    expect(unknown).toMatchObject({ outcome: 'unknown', detail: 'cannot list processes (ps -c): nothing signalled' });
    const none = parseMonitorStop('none\n', OWNER, 'esxtop');
    expect(none).toEqual({ pgid: null, what: 'esxtop', outcome: 'not-running', processes: [] });
    expect(hostStopEvent(none)).toBe('none');
    expect(hostStopLines(none, 't')).toEqual([]);
    const ended = parseMonitorStop(`ended ${NONCE} 4100 1\n`, OWNER, 'esxtop');
    expect(ended.outcome).toBe('not-running');
    expect(hostStopLines(ended, 't')).toEqual([]);
    expect(hostStopEvent(parseMonitorStop(`left-alone ${NONCE} 4100 1\n`, OWNER, 'esxtop'))).toBe('left-alone');
  });
});

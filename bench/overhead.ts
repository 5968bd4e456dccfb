// Overhead share: the CrystalDiskMark 8 default sweep run on the lab guest (ssh to a lab sshd)
// through the CLI, as a user runs it; from the run's log.jsonl, the share of wall time spent
// neither inside a fio test (its `step` event to its `result` event) nor in the profile's own
// intervals between tests. Inside the fio windows, the time beyond fio's own runtime (exec over
// SSH, fio start-up and layout, storing raw output) is reported separately.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure, type Figure } from './lib/figure.ts';
import { startBenchSsh } from './lib/lab-ssh.ts';
import { median, sum } from './lib/stats.ts';
import { fioArgs } from '../src/workloads/fio.ts';
import { getProfile } from '../src/workloads/profiles.ts';
import { quickSettings } from '../test/helpers/quick-settings.ts';

interface LogLine {
  time: string;
  msg: string;
  type?: string;
  step?: string;
  operation?: string;
  testId?: string;
}

const SETTINGS = { fileSize: '64m', runtimeSec: 1, passes: 2, warmupPass: true, intervalSec: 1 };

export const overhead: Benchmark = {
  name: 'overhead',
  title: 'Overhead share of a CrystalDiskMark 8 sweep through the CLI',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const ssh = await startBenchSsh(path.join(ctx.workDir, 'lab'));
    const scratch = path.join(ctx.workDir, 'scratch');
    fs.mkdirSync(scratch, { recursive: true });
    const inv = path.join(ctx.workDir, 'inventory.yaml');
    const pb = path.join(ctx.workDir, 'cdm8.yaml');
    const o = ssh.options;
    fs.writeFileSync(
      inv,
      [
        'sshHosts:',
        '  lab:',
        `    host: ${o.host}`,
        `    port: ${o.port}`,
        `    user: ${o.username}`,
        `    privateKeyFile: ${o.privateKeyPath}`,
        `    knownHostsFile: ${o.knownHostsFile}`,
        'targets:',
        '  lab-guest:',
        '    provider: ssh',
        '    sshHost: lab',
        `    workdir: ${scratch}`,
        '',
      ].join('\n'),
    );
    const repeat = ctx.quick ? 1 : 2;
    fs.writeFileSync(
      pb,
      [
        'name: bench-overhead',
        'target: lab-guest',
        'matrix:',
        '  workload:',
        '    profile: [cdm8-default]',
        ...quickSettings({ ...SETTINGS, repeat }),
        '',
      ].join('\n'),
    );
    const t0 = Date.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [path.join(ctx.root, 'bin', 'storsweep.mjs'), 'run', pb, '-i', inv, '--json', '-o', path.join(ctx.workDir, 'runs')], { cwd: ctx.root, maxBuffer: 64 << 20, timeout: 900_000 }, (err, out, errOut) => {
        if (err) reject(new Error(`storsweep run failed: ${err.message}\n${errOut.slice(-3000)}\n${out.slice(-2000)}`));
        else resolve(out);
      });
    }).finally(() => ssh.stop());
    const processWallMs = Date.now() - t0;
    const runDir = (JSON.parse(stdout.trim().split('\n').pop()!) as { runDir: string }).runDir;
    const lines = fs
      .readFileSync(path.join(runDir, 'log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine);
    const at = (l: LogLine) => Date.parse(l.time);
    const type = (l: LogLine) => l.type ?? l.msg;
    const start = lines.find((l) => type(l) === 'run-start');
    const end = [...lines].reverse().find((l) => type(l) === 'run-end');
    if (!start || !end) throw new Error(`${runDir}/log.jsonl has no run-start/run-end`);
    const wall = at(end) - at(start);
    const windows: number[] = [];
    const windowTest: string[] = [];
    let open: LogLine | undefined;
    for (const l of lines) {
      if (type(l) === 'step' && l.operation === 'fio') open = l;
      else if (type(l) === 'result' && open) {
        windows.push(at(l) - at(open));
        windowTest.push(l.testId ?? '');
        open = undefined;
      }
    }
    // What the same fio invocations cost bare (fio spawned directly, same file, same arguments):
    // fio's own start-up, layout check and exit are not storsweep's overhead.
    const base = getProfile('cdm8-default')!;
    const profile = { ...base, fileSizeBytes: 64 * 2 ** 20, runtimeSec: SETTINGS.runtimeSec, passes: SETTINGS.passes, warmupPass: SETTINGS.warmupPass, intervalSec: SETTINGS.intervalSec };
    const testFile = path.join(scratch, 'storsweep-test.dat');
    const bareMs = new Map<string, number>();
    for (const t of profile.tests) {
      const xs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const b0 = performance.now();
        await new Promise<void>((resolve, reject) => execFile('fio', fioArgs(t, profile, { filename: testFile }), { maxBuffer: 16 << 20 }, (err: Error | null) => (err ? reject(err) : resolve())));
        xs.push(performance.now() - b0);
      }
      bareMs.set(t.id, median(xs));
    }
    const perTest = SETTINGS.passes + (SETTINGS.warmupPass ? 1 : 0);
    const bareEquivalentMs = sum(windowTest.map((id) => perTest * (bareMs.get(id) ?? NaN)));
    const tests = 8;
    const intervalsMs = repeat * (tests - 1) * SETTINGS.intervalSec * 1000;
    const fioWindowMs = sum(windows);
    const outside = wall - fioWindowMs - intervalsMs;
    // fio's own time: warm-up + measured passes, each time_based for runtimeSec
    const fioRuntimeMs = windows.length * (SETTINGS.passes + (SETTINGS.warmupPass ? 1 : 0)) * SETTINGS.runtimeSec * 1000;
    const inside = fioWindowMs - fioRuntimeMs;
    const invocations = windows.length * (SETTINGS.passes + (SETTINGS.warmupPass ? 1 : 0));
    const beyondBare = fioWindowMs - bareEquivalentMs;
    const figures: Figure[] = [
      bounded('overhead.storsweep_share', ((outside + beyondBare) / wall) * 100, '%', { below: 3 }, `${((outside + beyondBare) / 1000).toFixed(2)} s of ${(wall / 1000).toFixed(1)} s: outside the fio windows ${(outside / 1000).toFixed(2)} s + inside them beyond what the same fio invocations take bare ${(beyondBare / 1000).toFixed(2)} s (${(beyondBare / invocations).toFixed(0)} ms per invocation; the first window also holds the SSH connect and the test file's creation)`),
      bounded('overhead.outside_fio_windows_share', (outside / wall) * 100, '%', { below: 3 }, `${(outside / 1000).toFixed(2)} s of ${(wall / 1000).toFixed(1)} s run wall time (run-start → run-end), beyond ${intervalsMs / 1000} s of profile intervals`),
      figure('overhead.not_running_load_share', ((inside + outside) / wall) * 100, '%', 'none', null, `counting also the ${(inside / 1000).toFixed(2)} s inside the fio windows that fio was not running its time-based load (${invocations} fio invocations, ${(inside / invocations).toFixed(0)} ms each: SSH exec, fio start-up and file layout check, JSON parse, raw output write); bare fio alone takes ${[...bareMs.values()].map((v) => (v - SETTINGS.runtimeSec * 1000).toFixed(0)).join('/')} ms beyond its ${SETTINGS.runtimeSec} s per test`),
      figure('overhead.process_wall', processWallMs / 1000, 's', 'none', null, `the whole \`storsweep run\` process including Node/tsx start-up, planning, report writing; run-start → run-end is ${(wall / 1000).toFixed(1)} s`),
    ];
    const notes = [
      `Sweep: cdm8-default (8 tests) on the lab guest over SSH (lab sshd on 127.0.0.1), settings ${JSON.stringify(SETTINGS)}, repeat ${repeat}: ${windows.length} fio tests, each an unmeasured warm-up plus ${SETTINGS.passes} measured passes of ${SETTINGS.runtimeSec} s.`,
      'Timestamps are pino\'s ISO times in log.jsonl (ms resolution); a fio window runs from the `step` event of a test to its `result` event. "Outside" is everything else except the profile\'s intervals: planning, SSH connect, mkdir, test-file set-up, SQLite writes per repetition (WAL, synchronous=FULL), report bookkeeping.',
      'Short timing (1 s passes) is the worst case for this share: with the preset\'s 5 s passes the fixed costs are spread over 5× more measured time.',
    ];
    return { figures, notes };
  },
};

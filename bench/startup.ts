// Start-up of the installed CLI (issue 31): the checkout packed and installed into a temp prefix
// (test/helpers/installed-package.ts), then `storsweep --version` and `storsweep validate
// playbooks/quickstart.yaml` (in the installed package's directory) timed wall-clock against
// `node -e 0`, in interleaved rounds so that the machine's load (shared by 8 engineers) weighs on
// all three alike. The figures are the medians' ratios to `node -e 0`, and the medians themselves.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, figure } from './lib/figure.ts';
import { median } from './lib/stats.ts';
import { packAndInstall } from '../test/helpers/installed-package.ts';
import { REPO_ROOT } from '../test/helpers/cli.ts';

/** Preloaded to read a process's own CPU time at exit (process.resourceUsage): the load on the machine barely moves it. */
const RUSAGE_PROBE = path.join(REPO_ROOT, 'test', 'helpers', 'resource-probe.mjs');

/**
 * `node -e 0` on this 2-core machine when it is quiet (about 45 ms, measured 2026-12-05 at load
 * 1): the targets (0.15 s, 0.5 s) as ratios to it.
 */
const QUIET_NODE_S = 0.045;
const TARGET_S = { version: 0.15, validate: 0.5 };

/** Wall time of one run, in seconds; a failed run throws (a figure of a failing command means nothing). */
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): number {
  const started = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env } });
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return s;
}

export const startup: Benchmark = {
  name: 'startup',
  title: 'Start-up of the installed CLI, as a ratio to `node -e 0`',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    ctx.log('packing and installing the package');
    const pkg = await packAndInstall(ctx.workDir);
    const rounds = ctx.quick ? 5 : 31;
    const t = { node: [] as number[], version: [] as number[], validate: [] as number[] };
    // one warm-up round: the page cache holds the files afterwards, as it does for a user's second command
    for (let i = 0; i <= rounds; i++) {
      const node = timed(process.execPath, ['-e', '0'], pkg.packageDir);
      const version = timed(pkg.bin, ['--version'], pkg.packageDir);
      const validate = timed(pkg.bin, ['validate', 'playbooks/quickstart.yaml'], pkg.packageDir);
      if (i === 0) continue;
      t.node.push(node);
      t.version.push(version);
      t.validate.push(validate);
    }
    const m = { node: median(t.node), version: median(t.version), validate: median(t.validate) };
    const cpu = cpuSeconds(pkg, ctx.workDir, ctx.quick ? 3 : 11);
    const r = (x: number) => Math.round((x / m.node) * 100) / 100;
    const s = (x: number) => Math.round(x * 1000) / 1000;
    return {
      figures: [
        figure('startup.node_e0', s(m.node), 's', 'none', null),
        bounded('startup.version.ratio', r(m.version), '× node -e 0', { atMost: Math.round((TARGET_S.version / QUIET_NODE_S) * 10) / 10 }),
        bounded('startup.validate.ratio', r(m.validate), '× node -e 0', { atMost: Math.round((TARGET_S.validate / QUIET_NODE_S) * 10) / 10 }),
        bounded('startup.version', s(m.version), 's', { atMost: TARGET_S.version }),
        bounded('startup.validate', s(m.validate), 's', { atMost: TARGET_S.validate }),
        figure('startup.cpu.node_e0', s(cpu.node), 's', 'none', null),
        figure('startup.cpu.version', s(cpu.version), 's', 'none', null),
        figure('startup.cpu.validate', s(cpu.validate), 's', 'none', null),
      ],
      notes: [
        `Medians of ${rounds} interleaved rounds (node -e 0, storsweep --version, storsweep validate playbooks/quickstart.yaml), each a new process, wall clock, after one warm-up round.`,
        `The installed package: npm pack of the checkout installed with npm into a temp prefix; the command is its node_modules/.bin/storsweep, run in the package's directory.`,
        `CPU time (user + system, the process's own: test/helpers/resource-probe.mjs preloaded through NODE_OPTIONS) is the median of ${ctx.quick ? 3 : 11} more interleaved rounds; unlike wall time it hardly grows with the machine's load.`,
        `The ratio targets are the issue's 0.15 s and 0.5 s over node -e 0 on this machine when quiet (${QUIET_NODE_S} s). On a loaded machine the seconds grow with the load; the ratios much less.`,
        `What a command loads is checked by test/integration/installed-package.test.ts: \`--version\` at most 6 files of dist/ and no package; \`validate\` no store, SSH, HTTP, logging or XML package, at most 185 files of packages and 215 of its own dist/.`,
      ],
    };
  },
};

/** Median CPU seconds (user + system) of node -e 0, --version and validate, each read by the process itself at exit. */
function cpuSeconds(pkg: { bin: string; packageDir: string }, workDir: string, rounds: number): { node: number; version: number; validate: number } {
  const file = path.join(workDir, 'rusage.json');
  const env = { NODE_OPTIONS: `--import=${RUSAGE_PROBE}`, STORSWEEP_TEST_RUSAGE_FILE: file };
  const cpuOf = (cmd: string, args: string[]) => {
    timed(cmd, args, pkg.packageDir, env);
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { cpuUs: number }).cpuUs / 1e6;
  };
  const t = { node: [] as number[], version: [] as number[], validate: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    t.node.push(cpuOf(process.execPath, ['-e', '0']));
    t.version.push(cpuOf(pkg.bin, ['--version']));
    t.validate.push(cpuOf(pkg.bin, ['validate', 'playbooks/quickstart.yaml']));
  }
  return { node: median(t.node), version: median(t.version), validate: median(t.validate) };
}

// `storsweep profiles`: the workload presets and their tests, as a playbook's `workload.profile`
// names them, with each test's reference label (CrystalDiskMark's `SEQ1M Q8T1`), block, queue
// depth, threads, pattern, and how passes are run; and the IOMeter spec grammar.
import type { Command } from 'commander';
import { blockSizeLabel } from '../../results/record.ts';
import { referenceLabel, iometerText } from '../../report/wording.ts';
import { PROFILES } from '../../workloads/profiles.ts';
import type { WorkloadProfile } from '../../workloads/spec.ts';
import { jsonText, terminal } from '../output.ts';

/** The IOMeter access spec grammar `workload.profile` accepts (src/workloads/iometer-spec.ts), in words. */
export const IOMETER_SPEC_HELP = `IOMeter access specs (workload.profile, or a workloads: entry's iometer: list):
  "<size> <read>% read <random>% random [q<depth>] [t<workers>]"
    size     512, 4k, 64KiB, 1m … up to 64m (binary: 1k = 1024 bytes)
    read     0–100% of I/Os that are reads (the rest writes)
    random   0% (sequential) or 100% (random); fio and diskspd mix partly-random I/O differently,
             so values in between are refused
    q<N>     outstanding I/Os per worker (queue depth), 1–1024; default q1
    t<N>     workers (threads), 1–1024; default t1
  e.g. "4k 70% read 100% random q32 t4", "32k 100% read 0% random", "1m 0% read 0% random q8"
  A spec (or a custom workload) runs with cdm8-default's file size, passes and interval (or its base:
  preset's), without CrystalDiskMark's unscored warm-up pass: settings.warmupPass: true adds one.`;

function timing(p: WorkloadProfile): string {
  const size = p.fileSizeBytes % (1024 * 1024 * 1024) === 0 ? `${p.fileSizeBytes / (1024 * 1024 * 1024)} GiB` : `${p.fileSizeBytes / (1024 * 1024)} MiB`;
  return `${p.warmupPass ? '1 unscored warm-up pass + ' : ''}${p.passes} measured pass${p.passes === 1 ? '' : 'es'} of ${p.runtimeSec} s, ${p.intervalSec} s apart; score = ${p.aggregate} of the passes; ${size} test file${p.prefill === false ? '' : ', pre-filled'}`;
}

export function profilesJson(): unknown {
  return Object.values(PROFILES).map((p) => ({
    name: p.name,
    description: p.description,
    fileSizeBytes: p.fileSizeBytes,
    runtimeSec: p.runtimeSec,
    rampSec: p.rampSec,
    passes: p.passes,
    warmupPass: p.warmupPass,
    intervalSec: p.intervalSec,
    prefill: p.prefill !== false,
    direct: p.direct,
    aggregate: p.aggregate,
    tests: p.tests.map((t) => ({
      id: t.id,
      label: referenceLabel(t),
      iometer: iometerText(t),
      pattern: t.pattern,
      blockSizeBytes: t.blockSizeBytes,
      queueDepth: t.queueDepth,
      threads: t.threads,
      readPercent: t.readPercent,
    })),
  }));
}

export function profilesText(): string {
  const out: string[] = [];
  for (const p of Object.values(PROFILES)) {
    out.push(`${p.name}: ${p.description}`, `  ${timing(p)}`);
    const rows = p.tests.map((t) => [referenceLabel(t), t.id, blockSizeLabel(t.blockSizeBytes), `QD${t.queueDepth}`, `T${t.threads}`, t.pattern]);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) out.push(`    ${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}`);
    out.push('');
  }
  out.push(IOMETER_SPEC_HELP);
  return out.join('\n') + '\n';
}

export function registerProfiles(program: Command): void {
  program
    .command('profiles')
    .description('list the workload presets (workload.profile) with their tests: reference label, id, block, queue depth, threads, pattern, passes and warm-up')
    .option('--json', 'print them as JSON')
    .addHelpText('after', `\n${IOMETER_SPEC_HELP}\n`)
    .action((o: { json?: boolean }) => {
      terminal.stdout(o.json ? jsonText(profilesJson(), 2) + '\n' : profilesText());
    });
}

// Scale: plan 100,000 permutations; store 100,000 results in the SQLite results store the way the
// executor does; render the Markdown and HTML reports of those results. Each phase runs in its own
// process under /usr/bin/time -v, which gives its peak RSS (Node + tsx start-up included).
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { BenchContext, BenchOutcome, Benchmark } from './lib/bench.ts';
import { bounded, type Figure } from './lib/figure.ts';

/** The first full run (commit 3757833), before the report model, the store's bulk path and the planner were reworked. */
const BEFORE =
  'Before (2026-11-30, same machine): plan 1.89 s / 486 MB; store 6.9 s / 160 MB (then 12,500 per-repetition transactions, now the store_live figure); markdown 36.1 s / 2909 MB, 66 MB output; html 74.0 s / 4425 MB, 231 MB output. Since then: the plan is stored one permutation per row (no 114 MB JSON string) and vSphere step arguments are built without object spreads (plan 457 → ~245 MB); records() reads row by row and records of one permutation share their axes/test/tool/metadata objects (markdown 412 → ~295 MB). Then (2026-12-01) markdown and HTML peaked at 340–380 MB, varying with GC timing: the 100,000 parsed records were held to the end, and the per-permutation objects of each test section filled the V8 old space; now the report keeps no record (ReportRecords columns, records handed over one at a time, typed section state, a 2 MB SQLite page cache) and the report phases no longer import the planner (same outputs, byte for byte; 373 / 339 → ~200 / ~220 MB at load ~10).';

const PHASES = ['plan', 'store', 'store-live', 'markdown', 'html'] as const;

function runPhase(ctx: BenchContext, phase: string): Promise<{ result: Record<string, number>; rssMb: number }> {
  const args = ['-v', process.execPath, path.join(ctx.root, 'bin', 'run-ts.mjs'), path.join(ctx.root, 'bench', 'scale', 'child.ts'), phase, ctx.workDir];
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/time', args, { maxBuffer: 16 << 20, timeout: 900_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`scale phase ${phase} failed: ${stderr.slice(-3000)}`));
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const line = stdout.trim().split('\n').pop() ?? '{}';
      resolve({ result: JSON.parse(line) as Record<string, number>, rssMb: rss ? Number(rss[1]) / 1024 : NaN });
    });
  });
}

export const scale: Benchmark = {
  name: 'scale',
  title: 'Scale: 100,000 permutations planned, 100,000 results stored and reported',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const figures: Figure[] = [];
    const r: Record<string, { result: Record<string, number>; rssMb: number }> = {};
    for (const phase of PHASES) {
      ctx.log(phase);
      r[phase] = await runPhase(ctx, phase);
      const { result, rssMb } = r[phase];
      if (phase === 'store-live') {
        // The executor's durable path: one fsynced transaction per repetition. No target: its cost
        // is per repetition (below), which a real sweep spends minutes of fio on.
        figures.push(bounded('scale.store_live_time', result.ms! / 1000, 's', {}), bounded('scale.store_live_per_commit', result.ms! / result.transactions!, 'ms', {}));
        continue;
      }
      figures.push(bounded(`scale.${phase}_time`, result.ms! / 1000, 's', { below: 2 }), bounded(`scale.${phase}_peak_rss`, rssMb, 'MB', { below: 300 }));
    }
    const p = r.plan!.result;
    const s = r.store!.result;
    const live = r['store-live']!.result;
    const md = r.markdown!.result;
    const html = r.html!.result;
    const notes = [
      `plan: buildPlan of a vSphere playbook with 4 datastore kinds (vmfs5, vmfs6, nfs with VAAI-NAS, existing; vmfs3 refuses disks above 256 GiB with 1 MiB blocks, NFS without VAAI-NAS eager-zeroed disks) × 2 disk formats × 4 controllers × 1562 sizes × 2 CDM profiles = ${p.permutations} permutations (${p.steps} planned steps, through the real vSphere step planner); serializing the plan (as the run stores it) takes another ${(p.serializeMs! / 1000).toFixed(2)} s and ${(p.jsonBytes! / 1e6).toFixed(0)} MB of JSON.`,
      `store: ResultStore.create with a 12,500-permutation plan, then ${s.records} records (8 cdm8-default records per permutation) in one addRepetitions transaction, the bulk path of imports and benchmarks; create ${(s.createMs! / 1000).toFixed(2)} s; database ${(s.dbBytes! / 1e6).toFixed(0)} MB.`,
      `store_live: the same records as the executor writes them in a sweep, one addRepetition per repetition (${live.transactions} transactions, WAL + synchronous=FULL so one fsync each): ${(live.ms! / live.transactions!).toFixed(2)} ms per commit, peak RSS ${r['store-live']!.rssMb.toFixed(0)} MB.`,
      `markdown / html: openResults + eachRecord into ReportRecords, one record at a time, none kept (load ${(md.loadMs! / 1000).toFixed(2)} s) + buildReport + renderMarkdown / renderHtml of those ${md.records} records; the outputs are ${(md.bytes! / 1e6).toFixed(1)} MB and ${(html.bytes! / 1e6).toFixed(1)} MB. Above 200 permutations each test's tables and charts list the 200 with the largest |Δ| of its main metric, and say so; verdict counts cover all, the CSV has every record.`,
      'Times are of the operation inside the child; peak RSS is the whole child process (Node + tsx ≈ 60–80 MB of it).',
      BEFORE,
    ];
    return { figures, notes };
  },
};

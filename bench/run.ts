// `npm run bench [-- --only <name>] [--quick] [--keep]`: runs the benchmarks, prints one line per
// figure on stdout (progress goes to stderr), then updates bench/results.json and bench/RESULTS.md.
// A benchmark that throws is reported as failed and the others still run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Benchmark } from './lib/bench.ts';
import { figureLine, pending } from './lib/figure.ts';
import { machineInfo } from './lib/machine.ts';
import { readResults, renderResultsMd } from './lib/results-file.ts';
import { fidelity } from './fidelity.ts';
import { orchestration } from './orchestration.ts';
import { scale } from './scale.ts';
import { overhead } from './overhead.ts';
import { workers } from './workers.ts';
import { startup } from './startup.ts';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const RESULTS_JSON = path.join(BENCH_DIR, 'results.json');
const RESULTS_MD = path.join(BENCH_DIR, 'RESULTS.md');

const BENCHMARKS: Benchmark[] = [fidelity, orchestration, scale, overhead, workers, startup];

function parseArgs(argv: string[]): { only: string[]; quick: boolean; keep: boolean } {
  const only: string[] = [];
  let quick = false;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--only') only.push(...(argv[++i] ?? '').split(',').filter(Boolean));
    else if (a.startsWith('--only=')) only.push(...a.slice(7).split(',').filter(Boolean));
    else if (a === '--quick') quick = true;
    else if (a === '--keep') keep = true;
    else throw new Error(`unknown argument ${a} (expected --only <name>, --quick, --keep)`);
  }
  const known = BENCHMARKS.map((b) => b.name);
  for (const o of only) if (!known.includes(o)) throw new Error(`no benchmark "${o}" (there are: ${known.join(', ')})`);
  return { only, quick, keep };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const selected = BENCHMARKS.filter((b) => args.only.length === 0 || args.only.includes(b.name));
  const results = readResults(RESULTS_JSON);
  let failed = 0;
  for (const b of selected) {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `storsweep-bench-${b.name}-`));
    const started = Date.now();
    const log = (m: string) => process.stderr.write(`[${b.name}] ${m}\n`);
    log(`start (${workDir})`);
    try {
      const outcome = await b.run({ workDir, root: ROOT, log, quick: args.quick });
      for (const f of outcome.figures) console.log(figureLine(f));
      results[b.name] = { title: b.title, ...outcome, machine: machineInfo(), durationSec: (Date.now() - started) / 1000 };
    } catch (err) {
      failed++;
      const reason = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`FAILED: ${reason}`);
      const f = pending(`${b.name}.failed`, '', 'runs', reason.split('\n')[0]!);
      console.log(figureLine(f));
      results[b.name] = { title: b.title, figures: [f], notes: [`The benchmark failed: ${reason.split('\n')[0]}`], machine: machineInfo(), durationSec: (Date.now() - started) / 1000 };
    } finally {
      if (!args.keep) fs.rmSync(workDir, { recursive: true, force: true });
    }
  }
  fs.writeFileSync(RESULTS_JSON, JSON.stringify(results, null, 1) + '\n');
  fs.writeFileSync(RESULTS_MD, renderResultsMd(results, BENCHMARKS.map((b) => b.name)));
  process.stderr.write(`wrote ${path.relative(ROOT, RESULTS_MD)}\n`);
  if (failed) process.exitCode = 1;
}

await main();

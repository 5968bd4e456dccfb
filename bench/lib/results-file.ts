// bench/results.json keeps the latest outcome of each benchmark (so `--only x` updates x and keeps
// the rest); RESULTS.md is rendered from it every time.
import fs from 'node:fs';
import type { BenchOutcome } from './bench.ts';
import { figureLine } from './figure.ts';
import type { MachineInfo } from './machine.ts';

export interface StoredOutcome extends BenchOutcome {
  title: string;
  machine: MachineInfo;
  durationSec: number;
}

export type ResultsFile = Record<string, StoredOutcome>;

export function readResults(file: string): ResultsFile {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as ResultsFile;
  } catch {
    return {};
  }
}

function machineLine(m: MachineInfo): string {
  const load = m.loadAvg ? `; load average ${m.loadAvg.join(' / ')} (1 / 5 / 15 min) at the end` : '';
  return `${m.nproc} × ${m.cpuModel}, ${m.ramGiB} GiB RAM, ${m.os}, node ${m.node}, ${m.fio}; measured ${m.date}${load}`;
}

export function renderResultsMd(results: ResultsFile, order: readonly string[]): string {
  const out = [
    '# storsweep benchmarks',
    '',
    'Written by `npm run bench` (all) or `npm run bench -- --only <name>` (one; the others keep their last figures).',
    'Each figure is one line `name: value unit (target …, met|MISSED)`, exactly as the runner prints it.',
    'These are measurements on one machine, not tests; rerun them on yours before quoting them.',
    'This file is rewritten by every run: what a person learned about the figures is kept in bench/NOTES.md.',
    '',
    '## How to rerun',
    '',
    '```sh',
    'npm run bench                      # every benchmark (~10 min)',
    'npm run bench -- --only fidelity   # one of: ' + order.join(', '),
    'npm run bench -- --quick           # fewer rounds, to check the benchmarks still run',
    '```',
    '',
    'Needs fio, OpenSSH server (`/usr/sbin/sshd`), Go + govmomi (the vcsim harness), `/usr/bin/python3` with',
    'python3-pyvmomi, Debian `ansible` with community.vmware, and `/usr/bin/time`.',
    '',
  ];
  for (const name of order) {
    const r = results[name];
    if (!r) continue;
    out.push(`## ${name}: ${r.title}`, '', `Machine: ${machineLine(r.machine)}; took ${r.durationSec.toFixed(0)} s.`, '', '```');
    for (const f of r.figures) out.push(figureLine(f));
    out.push('```', '');
    const annotated = r.figures.filter((f) => f.note && f.value !== null);
    if (annotated.length) {
      for (const f of annotated) out.push(`- \`${f.name}\`: ${f.note}`);
      out.push('');
    }
    for (const n of r.notes) out.push(`- ${n}`);
    out.push('');
  }
  return out.join('\n');
}

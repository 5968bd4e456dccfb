// What every benchmark module exports, and what the runner gives it.
import type { Figure } from './figure.ts';

export interface BenchContext {
  /** scratch directory of this benchmark (removed afterwards unless --keep) */
  workDir: string;
  /** the repository root */
  root: string;
  /** progress to stderr; stdout carries only figure lines */
  log(message: string): void;
  /** `--quick`: fewer repetitions, for checking that the benchmark still runs */
  quick: boolean;
}

export interface BenchOutcome {
  figures: Figure[];
  /** method and caveats, written to RESULTS.md under the benchmark's figures */
  notes: string[];
}

export interface Benchmark {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<BenchOutcome>;
}

// The guest connections a worker keeps across permutations, as `run` keeps one per target
// (connected and checked once, not per permutation); one that was lost the executor closes and
// forgets, and the next permutation there connects again. At most `kept` stay open: the least
// recently used is closed first, never one a permutation is running on.
import type { CommandRunner } from '../ssh/command-runner.ts';
import type { GuestConnections } from './executor.ts';

export class KeptGuests<Run extends object> {
  private readonly byRun = new Map<Run, GuestConnections>();
  /** recency order: the first entry is the least recently used */
  private readonly recent = new Map<CommandRunner, { m: GuestConnections; target: string }>();
  /** the targets a slot is running a permutation on (their connections are not closed under them) */
  private readonly busy = new Map<GuestConnections, Set<string>>();

  constructor(private readonly kept: number) {}

  /** A run's connections by target (the executor adds and forgets them). */
  of(run: Run): GuestConnections {
    let m = this.byRun.get(run);
    if (!m) this.byRun.set(run, (m = new Map<string, CommandRunner>()));
    return m;
  }

  /** A permutation starts on `target`: its connection is not closed under it; returns the end of it. */
  inUse(run: Run, target: string): () => void {
    const m = this.of(run);
    const inUse = this.busy.get(m) ?? new Set<string>();
    this.busy.set(m, inUse.add(target));
    return () => inUse.delete(target);
  }

  /** `target`'s connection was just used: the most recent now; the least recently used beyond `kept` are closed. */
  async used(run: Run, target: string): Promise<void> {
    const m = this.of(run);
    const r = m.get(target);
    if (r) {
      this.recent.delete(r);
      this.recent.set(r, { m, target });
    }
    for (const [k, v] of [...this.recent]) {
      if (this.recent.size <= this.kept) break;
      if (this.busy.get(v.m)?.has(v.target)) continue;
      this.recent.delete(k);
      if (v.m.get(v.target) !== k) continue; // already closed and forgotten by the executor
      v.m.delete(v.target);
      await k.close().catch(() => undefined);
    }
  }

  async closeAll(): Promise<void> {
    for (const m of this.byRun.values()) for (const r of m.values()) await r.close().catch(() => undefined);
    this.byRun.clear();
    this.recent.clear();
  }
}

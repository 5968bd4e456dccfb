// Listed targets that share a resource (RunPlan.serialised: a VM, a guest test file, a LUN…) never
// run at the same time: a permutation holds every key its target shares while it runs (provision,
// workload, teardown). Keys are taken in one order (sorted), so two targets never wait for each
// other; each key is first come, first served, so the sharing targets take turns.

/** Gives the keys back; idempotent. */
export type Release = () => void;

export class ResourceLocks {
  /** per key: settles when the last one queued for it has released it */
  private readonly tails = new Map<string, Promise<void>>();
  /** per key: its holder first, then those waiting for it, in turn */
  private readonly lines = new Map<string, string[]>();

  /**
   * Waits until `holder` has every key, then returns how to give them back. `onWait` is told when
   * a key is held by someone else (its holder) before waiting for it.
   */
  async acquire(keys: readonly string[], holder: string, onWait?: (key: string, heldBy: string) => void): Promise<Release> {
    const releases: Array<() => void> = [];
    for (const key of [...new Set(keys)].sort()) {
      const before = this.tails.get(key) ?? Promise.resolve();
      let give!: () => void;
      const mine = new Promise<void>((resolve) => (give = resolve));
      const tail = before.then(() => mine);
      this.tails.set(key, tail);
      const line = this.lines.get(key) ?? [];
      if (line.length) onWait?.(key, line[0]!);
      line.push(holder);
      this.lines.set(key, line);
      await before;
      releases.push(() => {
        line.shift();
        if (!line.length) this.lines.delete(key);
        if (this.tails.get(key) === tail) this.tails.delete(key);
        give();
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const r of releases.reverse()) r();
    };
  }
}

// The executor through a fake provider (fake-host.ts): a real run database, a host model that
// knows what exists, and every test asserting the host's state afterwards — resume/redo of a
// half-done permutation, reverse teardown, orphaned creates, refused steps, fail-fast, a full disk,
// and --keep.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PermutationPlan, RunPlan } from '../../../src/contract/plan.ts';
import type { ResultRecord } from '../../../src/results/record.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { executeRun, type ExecuteOptions, type RunSummary } from '../../../src/run/executor.ts';
import type { PlannedStep } from '../../../src/contract/provider.ts';
import { cleanupLedger } from '../../../src/run/teardown.ts';
import { FakeHost, fakeProvider, FakeTransient, fakeWorkload, PROFILE, TESTS, type FakeProviderOptions } from './fake-host.ts';
import { runMeta } from './fake-run.ts';

// A full disk under raw/: the one write the executor does outside the database. Node's fs says
// ENOSPC to the real raw writer (results/raw.ts), which reports the run directory lost (StoreLost).
const disk = { rawFull: false };
const realWriteSync = fs.writeSync;
vi.spyOn(fs, 'writeSync').mockImplementation(((...args: Parameters<typeof fs.writeSync>) => {
  if (disk.rawFull) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  return (realWriteSync as (...a: unknown[]) => number)(...args);
}));

const RUN = 'r1';
const meta = runMeta({ runId: RUN });
const owned = (perm: string, suffix: string) => `ss-${RUN}-${perm}-${suffix}`;

function steps(perm: string): PlannedStep[] {
  return [
    { step: 'datastore', provider: 'esxi-shell', operation: 'vmkfstools -C', arguments: { device: 'naa.1' }, destructive: true, destroys: ['naa.1'], creates: { kind: 'datastore', name: owned(perm, 'ds') } },
    { step: 'disk', provider: 'esxi-shell', operation: 'vmkfstools -c', arguments: {}, destructive: false, creates: { kind: 'disk', name: owned(perm, 'disk') } },
    { step: 'attach', provider: 'esxi-shell', operation: 'vim-cmd device.diskaddexisting', arguments: {}, destructive: false, creates: { kind: 'disk-attachment', name: owned(perm, 'att') } },
    { step: 'workload', provider: 'local', operation: 'fio', arguments: {}, destructive: false },
  ];
}

function planOf(n: number, repetitions = 1): RunPlan {
  const permutations: PermutationPlan[] = Array.from({ length: n }, (_, i) => ({ index: i, permutationId: `p${i + 1}`, axes: { 'disk.format': `f${i + 1}` }, workload: 'quick', steps: steps(`p${i + 1}`), repetitions, estimateSec: 1 }));
  return { version: 1, runId: RUN, playbook: 'pb', target: 't', provider: 'esxi-shell', axes: [], baseline: null, profiles: { quick: PROFILE }, permutations, totalEstimateSec: n };
}

const all = (perm: string) => [`datastore:${owned(perm, 'ds')}`, `disk:${owned(perm, 'disk')}`, `disk-attachment:${owned(perm, 'att')}`];

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-exec-'));
  disk.rawFull = false;
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Ran {
  store: ResultStore;
  summary: RunSummary;
  messages: string[];
}

async function run(store: ResultStore, host: FakeHost, o: FakeProviderOptions & Partial<ExecuteOptions> & { workload?: ReturnType<typeof fakeWorkload> } = {}): Promise<Ran> {
  const messages: string[] = [];
  const summary = await executeRun({
    store,
    plan: store.plan(),
    provider: fakeProvider(host, o),
    workload: o.workload ?? fakeWorkload(),
    signal: o.signal ?? new AbortController().signal,
    retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 2 },
    onEvent: (e) => {
      if (e.type === 'message') messages.push(e.text);
    },
    ...(o.failFast ? { failFast: true } : {}),
    ...(o.keep ? { keep: true } : {}),
    ...(o.stepTimeoutMs ? { stepTimeoutMs: o.stepTimeoutMs } : {}),
  });
  return { store, summary, messages };
}

const newStore = (plan: RunPlan) => ResultStore.create(path.join(dir, 'run'), meta, plan);
const ledger = (store: ResultStore) => store.ledger().map((r) => `${r.kind}:${r.name}:${r.state}`);
const statuses = (store: ResultStore) => store.permutations().map((p) => `${p.permutationId}:${p.status}`);
const repsOf = (store: ResultStore, perm: string) => store.records().filter((r: ResultRecord) => r.permutationId === perm).map((r) => r.repetition);

describe('executor through a fake provider: host state afterwards', () => {
  it('tears down in reverse creation order, and the host ends as it began', async () => {
    const host = new FakeHost();
    host.add('datastore', 'users-datastore', false);
    const { store, summary } = await run(newStore(planOf(2)), host);
    expect(summary).toMatchObject({ done: 2, failed: 0, leftovers: 0 });
    expect(host.calls).toEqual(
      ['p1', 'p2'].flatMap((p) => [
        `create datastore ${owned(p, 'ds')}`,
        `create disk ${owned(p, 'disk')}`,
        `create disk-attachment ${owned(p, 'att')}`,
        `destroy disk-attachment ${owned(p, 'att')}`,
        `destroy disk ${owned(p, 'disk')}`,
        `destroy datastore ${owned(p, 'ds')}`,
      ]),
    );
    expect(host.state()).toEqual(['datastore:users-datastore']);
    expect(ledger(store).every((l) => l.endsWith(':removed'))).toBe(true);
    store.close();
  });

  it('a failed step: what was created before it is torn down in reverse, the sweep goes on', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(2)), host, { script: (s, n) => (s.step === 'attach' && n === 1 ? new Error('device.diskaddexisting: exit 1') : 'create') });
    expect(summary).toMatchObject({ done: 1, failed: 1, leftovers: 0 });
    expect(statuses(store)).toEqual(['p1:failed', 'p2:done']);
    expect(host.calls.slice(0, 4)).toEqual([`create datastore ${owned('p1', 'ds')}`, `create disk ${owned('p1', 'disk')}`, `destroy disk ${owned('p1', 'disk')}`, `destroy datastore ${owned('p1', 'ds')}`]);
    // the attach failed before sending: marked not-sent, never destroyed or looked up
    expect(ledger(store).slice(0, 3)).toEqual([`datastore:${owned('p1', 'ds')}:removed`, `disk:${owned('p1', 'disk')}:removed`, `disk-attachment:${owned('p1', 'att')}:not-sent`]);
    expect(host.calls.some((c) => c.includes(owned('p1', 'att')))).toBe(false);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('a refused step is never torn down: not looked up, not destroyed, even when an object of that name exists', async () => {
    const host = new FakeHost();
    // whatever carries the refused step's name (a user's object, another tool's) is not ours
    host.add('disk', owned('p1', 'disk'));
    const { store, summary } = await run(newStore(planOf(1)), host, { script: (s) => (s.step === 'disk' ? 'refuse' : 'create') });
    expect(summary).toMatchObject({ failed: 1, leftovers: 0 });
    expect(ledger(store)).toEqual([`datastore:${owned('p1', 'ds')}:removed`, `disk:${owned('p1', 'disk')}:refused`]);
    expect(host.calls).toEqual([`create datastore ${owned('p1', 'ds')}`, `destroy datastore ${owned('p1', 'ds')}`]);
    expect(host.state()).toEqual([`disk:${owned('p1', 'disk')}`]);
    // nor by cleanup later
    expect(await cleanupLedger(store, async () => fakeProvider(host), () => undefined)).toBe(0);
    expect(host.state()).toEqual([`disk:${owned('p1', 'disk')}`]);
    store.close();
  });

  it('resume: a done permutation is skipped; a half-done one is torn down in reverse, its partial results dropped, then redone', async () => {
    const plan = planOf(3, 2);
    const first = newStore(plan);
    const host = new FakeHost();
    host.add('datastore', 'users-datastore', false);
    // What a killed process left: p1 done and clean; p2 running with rep 1 of 2 recorded, its
    // datastore and disk created, its attach sent (the reply never came: no id).
    first.markRunning('p1');
    first.addRepetition('p1', 1, []);
    first.addRepetition('p1', 2, []);
    first.markFinished('p1', 'done', null);
    first.markRunning('p2');
    for (const s of steps('p2').slice(0, 3)) {
      const ref = s.creates!;
      first.ledgerIntent('p2', 'esxi-shell', ref, { operation: s.operation, arguments: s.arguments });
      first.ledgerSent('p2', ref, { owned: ref.name });
      const o = host.add(ref.kind, ref.name);
      if (s.step !== 'attach') first.ledgerCreated('p2', { ...ref, provider: 'esxi-shell', id: o.id, data: { owned: ref.name } });
    }
    const stale: ResultRecord = { runId: RUN, permutationId: 'p2', axes: {}, repetition: 1, test: TESTS[0]!, iops: 1, bytesPerSecond: 1, latencyUs: { mean: 1, p50: 1, p95: 1, p99: 1, p999: 1 }, cpuPercent: null, tool: { name: 'fio', version: 'old' }, rawPath: null, metadata: {} };
    first.addRepetition('p2', 1, [stale]);
    first.close();

    const { store, summary } = await run(ResultStore.open(path.join(dir, 'run')), host);
    expect(summary).toMatchObject({ done: 2, skipped: 1, failed: 0, leftovers: 0 });
    expect(statuses(store)).toEqual(['p1:done', 'p2:done', 'p3:done']);
    // p1 untouched; p2's leftovers removed newest first before anything of p2 is created again
    expect(host.calls.some((c) => c.includes('-p1-'))).toBe(false);
    expect(host.calls.slice(0, 6)).toEqual([
      `destroy disk-attachment ${owned('p2', 'att')}`,
      `destroy disk ${owned('p2', 'disk')}`,
      `destroy datastore ${owned('p2', 'ds')}`,
      `create datastore ${owned('p2', 'ds')}`,
      `create disk ${owned('p2', 'disk')}`,
      `create disk-attachment ${owned('p2', 'att')}`,
    ]);
    // the stale repetition is gone; both repetitions measured by the redo
    expect(repsOf(store, 'p2')).toEqual([1, 2]);
    expect(store.records().find((r) => r.permutationId === 'p2' && r.repetition === 1)!.tool.version).toBe('fio-3.33');
    expect(store.journal().some((j) => j.permutationId === 'p2' && j.event === 'redo')).toBe(true);
    expect(host.state()).toEqual(['datastore:users-datastore']);
    store.close();
  });

  it('an orphaned create (intent only, a crash before "sent" was recorded): removed if found by its owned name, else marked not-sent', async () => {
    const plan = planOf(2);
    const first = newStore(plan);
    const host = new FakeHost();
    // p1: intent rows for all three; only the datastore exists (found by name → destroyed)
    // p2: intent row for the datastore, nothing exists (→ not-sent, nothing destroyed)
    first.markRunning('p1');
    for (const s of steps('p1').slice(0, 3)) first.ledgerIntent('p1', 'esxi-shell', s.creates!, { operation: s.operation, arguments: s.arguments });
    host.add('datastore', owned('p1', 'ds'));
    first.markFinished('p1', 'failed', 'killed');
    first.markRunning('p2');
    first.ledgerIntent('p2', 'esxi-shell', steps('p2')[0]!.creates!, { operation: 'o', arguments: {} });
    // an object that merely looks like ours in kind but has another name stays
    host.add('datastore', 'ss-r0-p1-ds', false);
    first.close();

    const { store, summary } = await run(ResultStore.open(path.join(dir, 'run')), host, { script: () => 'fail-before-send' });
    expect(summary).toMatchObject({ failed: 2, leftovers: 0 });
    // reverse order; looked up by name, only the one found is destroyed
    expect(host.calls.slice(0, 5)).toEqual([
      `find disk-attachment ${owned('p1', 'att')}`,
      `find disk ${owned('p1', 'disk')}`,
      `find datastore ${owned('p1', 'ds')}`,
      `destroy datastore ${owned('p1', 'ds')}`,
      `find datastore ${owned('p2', 'ds')}`,
    ]);
    expect(host.count('destroy')).toBe(1);
    expect(host.state()).toEqual(['datastore:ss-r0-p1-ds']);
    expect(ledger(store)).toEqual([
      `datastore:${owned('p1', 'ds')}:not-sent`,
      `disk:${owned('p1', 'disk')}:not-sent`,
      `disk-attachment:${owned('p1', 'att')}:not-sent`,
      `datastore:${owned('p2', 'ds')}:not-sent`,
    ]);
    store.close();
  });

  it('an orphaned create through cleanup: the same rule', async () => {
    const store = newStore(planOf(2));
    const host = new FakeHost();
    store.ledgerIntent('p1', 'esxi-shell', steps('p1')[0]!.creates!, { operation: 'o', arguments: {} });
    store.ledgerIntent('p2', 'esxi-shell', steps('p2')[0]!.creates!, { operation: 'o', arguments: {} });
    host.add('datastore', owned('p2', 'ds'));
    const lines: string[] = [];
    expect(await cleanupLedger(store, async () => fakeProvider(host), (l) => lines.push(l))).toBe(0);
    expect(lines).toEqual([`removed: datastore ${owned('p2', 'ds')}`, `never created: datastore ${owned('p1', 'ds')}`]);
    expect(host.state()).toEqual([]);
    expect(ledger(store)).toEqual([`datastore:${owned('p1', 'ds')}:not-sent`, `datastore:${owned('p2', 'ds')}:removed`]);
    store.close();
  });

  it('an ambiguous failure after the create was sent is retried by looking first: found, not created twice', async () => {
    const host = new FakeHost();
    const { store, summary, messages } = await run(newStore(planOf(1)), host, { script: (s, n) => (s.step === 'disk' && n === 1 ? 'create-then-fail' : 'create') });
    expect(summary).toMatchObject({ done: 1 });
    expect(host.count(`create disk ${owned('p1', 'disk')}`)).toBe(1);
    expect(host.calls).toContain(`find disk ${owned('p1', 'disk')}`);
    expect(messages.some((m) => /^retrying disk \(attempt 2\)/.test(m))).toBe(true);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('a failure the provider does not call transient is not retried', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(1)), host, { script: (s) => (s.step === 'disk' ? Object.assign(new Error('ECONNRESET-looking but not transient to this provider'), { code: 'ECONNRESET', faultName: 'TaskInProgress' }) : 'create') });
    expect(summary).toMatchObject({ failed: 1 });
    // one call: the executor does not match fault names itself
    expect(host.calls.filter((c) => c.startsWith('create'))).toEqual([`create datastore ${owned('p1', 'ds')}`]);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('--fail-fast: stops before the next permutation; nothing of the failed one or the next is left', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(3)), host, { failFast: true, script: (s) => (s.step === 'attach' ? new Error('boom') : 'create') });
    expect(summary).toMatchObject({ done: 0, failed: 1, pending: 2, leftovers: 0 });
    expect(statuses(store)).toEqual(['p1:failed', 'p2:pending', 'p3:pending']);
    expect(host.calls.some((c) => c.includes('-p2-') || c.includes('-p3-'))).toBe(false);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('without --fail-fast the same failure fails each permutation and the sweep goes on', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(3)), host, { script: (s) => (s.step === 'attach' ? new Error('boom') : 'create') });
    expect(summary).toMatchObject({ failed: 3, pending: 0, leftovers: 0 });
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('--keep: the last permutation\'s objects stay (ledger "kept"), the others go; cleanup removes the kept ones later', async () => {
    const host = new FakeHost();
    const { store, summary, messages } = await run(newStore(planOf(2)), host, { keep: true });
    expect(summary).toMatchObject({ done: 2, leftovers: 3 });
    expect(host.state()).toEqual(all('p2').sort());
    expect(ledger(store)).toEqual([...all('p1').map((o) => `${o}:removed`), ...all('p2').map((o) => `${o}:kept`)]);
    expect(messages).toContain('--keep: leaving the objects of p2 in place');
    const lines: string[] = [];
    expect(await cleanupLedger(store, async () => fakeProvider(host), (l) => lines.push(l))).toBe(0);
    // newest first
    expect(lines).toEqual([`removed: disk-attachment ${owned('p2', 'att')}`, `removed: disk ${owned('p2', 'disk')}`, `removed: datastore ${owned('p2', 'ds')}`]);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('--keep keeps only what was sent: a refused step of the last permutation is not "kept"', async () => {
    const host = new FakeHost();
    const { store } = await run(newStore(planOf(1)), host, { keep: true, script: (s) => (s.step === 'disk' ? 'refuse' : 'create') });
    expect(ledger(store)).toEqual([`datastore:${owned('p1', 'ds')}:kept`, `disk:${owned('p1', 'disk')}:refused`]);
    expect(host.state()).toEqual([`datastore:${owned('p1', 'ds')}`]);
    store.close();
  });

  describe('disk full', () => {
    it('ENOSPC writing raw output: the permutation fails, the sweep stops, its objects are removed and recorded so, committed results kept', async () => {
      const host = new FakeHost();
      // p1 measures fine; raw/ fills up during p2
      const workload = fakeWorkload({ onTest: (n) => (disk.rawFull = n >= 2) });
      const { store, summary, messages } = await run(newStore(planOf(3)), host, { workload });
      expect(summary.fatal).toMatch(/ENOSPC/);
      expect(summary).toMatchObject({ done: 1, failed: 1, pending: 1, leftovers: 0 });
      expect(statuses(store)).toEqual(['p1:done', 'p2:failed', 'p3:pending']);
      expect(store.permutations()[1]!.reason).toMatch(/no space left on device/);
      // not retried: a full disk is not a lost connection
      expect(workload.runs).toBe(2);
      expect(repsOf(store, 'p1')).toEqual([1]);
      expect(host.state()).toEqual([]);
      expect(ledger(store).filter((l) => l.includes('-p2-'))).toEqual(all('p2').map((o) => `${o}:removed`));
      expect(host.calls.some((c) => c.includes('-p3-'))).toBe(false);
      expect(messages.some((m) => m.startsWith('stopping: the run directory cannot be written'))).toBe(true);
      store.close();
    });

    it('the database full too: no ledger row is lost, no object is left; resume after freeing space finishes the run', async () => {
      const host = new FakeHost();
      const store = newStore(planOf(3));
      const rowsBefore: string[] = [];
      // From p2's measurement on, every write fails as SQLite reports a full disk.
      const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      const workload = fakeWorkload({
        onTest: (n) => {
          if (n < 2) return;
          disk.rawFull = true;
          rowsBefore.push(...store.ledger().map((r) => `${r.kind}:${r.name}`));
          for (const m of ['markRunning', 'markFinished', 'addRepetition', 'discardRepetitionsAfter', 'appendJournal', 'ledgerIntent', 'ledgerSent', 'ledgerCreated', 'ledgerState'] as const) {
            (store as unknown as Record<string, unknown>)[m] = () => {
              throw full();
            };
          }
        },
      });
      const { summary } = await run(store, host, { workload });
      expect(summary.fatal).toMatch(/ENOSPC|full/);
      expect(summary.done).toBe(1);
      // nothing of p2 is left on the host; p3 never started
      expect(host.state()).toEqual([]);
      expect(host.calls.some((c) => c.includes('-p3-'))).toBe(false);
      store.close();

      // Space freed: every row is still there (states stale where the disk was full), and resume
      // reconciles them, redoes p2, runs p3, and leaves nothing.
      disk.rawFull = false;
      const reopened = ResultStore.open(path.join(dir, 'run'));
      expect(reopened.ledger().map((r) => `${r.kind}:${r.name}`)).toEqual(rowsBefore);
      expect(statuses(reopened)).toEqual(['p1:done', 'p2:running', 'p3:pending']);
      const resumed = await run(reopened, host);
      expect(resumed.summary).toMatchObject({ done: 2, skipped: 1, failed: 0, leftovers: 0 });
      expect(repsOf(reopened, 'p1')).toEqual([1]);
      expect(repsOf(reopened, 'p2')).toEqual([1]);
      expect(host.state()).toEqual([]);
      reopened.close();
    });
  });

  it('a hung create past its timeout: the step fails, nothing is created afterwards, nothing left', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(1)), host, { stepTimeoutMs: 50, script: (s) => (s.step === 'disk' ? 'hang' : 'create') });
    expect(summary).toMatchObject({ failed: 1, leftovers: 0 });
    expect(store.permutations()[0]!.reason).toMatch(/timed out after 50 ms/);
    expect(host.state()).toEqual([]);
    store.close();
  });

  it('a provider that ignores the timeout and sends late is stopped at ctx.sent: nothing is created after the step gave up', async () => {
    const host = new FakeHost();
    const { store, summary } = await run(newStore(planOf(1)), host, { stepTimeoutMs: 20, script: (s) => (s.step === 'disk' ? 'late-send' : 'create') });
    expect(summary).toMatchObject({ failed: 1, leftovers: 0 });
    // the late send has tried (after the step gave up): it must not have gone out
    expect(host.late).toHaveLength(1);
    await Promise.all(host.late);
    expect(host.count('create disk')).toBe(0);
    expect(ledger(store)).toEqual([`datastore:${owned('p1', 'ds')}:removed`, `disk:${owned('p1', 'disk')}:not-sent`]);
    expect(host.state()).toEqual([]);
    store.close();
  });
});

describe('teardown and cleanup: one routine (same retries, deadline and journal)', () => {
  type Case = { name: string; destroyScript: FakeProviderOptions['destroyScript']; state: string; events: string[]; reason?: RegExp };
  const cases: Case[] = [
    {
      name: 'a transient failure is retried, then the object goes',
      destroyScript: (o, n) => (o.kind === 'datastore' && n <= 2 ? new FakeTransient('host busy') : undefined),
      state: 'removed',
      events: ['retry', 'retry', 'removed'],
    },
    {
      name: 'a failure the provider does not call transient is not retried',
      destroyScript: (o) => (o.kind === 'datastore' ? new Error('datastore in use by another host') : undefined),
      state: 'remove-failed',
      events: ['remove-failed'],
      reason: /in use by another host/,
    },
    {
      name: 'an attempt past the deadline fails the removal, and is not retried',
      destroyScript: (o) => (o.kind === 'datastore' ? 'hang' : undefined),
      state: 'remove-failed',
      events: ['remove-failed'],
      reason: /timed out after 50 ms/,
    },
  ];
  const dsName = owned('p1', 'ds');
  const eventsOf = (store: ResultStore, prefix: string) => store.journal().filter((j) => j.step === `datastore:${dsName}` && j.event.startsWith(prefix) && !['intent', 'sent', 'created'].includes(j.event)).map((j) => j.event.slice(prefix.length));

  for (const c of cases) {
    it(c.name, async () => {
      // the run's teardown
      const host = new FakeHost();
      const { store } = await run(newStore(planOf(1)), host, { stepTimeoutMs: 50, destroyScript: c.destroyScript });
      expect(eventsOf(store, '')).toEqual(c.events);
      expect(store.ledgerRow('datastore', dsName)!.state).toBe(c.state);
      if (c.reason) expect(store.ledgerRow('datastore', dsName)!.error).toMatch(c.reason);
      expect(host.state()).toEqual(c.state === 'removed' ? [] : [`datastore:${dsName}`]);
      store.close();
      fs.rmSync(path.join(dir, 'run'), { recursive: true });

      // the same objects left by a --keep run, removed by cleanup with the same policy
      const host2 = new FakeHost();
      const kept = (await run(newStore(planOf(1)), host2, { keep: true })).store;
      const lines: string[] = [];
      const failed = await cleanupLedger(kept, async () => fakeProvider(host2, { destroyScript: c.destroyScript }), (l) => lines.push(l), { retry: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 2 }, timeoutMs: 50 });
      expect(eventsOf(kept, 'cleanup-')).toEqual(c.events);
      expect(kept.ledgerRow('datastore', dsName)!.state).toBe(c.state);
      if (c.reason) expect(kept.ledgerRow('datastore', dsName)!.error).toMatch(c.reason);
      expect(failed).toBe(c.state === 'removed' ? 0 : 1);
      expect(lines.filter((l) => l.startsWith('retrying removal of datastore'))).toHaveLength(c.events.filter((e) => e === 'retry').length);
      expect(host2.state()).toEqual(c.state === 'removed' ? [] : [`datastore:${dsName}`]);
      kept.close();
    });
  }
});

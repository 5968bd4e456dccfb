// The run directory's SQLite store, on a real database file in a temp dir.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotARunDirectory } from '../../../src/errors.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { testIdentity, NULL_LATENCY, type ResultRecord } from '../../../src/results/record.ts';
import { DB_FILE, openResults, ResultStore, type RunMeta } from '../../../src/results/store.ts';

const meta: RunMeta = { runId: 'rtest', playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: { storsweep: '0.1.0' }, insecureEndpoints: [] };
const plan = (ids: string[]): RunPlan => ({
  version: 1,
  runId: 'rtest',
  playbook: 'pb',
  target: 't',
  provider: 'local',
  axes: [{ name: 'workload.profile', values: ids }],
  baseline: null,
  profiles: {},
  permutations: ids.map((id, index) => ({ index, permutationId: id, axes: { 'workload.profile': id }, workload: id, steps: [], repetitions: 2, estimateSec: 1 })),
  totalEstimateSec: ids.length,
});
const rec = (permutationId: string, repetition: number, pattern: 'read' | 'write', iops: number): ResultRecord => ({
  runId: 'rtest',
  permutationId,
  axes: {},
  repetition,
  test: testIdentity({ pattern, blockSizeBytes: 1 << 20, queueDepth: 8, threads: 1, readPercent: pattern === 'read' ? 100 : 0 }),
  iops,
  bytesPerSecond: iops * (1 << 20),
  latencyUs: NULL_LATENCY,
  cpuPercent: null,
  tool: { name: 'fio', version: 'fio-3.33' },
  rawPath: `raw/${permutationId}/rep${repetition}/${pattern}.json`,
});

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-store-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('ResultStore', () => {
  it('keeps meta, plan and one pending row per permutation; survives reopening', () => {
    const s = ResultStore.create(path.join(dir, 'run'), meta, plan(['pB', 'pA']));
    s.close();
    expect(fs.existsSync(path.join(dir, 'run', DB_FILE))).toBe(true);
    const again = ResultStore.open(path.join(dir, 'run'));
    expect(again.meta()).toEqual(meta);
    expect(again.plan().permutations.map((p) => p.permutationId)).toEqual(['pB', 'pA']);
    expect(again.permutations().map((p) => [p.permutationId, p.status, p.completedRepetitions])).toEqual([
      ['pB', 'pending', 0],
      ['pA', 'pending', 0],
    ]);
    again.close();
  });

  it('opening a directory that is not a run fails with a clear message', () => {
    expect(() => ResultStore.open(dir)).toThrow(`${dir}: not a run directory (no ${DB_FILE})`);
    expect(() => ResultStore.openReadOnly(dir)).toThrow(NotARunDirectory);
  });

  it('a run.sqlite that holds no storsweep run is refused and left byte-identical (no schema, no WAL switch)', async () => {
    const { default: Database } = await import('better-sqlite3');
    const foreign = new Database(path.join(dir, DB_FILE));
    foreign.exec("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine')");
    foreign.close();
    const before = fs.readFileSync(path.join(dir, DB_FILE));
    expect(() => ResultStore.open(dir)).toThrow(NotARunDirectory);
    expect(() => ResultStore.open(dir)).toThrow(/holds no storsweep run \(left unchanged\)/);
    expect(fs.readFileSync(path.join(dir, DB_FILE)).equals(before)).toBe(true);
    expect(fs.existsSync(path.join(dir, `${DB_FILE}-wal`))).toBe(false);
  });

  it('records come back in plan order, then repetition, then insertion order; counters and journal follow', () => {
    const s = ResultStore.create(dir, meta, plan(['pB', 'pA']));
    s.markRunning('pA');
    s.addRepetition('pA', 1, [rec('pA', 1, 'read', 10), rec('pA', 1, 'write', 11)]);
    s.markRunning('pB');
    s.addRepetition('pB', 1, [rec('pB', 1, 'write', 20), rec('pB', 1, 'read', 21)]);
    s.addRepetition('pB', 2, [rec('pB', 2, 'write', 22)]);
    s.markFinished('pB', 'done', null);
    s.markFinished('pA', 'failed', 'ssh://x: SSH connection lost');
    expect(s.records().map((r) => `${r.permutationId}/${r.repetition}/${r.test.id}/${r.iops}`)).toEqual([
      'pB/1/seq-1m-q8t1-write/20',
      'pB/1/seq-1m-q8t1-read/21',
      'pB/2/seq-1m-q8t1-write/22',
      'pA/1/seq-1m-q8t1-read/10',
      'pA/1/seq-1m-q8t1-write/11',
    ]);
    const rows = Object.fromEntries(s.permutations().map((p) => [p.permutationId, p]));
    expect(rows.pB).toMatchObject({ status: 'done', completedRepetitions: 2, attempts: 1, reason: null });
    expect(rows.pA).toMatchObject({ status: 'failed', completedRepetitions: 1, reason: 'ssh://x: SSH connection lost' });
    expect(s.journal().filter((j) => j.event === 'recorded').map((j) => [j.permutationId, j.step, j.detail])).toEqual([
      ['pA', 'repetition-1', { records: 2 }],
      ['pB', 'repetition-1', { records: 2 }],
      ['pB', 'repetition-2', { records: 1 }],
    ]);
    const info = openResults(dir);
    expect(info.runInfo().failures).toEqual([{ permutationId: 'pA', axes: { 'workload.profile': 'pA' }, reason: 'ssh://x: SSH connection lost' }]);
    expect(info.records()).toHaveLength(5);
    info.close();
    s.close();
  });

  it('a repetition is all or nothing: a duplicate record aborts the whole repetition', () => {
    const s = ResultStore.create(dir, meta, plan(['pA']));
    s.addRepetition('pA', 1, [rec('pA', 1, 'read', 1)]);
    expect(() => s.addRepetition('pA', 2, [rec('pA', 2, 'read', 2), rec('pA', 2, 'read', 3)])).toThrow(/UNIQUE/);
    expect(s.records().map((r) => r.repetition)).toEqual([1]);
    expect(s.permutations()[0]!.completedRepetitions).toBe(1);
    expect(s.journal().filter((j) => j.event === 'recorded')).toHaveLength(1);
    s.close();
  });

  it('discardRepetitionsAfter drops only the later repetitions of that permutation', () => {
    const s = ResultStore.create(dir, meta, plan(['pA', 'pB']));
    for (const rep of [1, 2, 3]) s.addRepetition('pA', rep, [rec('pA', rep, 'read', rep)]);
    s.addRepetition('pB', 2, [rec('pB', 2, 'read', 9)]);
    expect(s.discardRepetitionsAfter('pA', 1)).toBe(2);
    expect(s.records().map((r) => `${r.permutationId}/${r.repetition}`)).toEqual(['pA/1', 'pB/2']);
    s.close();
  });

  it('the ledger tracks intent → created → removed, and lists live objects', () => {
    const s = ResultStore.create(dir, meta, plan(['pA']));
    const ref = { kind: 'datastore', name: 'ss-rtest-pA-ds' };
    s.ledgerIntent('pA', 'esxi-shell', ref, { operation: 'CreateVmfsDatastore' });
    expect(s.ledger({ live: true }).map((o) => [o.name, o.state])).toEqual([['ss-rtest-pA-ds', 'intent']]);
    s.ledgerCreated('pA', { ...ref, provider: 'esxi-shell', id: 'ds-42', data: { path: '/vmfs/volumes/x' } });
    expect(s.ledger()[0]).toMatchObject({ state: 'created', objectId: 'ds-42', data: { path: '/vmfs/volumes/x' } });
    s.ledgerState(ref, 'removed');
    expect(s.ledger({ live: true })).toEqual([]);
    expect(s.ledger({ permutationId: 'pA' })[0]!.state).toBe('removed');
    s.close();
  });
});

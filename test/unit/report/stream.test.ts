// The report reads records one at a time and keeps none of them (report/model.ts ReportRecords):
// a run's store hands each record over as it reads it, so a 100,000-record report never holds
// them all. What can fail here: the model built from a one-shot stream differs from the one built
// from an array, or a record object (or its latency object) stays reachable from what the report
// or its columns keep.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildReport, ReportRecords } from '../../../src/report/model.ts';
import { renderHtml } from '../../../src/report/html.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { collectRecords, eachRecord, mergeSources, type Source } from '../../../src/report/source.ts';
import { loadSource } from '../../../src/app/load-source.ts';
import type { ResultRecord } from '../../../src/results/record.ts';
import { ResultStore } from '../../../src/results/store.ts';
import { labRecords, seedRecords } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'storsweep-stream-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A lab run whose p-thin-8 permutation carries host figures on its read test, records of two tests interleaved. */
function records(): ResultRecord[] {
  const out = labRecords({ repetitions: 4, relNoise: 0.05, thickFactor: 0.8 }).map((r) => ({ ...r, latencyUs: { ...r.latencyUs } }));
  for (const r of out) {
    if (r.permutationId === 'p-thin-8' && r.test.pattern === 'read') {
      r.host = { source: 'vsphere-perf', from: 'a', to: 'b', intervalSec: 20, samples: 3, samplesInside: 2, latencyUs: (r.latencyUs.mean ?? 0) * 0.8, latencySpan: 'virtual disk' };
    }
  }
  return out;
}

/** Iterable exactly once, as a store read row by row is. */
function* oneShot(list: readonly ResultRecord[]): Generator<ResultRecord> {
  for (const r of list) yield r;
}

/** Every object reachable from `root` (own properties, Map and Set entries; typed arrays hold numbers only). */
function reachable(root: unknown): Set<object> {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v)) continue;
    if (v instanceof Map) for (const [k, x] of v) stack.push(k, x);
    else if (v instanceof Set) for (const x of v) stack.push(x);
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      if (d && 'value' in d) stack.push(d.value);
    }
  }
  return seen;
}

describe('a report built from records read one at a time', () => {
  it('is the same model from a one-shot stream as from the array, pooled or not, with its host rows', () => {
    const list = records();
    const info = { runId: 'lab-run' };
    const fromArray = buildReport(list, info);
    expect(fromArray.hostLatency.length).toBeGreaterThan(0);
    expect(buildReport(oneShot(list), info)).toEqual(fromArray);
    const table = new ReportRecords();
    for (const r of oneShot(list)) table.add(r);
    expect(table.recordCount).toBe(list.length);
    expect(buildReport(table, info)).toEqual(fromArray);
    const pooled = { pool: ['disk.format'], detailLimit: 1 };
    expect(buildReport(oneShot(list), info, pooled)).toEqual(buildReport(list, info, pooled));
  });

  it('keeps no record object, nor a record’s latency object, in its columns or in the report', () => {
    const list = records();
    const own = new Set<object>(list.flatMap((r) => [r, r.latencyUs]));
    const table = new ReportRecords();
    for (const r of list) table.add(r);
    const report = buildReport(table, { runId: 'lab-run' });
    const held = [...reachable({ table, report })].filter((o) => own.has(o));
    expect(held).toEqual([]);
    // the walk does see what is kept: the axes objects records share, and the host figures
    const seen = reachable(table);
    expect(seen.has(list[0]!.axes)).toBe(true);
    expect(seen.has(list.find((r) => r.host)!.host!)).toBe(true);
  });
});

describe('a run directory read as a source', () => {
  function storeRun(name: string, runId: string): { dir: string; records: ResultRecord[] } {
    const dir = join(tmp, name);
    const recs = seedRecords(runId);
    const ids = [...new Set(recs.map((r) => r.permutationId))];
    const store = ResultStore.create(
      dir,
      { runId, playbook: 'vmfs3', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 'lab-esxi', startedAt: '2026-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] },
      {
        version: 1,
        runId,
        playbook: 'vmfs3',
        target: 'lab-esxi',
        provider: 'local',
        axes: [{ name: 'datastore.blockSizeMb', values: [1, 2, 4, 8] }],
        baseline: null,
        profiles: {},
        permutations: ids.map((id, index) => ({ index, permutationId: id, axes: recs.find((r) => r.permutationId === id)!.axes, workload: 'cdm3', steps: [], repetitions: 1, estimateSec: 1 })),
        totalEstimateSec: 4,
      },
    );
    for (const id of ids) store.addRepetition(id, 1, recs.filter((r) => r.permutationId === id));
    store.close();
    return { dir, records: recs };
  }

  it('is read from its store when the report asks, each time anew, and reports as its records in memory do', async () => {
    const a = storeRun('run-a', 'ra');
    const b = storeRun('run-b', 'rb');
    const sa = await loadSource(a.dir);
    const sb = await loadSource(b.dir);
    expect(Array.isArray(sa.records)).toBe(false);
    const first = await collectRecords(sa.records);
    expect(first).toHaveLength(a.records.length);
    expect(first[0]!.axes).toEqual({ target: 'lab-esxi', 'datastore.blockSizeMb': 1, source: 'ra' });
    // a second read gives the same records (the store is opened again)
    expect(await collectRecords(sa.records)).toEqual(first);
    const inMemory = (s: Source) => collectRecords(s.records).then((records) => ({ ...s, records }));
    const eager = mergeSources([await inMemory(sa), await inMemory(sb)]);
    const lazy = mergeSources([sa, sb]);
    expect(Array.isArray(lazy.records)).toBe(false);
    const table = new ReportRecords();
    await eachRecord(lazy.records, (r) => table.add(r));
    const fromStream = buildReport(table, lazy.info);
    const fromArray = buildReport(eager.records, eager.info);
    expect(fromStream).toEqual(fromArray);
    expect(renderMarkdown(fromStream)).toBe(renderMarkdown(fromArray));
    expect(renderHtml(fromStream)).toBe(renderHtml(fromArray));
  });
});

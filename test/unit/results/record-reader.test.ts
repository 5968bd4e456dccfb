// port.ts recordReader: what both run stores (SQLite, PostgreSQL) parse stored records with. Records
// of one permutation share their axes, test identity, tool and metadata objects; nothing else is
// shared, and nothing of one record's own figures is lost.
import { describe, expect, it } from 'vitest';
import { recordReader } from '../../../src/results/port.ts';
import { NULL_LATENCY, testIdentity, type ResultRecord } from '../../../src/results/record.ts';

const rec = (permutationId: string, repetition: number, readPercent: number, iops: number, metadata?: ResultRecord['metadata']): string =>
  JSON.stringify({
    runId: 'r',
    permutationId,
    axes: { 'disk.format': permutationId === 'pA' ? 'thin' : 'eagerzeroedthick' },
    repetition,
    test: testIdentity({ pattern: 'randread', blockSizeBytes: 4096, queueDepth: 1, threads: 1, readPercent }),
    iops,
    bytesPerSecond: iops * 4096,
    latencyUs: NULL_LATENCY,
    cpuPercent: null,
    tool: { name: 'fio', version: 'fio-3.33' },
    rawPath: null,
    ...(metadata ? { metadata } : {}),
  } satisfies ResultRecord);

describe('recordReader', () => {
  it('shares axes, test, tool and metadata between records that repeat them; keeps each record whole', () => {
    const read = recordReader();
    const a1 = read(rec('pA', 1, 100, 10, { passes: 1 }));
    const a2 = read(rec('pA', 2, 100, 20, { passes: 1 }));
    const b1 = read(rec('pB', 1, 0, 30, { passes: 2 }));
    expect(a2.axes).toBe(a1.axes);
    expect(a2.test).toBe(a1.test);
    expect(a2.tool).toBe(a1.tool);
    expect(a2.metadata).toBe(a1.metadata);
    expect(b1.axes).not.toBe(a1.axes);
    expect(b1.test).not.toBe(a1.test);
    expect(b1.tool).toBe(a1.tool);
    expect(b1.metadata).not.toBe(a1.metadata);
    expect([a1, a2, b1].map((r) => [r.permutationId, r.repetition, r.iops, r.axes, r.test.readPercent, r.metadata])).toEqual([
      ['pA', 1, 10, { 'disk.format': 'thin' }, 100, { passes: 1 }],
      ['pA', 2, 20, { 'disk.format': 'thin' }, 100, { passes: 1 }],
      ['pB', 1, 30, { 'disk.format': 'eagerzeroedthick' }, 0, { passes: 2 }],
    ]);
    // another read shares nothing with this one
    expect(recordReader()(rec('pA', 1, 100, 10)).axes).not.toBe(a1.axes);
  });
});

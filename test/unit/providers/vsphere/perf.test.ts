// The pure parts of the host's view through PerformanceManager (src/providers/vsphere/perf.ts):
// counters by name, the virtual disk's and datastore's instance names, which samples count for a
// test's span, and I/O-weighted latency.
import { describe, expect, it } from 'vitest';
import { combined, counterKeys, datastoreInstances, summarise, virtualDiskInstance } from '../../../../src/providers/vsphere/perf.ts';
import type { PerfEntityMetric } from '../../../../src/providers/vsphere/types.ts';

const info = (key: number, group: string, name: string, rollup = 'average') => ({ key, groupInfo: { key: group }, nameInfo: { key: name }, unitInfo: { key: 'millisecond' }, rollupType: rollup, statsType: 'absolute' });

describe('counters and instances', () => {
  it('resolves counter keys by group.name.rollup, whatever numbers the server assigned', () => {
    const keys = counterKeys([info(589828, 'virtualDisk', 'totalReadLatency'), info(175, 'virtualDisk', 'totalReadLatency', 'maximum'), info(655364, 'datastore', 'totalReadLatency')]);
    expect(keys.get('virtualDisk.totalReadLatency.average')).toBe(589828);
    expect(keys.get('virtualDisk.totalReadLatency.maximum')).toBe(175);
    expect(keys.get('datastore.totalReadLatency.average')).toBe(655364);
  });
  it('names a virtual disk by its controller type, bus and unit (scsi0:1, sata1:0, nvme0:2)', () => {
    const devices = [
      { key: 1000, _type: 'ParaVirtualSCSIController', busNumber: 0 },
      { key: 15000, _type: 'VirtualAHCIController', busNumber: 1 },
      { key: 31000, _type: 'VirtualNVMEController', busNumber: 0 },
    ];
    expect(virtualDiskInstance(devices, { controllerKey: 1000, unitNumber: 1 })).toBe('scsi0:1');
    expect(virtualDiskInstance(devices, { controllerKey: 15000, unitNumber: 0 })).toBe('sata1:0');
    expect(virtualDiskInstance(devices, { controllerKey: 31000, unitNumber: 2 })).toBe('nvme0:2');
    expect(virtualDiskInstance(devices, { controllerKey: 4000, unitNumber: 0 })).toBeNull();
  });
  it('names a datastore by its VMFS uuid, else its URL\'s last segment', () => {
    expect(datastoreInstances({ url: 'ds:///vmfs/volumes/5f1c2a3b-11223344-5566-001122334455/', vmfs: { uuid: '5f1c2a3b-11223344-5566-001122334455' } })).toEqual(['5f1c2a3b-11223344-5566-001122334455', '5f1c2a3b-11223344-5566-001122334455']);
    expect(datastoreInstances({ url: 'ds:///vmfs/volumes/a1b2c3d4-e5f60718/' })).toEqual(['a1b2c3d4-e5f60718']);
  });
});

describe('samples kept for a test span', () => {
  const ids = new Map<number, { group: 'virtualDisk' | 'datastore'; field: 'readIops' | 'writeIops' | 'readKBps' | 'writeKBps' | 'readLatencyMs' | 'writeLatencyMs' }>([
    [1, { group: 'virtualDisk', field: 'readIops' }],
    [2, { group: 'virtualDisk', field: 'readLatencyMs' }],
  ]);
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const metric = (stamps: number[], iops: number[], lat: number[]): PerfEntityMetric => ({
    entity: { type: 'VirtualMachine', value: 'vm-1' },
    sampleInfo: stamps.map((s) => ({ timestamp: at(s), interval: 20 })),
    value: [
      { id: { counterId: 1, instance: 'scsi0:1' }, value: iops },
      { id: { counterId: 2, instance: 'scsi0:1' }, value: lat },
    ],
  });

  it('uses only samples wholly inside the test when there are some, weighting latency by I/O', () => {
    // samples at 20, 40, 60, 80 cover (0,20], (20,40], (40,60], (60,80]; the test ran 15 s → 65 s
    const s = summarise([metric([20, 40, 60, 80], [100, 300, 100, 999], [50, 2, 6, 50])], ids, { fromMs: t0 + 15_000, toMs: t0 + 65_000 }, 20);
    expect(s.samples).toBe(2); // 40 and 60
    expect(s.inside).toBe(2);
    expect(s.figures.virtualDisk?.readIops).toBe(200);
    expect(s.figures.virtualDisk?.readLatencyMs).toBe((2 * 300 + 6 * 100) / 400);
  });
  it('falls back to overlapping samples for a test shorter than an interval, and skips -1 (no data)', () => {
    const s = summarise([metric([20, 40, 60], [-1, 400, 10], [-1, 3, 9])], ids, { fromMs: t0 + 25_000, toMs: t0 + 30_000 }, 20);
    expect(s.inside).toBe(0);
    expect(s.samples).toBe(1); // only (20,40] overlaps 25..30
    expect(s.figures.virtualDisk?.readLatencyMs).toBe(3);
  });
  it('combines read and write latency by their I/O counts', () => {
    expect(combined({ readIops: 300, writeIops: 100, readLatencyMs: 2, writeLatencyMs: 6 })).toBe(3);
    expect(combined({ readIops: 0, writeIops: 0, readLatencyMs: null, writeLatencyMs: 4 })).toBe(4);
  });
});

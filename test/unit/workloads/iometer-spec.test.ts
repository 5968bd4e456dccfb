import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { iometerSpec, parseBinarySize } from '../../../src/workloads/iometer-spec.ts';

describe('iometerSpec', () => {
  it.each([
    ['32k 100% read 0% random', 'seq-32k-q1t1-read', 'read', 100],
    ['32k 0% read 0% random', 'seq-32k-q1t1-write', 'write', 0],
    ['4k 50% read 100% random', 'rnd-4k-q1t1-mix50', 'randrw', 50],
    ['4KB 100% read 100% random q32', 'rnd-4k-q32t1-read', 'randread', 100],
    ['64 KiB 70% reads 0% random t4 q8', 'seq-64k-q8t4-mix70', 'rw', 70],
    ['512 0% read 100% random', 'rnd-512b-q1t1-write', 'randwrite', 0],
  ])('%s → %s', (spec, id, pattern, readPercent) => {
    const t = iometerSpec(spec);
    expect(t.id).toBe(id);
    expect(t.pattern).toBe(pattern);
    expect(t.readPercent).toBe(readPercent);
  });

  it.each([
    ['32k 100% read 50% random', /random 50% is not supported/],
    ['32k 100% rd 0% random', /expected "read", got "rd"/],
    ['32q 100% read 0% random', /block size "32q"/],
    ['32k 101% read 0% random', /101% is above 100%/],
    ['32k 100 read 0% random', /whole percentage like "50%", got "100"/],
    ['32k 100% read', /random share must be a whole percentage.*got nothing/],
    ['32k 100% read 0% random q0', /unexpected "q0"/],
    ['32k 100% read 0% random q4 q8', /q<depth> given twice/],
    ['', /it is empty/],
  ])('rejects %j', (spec, message) => {
    expect(() => iometerSpec(spec)).toThrow(InvalidArgument);
    expect(() => iometerSpec(spec)).toThrow(message);
  });

  it('every error shows the grammar', () => {
    expect(() => iometerSpec('4k')).toThrow(/expected "<size> <read>% read <random>% random/);
  });

  it('sizes are binary', () => {
    expect([parseBinarySize('4k'), parseBinarySize('1MiB'), parseBinarySize('512b'), parseBinarySize('2 MB'), parseBinarySize('0k')]).toEqual([4096, 1048576, 512, 2097152, null]);
  });
});

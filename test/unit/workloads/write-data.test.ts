// What data the writes carry (workloads/write-data.ts): CrystalDiskMark's one block-sized random
// buffer for every diskspd write and a 1 MiB one for the fill (`writeData: cdm`, the default), a
// large random buffer with `writeData: unique`; fio's fresh random data per write; recorded in every
// record and compared between sources (report/conditions.ts).
import { describe, expect, it } from 'vitest';
import { conditionDifferences, conditionsOf, sourceConditions } from '../../../src/report/conditions.ts';
import { diskspdArgs } from '../../../src/workloads/diskspd.ts';
import { diskspdFillArgs, diskspdFillMethod } from '../../../src/workloads/prefill.ts';
import { getProfile, makeTest } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';
import { customDiskspdTest } from '../../../src/workloads/custom.ts';
import { diskspdDataPattern, fioDataPattern, uniqueBufferBytes, writeDataFacts } from '../../../src/workloads/write-data.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const cdm8 = getProfile('cdm8-default')!;
const sized = (fileSizeBytes: number, writeData?: 'cdm' | 'unique'): WorkloadProfile => ({ ...cdm8, fileSizeBytes, ...(writeData ? { writeData } : {}) });
const zOf = (argv: string[]) => argv.filter((a) => a.startsWith('-Z'));
const write4k = makeTest('randwrite', 4096, 32, 1);

describe('the -Z diskspd gets', () => {
  it('cdm (default): -Z<block> for a write, -Z1M for the fill — one buffer repeated, as CrystalDiskMark 8 passes', () => {
    expect(zOf(diskspdArgs(write4k, cdm8, { target: 'D:\\t.dat' }))).toEqual(['-Z4K']);
    expect(zOf(diskspdArgs(makeTest('randread', 4096, 32, 1), cdm8, { target: 'D:\\t.dat' }))).toEqual([]);
    expect(zOf(diskspdFillArgs(cdm8, { target: 'D:\\t.dat', baseBytes: 0, create: true }))).toEqual(['-Z1M']);
    expect(diskspdFillMethod(cdm8)).toContain('random 1 MiB source buffer (-Z1M)');
  });

  it('unique: a buffer as large as the test region, at most 1 GiB, never smaller than the block — tests and fill alike', () => {
    expect(zOf(diskspdArgs(write4k, sized(GiB, 'unique'), { target: 'D:\\t.dat' }))).toEqual(['-Z1G']);
    expect(zOf(diskspdArgs(write4k, sized(16 * MiB, 'unique'), { target: 'D:\\t.dat' }))).toEqual(['-Z16M']);
    expect(zOf(diskspdArgs(write4k, sized(64 * GiB, 'unique'), { target: 'D:\\t.dat' }))).toEqual(['-Z1G']);
    expect(zOf(diskspdFillArgs(sized(GiB, 'unique'), { target: 'D:\\t.dat', baseBytes: 0, create: true }))).toEqual(['-Z1G']);
    expect(diskspdFillMethod(sized(GiB, 'unique'))).toContain('large random source buffer (-Z1G)');
    expect(uniqueBufferBytes({ fileSizeBytes: MiB }, 2 * MiB)).toBe(2 * MiB);
  });

  it('a custom test\'s own -Z wins over the mode', () => {
    const t = customDiskspdTest('-b4K -w100 -r -Zr');
    expect(zOf(diskspdArgs(t, sized(GiB, 'unique'), { target: 'D:\\t.dat' }))).toEqual(['-Zr']);
  });
});

describe('what each flag writes', () => {
  it('classes a comparison can tell apart', () => {
    expect(diskspdDataPattern('-Z4K', 4096).class).toBe('repeated');
    expect(diskspdDataPattern('-Z1G', 4096).class).toBe('unique');
    expect(diskspdDataPattern('-Zr', 4096).class).toBe('unique');
    expect(diskspdDataPattern('-Z', 4096).class).toBe('zeros');
    expect(diskspdDataPattern(undefined, 4096).class).toBe('pattern');
    expect(diskspdDataPattern('-Z2b', 4096).class).toBe('unique');
    expect(fioDataPattern(undefined).class).toBe('unique');
    expect(fioDataPattern({ zero_buffers: '1' }).class).toBe('zeros');
    expect(fioDataPattern({ buffer_compress_percentage: '50' }).class).toBe('custom');
  });

  it('every record says what the tests and the fill wrote', () => {
    expect(writeDataFacts('diskspd', cdm8, true, MiB)).toMatchObject({ dataPattern: 'repeated', prefillData: 'repeated', dataPatternDetail: expect.stringContaining('-Z1M'), prefillDataDetail: expect.stringContaining('-Z1M') });
    expect(writeDataFacts('diskspd', sized(GiB, 'unique'), true, MiB)).toMatchObject({ dataPattern: 'unique', prefillData: 'unique' });
    expect(writeDataFacts('fio', cdm8, true, MiB)).toMatchObject({ dataPattern: 'unique', prefillData: 'unique', dataPatternDetail: 'fio refill_buffers: fresh random data per write' });
    expect(writeDataFacts('fio', cdm8, false, MiB)).not.toHaveProperty('prefillData');
    const mixed = { ...cdm8, tests: [customDiskspdTest('-b4K -w100 -Z'), customDiskspdTest('-b4K -w100')] };
    expect(writeDataFacts('diskspd', mixed, false, MiB)).toMatchObject({ dataPattern: 'mixed' });
  });
});

describe('in the report', () => {
  const cond = (tool: 'fio' | 'diskspd', p: WorkloadProfile) => conditionsOf({ metadata: { passes: 1, ...writeDataFacts(tool, p, true, MiB) }, tool: { name: tool, version: null }, fills: [], unwritten: [], replication: 'within-provisioning' });

  it('diskspd as CrystalDiskMark vs fio: a difference naming both; unique diskspd vs fio: none', () => {
    expect(conditionDifferences(cond('diskspd', cdm8), cond('fio', cdm8))).toEqual(expect.arrayContaining(['write data one buffer repeated vs unique random', 'fill data one buffer repeated vs unique random']));
    expect(conditionDifferences(cond('diskspd', sized(GiB, 'unique')), cond('fio', cdm8)).filter((d) => /data/.test(d))).toEqual([]);
  });

  it('the conditions table has a write data row with the flags', () => {
    const facts = sourceConditions('run1', [cond('diskspd', cdm8)]).facts;
    expect(facts.find((f) => f.name === 'write data')?.value).toMatch(/^tests: diskspd -Z1M: one random 1M buffer, the same data in every write; diskspd -Z4K: .*; fill: diskspd -Z1M/);
  });
});

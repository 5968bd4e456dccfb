import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../src/errors.ts';
import { detectFormat, importFile, importText } from '../../../src/importers/index.ts';
import { runImport } from '../../../src/cli/commands/import.ts';
import { fioBytes } from '../../../src/importers/fio-json.ts';
import { histogramPercentile } from '../../../src/workloads/fio-latency.ts';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/${p}`, import.meta.url));
const text = (p: string) => readFileSync(fx(p), 'utf8');

describe('format detection', () => {
  it.each([
    ['cdm/cdm3-vmfs3-1mb.txt', 'crystaldiskmark-text'],
    ['cdm/cdm7-default.txt', 'crystaldiskmark-text'],
    ['fio/randread-4k-q32.json', 'fio-json'],
    ['fio/seqwrite-1m-q8-jsonplus.json', 'fio-json'],
    ['diskspd/cdm6-rnd-4k-q8t8-write.xml', 'diskspd-xml'],
    ['iometer/iometer-1.1.0-results.csv', 'iometer-csv'],
    ['table/vmfs3-block-size-paper.csv', 'table-csv'],
    ['cdm/cdm3-vmfs3-appendix.txt', 'crystaldiskmark-text'],
  ])('%s → %s', (file, format) => {
    expect(detectFormat(text(file))).toBe(format);
  });

  it('anything else is a ParseError naming every expected format', () => {
    expect(() => importText('hello,world\n1,2\n', 'x.csv')).toThrow(ParseError);
    expect(() => importText('hello,world\n1,2\n', 'x.csv')).toThrow(
      /^x\.csv: not a results file storsweep can import; expected a CrystalDiskMark 3\.x–8\.x text export \(anywhere in the file\), fio JSON .*diskspd XML .*IOMeter results CSV, or a results table \(CSV or a Markdown pipe table with a header row naming "test" and metric columns such as "read MB\/s"; see docs\/guide\/importing.md\)$/,
    );
  });
});

describe('importFile', () => {
  it('decodes UTF-16LE with BOM from disk', async () => {
    const r = await importFile(fx('cdm/cdm6-utf16le-bom.txt'));
    expect(r.format).toBe('crystaldiskmark-text');
    expect(r.records).toHaveLength(8);
    expect(r.records[0]?.runId).toBe('import:cdm6-utf16le-bom.txt');
  });

  it('a missing or empty file is a ParseError, not a stack trace', async () => {
    await expect(importFile('/nonexistent/x.txt')).rejects.toThrow(/x\.txt: cannot read file \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), 'ssw-import-'));
    writeFileSync(join(dir, 'empty.txt'), '');
    await expect(importFile(join(dir, 'empty.txt'))).rejects.toThrow(/empty\.txt: file is empty; expected a CrystalDiskMark/);
  });
});

describe('fio JSON (captured from fio 3.33 runs on this machine)', () => {
  it('json: randread 4k QD32, numbers from parseFioJson, identity from job options; latency is lat_ns, not clat_ns', async () => {
    const r = await importFile(fx('fio/randread-4k-q32.json'));
    // libaio: lat_ns (446.67 µs) and clat_ns (441.68 µs) differ by the submission time; fio printed
    // percentiles for clat only (no lat_percentiles=1), so they are left empty and the import says why
    expect(r.warnings).toEqual([expect.stringMatching(/job 1 "rnd-4k-q32t1-read": fio printed percentiles for completion latency \(clat\) only .*left empty/)]);
    expect(r.records).toHaveLength(1);
    const rec = r.records[0]!;
    expect(rec.test.id).toBe('rnd-4k-q32t1-read');
    expect(rec.bytesPerSecond).toBe(293057439);
    expect(rec.iops).toBe(71547.226387);
    expect(rec.latencyUs.mean).toBeCloseTo(446.670246888, 9);
    expect(rec.latencyUs.p99).toBeNull();
    expect(rec.metadata).toMatchObject({ latencySpan: expect.stringMatching(/^issue→completion \(fio lat_ns/) });
    expect(rec.cpuPercent).toBeCloseTo(7.45 + 43.65, 9);
    expect(rec.tool).toEqual({ name: 'fio', version: 'fio-3.33' });
    expect(rec.permutationId).toBe('randread-4k-q32');
    // IOPS × block size ≈ bytes/s: the record is self-consistent
    expect(Math.abs((rec.iops! * 4096) / rec.bytesPerSecond! - 1)).toBeLessThan(0.01);
  });

  it('json+ (latency bins) reads the same way', async () => {
    const rec = (await importFile(fx('fio/seqwrite-1m-q8-jsonplus.json'))).records[0]!;
    expect(rec.test.id).toBe('seq-1m-q8t1-write');
    expect(rec.bytesPerSecond).toBe(2645782877);
    expect(rec.iops).toBe(2523.215177);
  });

  it('group_reporting with a [global] section: identity merges global and job options', async () => {
    const rec = (await importFile(fx('fio/randrw70-4k-q8t4.json'))).records[0]!;
    expect(rec.test).toMatchObject({ id: 'rnd-4k-q8t4-mix70', pattern: 'randrw', readPercent: 70, threads: 4, queueDepth: 8 });
    expect(rec.bytesPerSecond).toBe(214907970 + 92947062);
    expect(rec.iops).toBeCloseTo(52467.766117 + 22692.153923, 6);
  });

  it('numjobs=4 without group_reporting (4 clone entries) → one record with the summed IOPS and bytes, T=4', async () => {
    const r = await importFile(fx('fio/numjobs4-no-group-reporting.json'));
    expect(r.records).toHaveLength(1);
    const rec = r.records[0]!;
    expect(rec.test).toMatchObject({ id: 'rnd-4k-q4t4-read', threads: 4, queueDepth: 4 });
    expect(rec.iops).toBeCloseTo(5819.541376 + 5712.287712 + 5846.153846 + 5074.925075, 6);
    expect(rec.bytesPerSecond).toBe(91967110);
    // the mean of all 4 clones' I/Os (weighted by I/O count); percentiles need fio's histograms
    expect(rec.latencyUs.mean).toBeCloseTo(707.2495654377733, 6);
    expect(rec.latencyUs.p99).toBeNull();
    expect(rec.cpuPercent).toBeGreaterThan(17);
    expect(rec.cpuPercent).toBeLessThan(21);
    expect(rec.metadata).toMatchObject({ clones: 4, job: 1 });
    expect(r.warnings.join('\n')).toMatch(/jobs 1–4 \(4 clones of "rnd-4k-q4t4-read", summed\).*percentiles left empty \(they cannot be merged without fio's histograms/);
  });

  it('numjobs=4 json+ without group_reporting: percentiles from the merged lat_ns histograms', async () => {
    const r = await importFile(fx('fio/numjobs4-no-group-reporting-jsonplus.json'));
    expect(r.records).toHaveLength(1);
    const rec = r.records[0]!;
    expect(rec.iops).toBeCloseTo(24668.066465, 6);
    expect(rec.bytesPerSecond).toBe(101040398);
    expect(rec.latencyUs.mean).toBeCloseTo(646.3967511638599, 6);
    const doc = JSON.parse(text('fio/numjobs4-no-group-reporting-jsonplus.json')) as { jobs: { read: { lat_ns: { bins: Record<string, number>; percentile: Record<string, number> } } }[] };
    const merged = new Map<number, number>();
    for (const j of doc.jobs) for (const [k, c] of Object.entries(j.read.lat_ns.bins)) merged.set(Number(k), (merged.get(Number(k)) ?? 0) + c);
    expect(rec.latencyUs.p99).toBe(histogramPercentile(merged, 99)! / 1000);
    // the percentile rule is fio's own: on one clone's bins it gives what fio printed for that clone
    const one = doc.jobs[0]!.read.lat_ns;
    const bins = new Map(Object.entries(one.bins).map(([k, c]) => [Number(k), c]));
    for (const p of ['50.000000', '95.000000', '99.000000', '99.900000']) expect(histogramPercentile(bins, Number(p))).toBe(one.percentile[p]);
    expect(r.warnings).toEqual([]);
  });

  it("kb_base=1000 is respected when reading sizes: bs=4KiB is 4096 bytes there (and 4000 under fio's default)", async () => {
    const rec = (await importFile(fx('fio/kb-base-1000-bs-4KiB.json'))).records[0]!;
    expect(rec.test).toMatchObject({ id: 'rnd-4k-q1t1-read', blockSizeBytes: 4096 });
    expect(fioBytes('4KiB')).toBe(4000);
    expect(fioBytes('4k')).toBe(4096);
    expect(fioBytes('4k', 1000)).toBe(4000);
    expect(fioBytes('1m', 1000)).toBe(1_000_000);
    expect(fioBytes('1MiB', 1000)).toBe(1048576);
    expect(fioBytes('512b')).toBe(512);
  });

  it('two jobs → two records', async () => {
    const r = await importFile(fx('fio/two-jobs-psync.json'));
    expect(r.records.map((x) => [x.test.id, x.bytesPerSecond])).toEqual([['seq-128k-q1t1-read', 717295120], ['rnd-4k-q1t1-write', 64758537]]);
  });

  it('truncated fio JSON is a ParseError', () => {
    const t = text('fio/randread-4k-q32.json');
    expect(() => importText(t.slice(0, 900), 'cut.json')).toThrow(ParseError);
  });
});

describe('diskspd XML', () => {
  it('one record per result TimeSpan with the identity from the profile echo', async () => {
    const r = await importFile(fx('diskspd/cdm6-rnd-4k-q8t8-write.xml'));
    const rec = r.records[0]!;
    expect(rec.test.id).toBe('rnd-4k-q8t8-write');
    expect(rec.bytesPerSecond).toBeCloseTo(2828701696 / 5, 6);
    expect(rec.iops).toBeCloseTo(690601 / 5, 6);
    expect(rec.latencyUs).toEqual({ mean: 741, p50: 684, p95: 1321, p99: 1735, p999: 2355 });
    expect(rec.cpuPercent).toBe(26.74);
    expect(rec.tool).toEqual({ name: 'diskspd', version: '2.1' });
  });
});

describe('diskspd XML: partly random (-rs)', () => {
  it('<RandomRatio> is read: a -rs30 test is rnd30-…, not a fully random one', async () => {
    const xml = text('diskspd/cdm6-rnd-4k-q8t8-write.xml').replace(/(<Random>\d+<\/Random>)/, '$1<RandomRatio>30</RandomRatio>');
    expect(xml).toContain('<RandomRatio>30</RandomRatio>');
    const rec = importText(xml, 'rs30.xml').records[0]!;
    expect(rec.test).toMatchObject({ id: 'rnd30-4k-q8t8-write', pattern: 'randwrite', randomPercent: 30 });
  });
});

describe('IOMeter CSV (1.1.0 layout)', () => {
  it('one record per ALL row; QD from the DISK row; decimal MB/s; response time ms → µs', async () => {
    const r = await importFile(fx('iometer/iometer-1.1.0-results.csv'));
    expect(r.warnings).toEqual([]);
    expect(r.records.map((x) => x.test.id)).toEqual(['seq-32k-q16t1-read', 'rnd-4k-q32t1-mix50']);
    const [seq, mix] = r.records;
    expect(seq).toMatchObject({ bytesPerSecond: 168078141, iops: 5129.337811, cpuPercent: 12.418, latencyUs: { mean: 3118.912 } });
    expect(mix).toMatchObject({ bytesPerSecond: 34455579, iops: 8412.006631, cpuPercent: 21.907 });
    expect(seq?.tool).toEqual({ name: 'iometer', version: '1.1.0' });
    expect(seq?.metadata).toMatchObject({ accessSpecification: '32K 100% read seq', timeStamp: '2019-05-21 11:24:07:375', description: 'vmfs5 1MB block, eager zeroed' });
  });

  it('old single-"MBps" builds are binary; a partly-random spec is read as its own test (rnd50-…), its align kept', () => {
    const header = "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MBps,Read MBps,Write MBps,Average Response Time,Queue Depth,% CPU Utilization";
    const csv = [
      "'Access specifications", "'Access specification name,default assignment", '64K seq,0', "'size,% of size,% reads,% random,delay,burst,align,reply", '65536,100,0,0,0,1,0,0',
      "'Access specification name,default assignment", 'half,0', "'size,% of size,% reads,% random,delay,burst,align,reply", '4096,100,100,50,0,1,4096,0',
      "'End access specifications", "'Results", header,
      'ALL,All,64K seq,1,2,1,1000.5,0,1000.5,62.53125,0,62.53125,1.5,,3.5', 'DISK,E:,64K seq,,,1,1000.5,0,1000.5,62.53125,0,62.53125,1.5,4,',
      'ALL,All,half,1,1,1,10,10,0,0.0390625,0.0390625,0,1,,1',
    ].join('\n');
    const r = importText(csv, 'old.csv');
    expect(r.records.map((x) => [x.test.id, x.bytesPerSecond])).toEqual([
      ['seq-64k-q4t2-write', Math.round(62.53125 * 1048576)],
      ['rnd50-4k-q1t1-read', Math.round(0.0390625 * 1048576)],
    ]);
    expect(r.records[1]!.test).toMatchObject({ pattern: 'randread', randomPercent: 50 });
    expect(r.records.map((x) => x.metadata?.alignBytes)).toEqual([0, 4096]);
    expect(r.records[0]!.metadata).toMatchObject({ align: 'sector boundaries' });
    expect(r.warnings).toEqual(['old.csv:15: no DISK row with a Queue Depth for "half"; assuming 1']);
  });
});

describe('storsweep import command', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { importFile, stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t) } };
  };

  it('prints a table by default', async () => {
    const c = io();
    expect(await runImport([fx('cdm/cdm3-vmfs3-1mb.txt')], {}, c.io)).toBe(0);
    const lines = c.out.join('').split('\n');
    expect(lines[0]).toMatch(/^source\s+test\s+MB\/s\s+IOPS\s+lat µs\s+tool$/);
    expect(lines[2]).toMatch(/^cdm3-vmfs3-1mb\.txt\s+seq-1m-q1t1-read\s+828\.041\s+789\.7\s+crystaldiskmark 3\.0$/);
  });

  it('--csv and --json', async () => {
    const c = io();
    await runImport([fx('cdm/cdm3-vmfs3-1mb.txt')], { csv: true }, c.io);
    // the same CSV as `report -f csv` (one writer): RFC 4180 line ends, axes (here: source) as columns
    const csv = c.out.join('').split('\r\n');
    expect(csv[0]?.startsWith('runId,permutationId,source,repetition,testId,pattern,blockSizeBytes')).toBe(true);
    expect(csv[5]).toMatch(/^import:cdm3-vmfs3-1mb\.txt,cdm3-vmfs3-1mb,cdm3-vmfs3-1mb\.txt,1,rnd-4k-q1t1-read,randread,4096,1,1,100,387,1585000,1\.585,/);
    const j = io();
    await runImport([fx('fio/two-jobs-psync.json')], { json: true }, j.io);
    // JSON Lines, as `results --json` prints them
    const lines = j.out.join('').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines.slice(0, 2).map((l) => (JSON.parse(l) as { test: { id: string } }).test.id)).toEqual(['seq-128k-q1t1-read', 'rnd-4k-q1t1-write']);
  });

  it('--export N takes one export of a file holding several, --set tags it with axis values (checked like a playbook)', async () => {
    const c = io();
    expect(await runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { json: true, export: '3', set: ['datastore.blockSizeMb=4'] }, c.io)).toBe(0);
    const recs = c.out.join('').trim().split('\n').map((l) => JSON.parse(l) as { axes: Record<string, unknown>; permutationId: string; bytesPerSecond: number; test: { id: string } });
    expect(recs).toHaveLength(8);
    expect(recs[0]).toMatchObject({ axes: { source: 'cdm3-vmfs3-appendix.txt#3', 'datastore.blockSizeMb': 4 }, permutationId: 'cdm3-vmfs3-appendix#3' });
    // the 4 MB export's sequential read (cdm3-vmfs3-4mb.txt)
    expect(recs.find((r) => r.test.id === 'seq-1m-q1t1-read')!.bytesPerSecond).toBe(790583000);
    await expect(runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { set: ['datastore.blockSizeMb=3'] }, io().io)).rejects.toThrow(
      '--set datastore.blockSizeMb=3: datastore.blockSizeMb has no value "3" (values: 1, 2, 4, 8)',
    );
    await expect(runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { set: ['datastore.blocksize=3'] }, io().io)).rejects.toThrow(
      /^--set datastore.blocksize=3: "datastore.blocksize" is not an axis \(axes: datastore.kind, datastore.blockSizeMb,/,
    );
    await expect(runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { set: ['blocksize'] }, io().io)).rejects.toThrow('--set blocksize: expected axis=value');
    const five = io();
    expect(await runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { export: '5' }, five.io)).toBe(2);
    expect(five.err.join('')).toMatch(/error: --export 5: .*cdm3-vmfs3-appendix\.txt holds 4 exports \(cdm3-vmfs3-appendix\.txt#1, /);
    const renamed = io();
    await expect(runImport([fx('cdm/cdm3-vmfs3-appendix.txt')], { set: ['source=paper'] }, renamed.io)).resolves.toBe(2);
    expect(renamed.err.join('')).toMatch(/--set source=paper: .* holds 4 exports .*name one with --export N/);
  });

  it("checks a results table's axis columns like --set values, at the row's line", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storsweep-table-'));
    const file = join(dir, 't.csv');
    writeFileSync(file, 'test,read MB/s,disk.format\nSEQ1M Q8T1,100,thinnest\n');
    const c = io();
    expect(await runImport([file], {}, c.io)).toBe(1);
    expect(c.err.join('')).toContain(`error: ${file}:2: column disk.format: disk.format has no value "thinnest" (values: `);
  });

  it('a bad file is reported on stderr, the good ones still print, exit code 1', async () => {
    const c = io();
    expect(await runImport([fx('cdm/cdm8-truncated.txt'), '/nonexistent.txt'], {}, c.io)).toBe(1);
    expect(c.err.join('')).toMatch(/warning: .*cdm8-truncated\.txt:17: unreadable result row/);
    expect(c.err.join('')).toMatch(/error: \/nonexistent\.txt: cannot read file/);
    expect(c.out.join('')).toMatch(/seq-1m-q1t1-write/);
  });

  it('--json with --csv is a usage error', async () => {
    await expect(runImport(['x'], { json: true, csv: true }, io().io)).rejects.toThrow(/choose one of --json and --csv/);
  });
});

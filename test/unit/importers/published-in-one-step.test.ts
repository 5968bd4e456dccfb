// Issue 30 item 2: a paper's appendix of four CrystalDiskMark exports imported in one call, each
// export tagged with its block size, lines up with a run; the paper's own 2 MB vs 1 MB differences
// (one sample each side) reach the report's answer as what they are.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runImport } from '../../../src/cli/commands/import.ts';
import { defaultIo, runReport, type CommandIo } from '../../../src/cli/commands/report.ts';
import { UsageError } from '../../../src/errors.ts';
import { importFile } from '../../../src/importers/index.ts';
import type { ResultRecord } from '../../../src/results/record.ts';
import { seedRecords } from '../report/helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'storsweep-published-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const appendix = fileURLToPath(new URL('../../fixtures/cdm/cdm3-vmfs3-appendix.txt', import.meta.url));
const TAGS = ['#1:datastore.blockSizeMb=1', '#2:datastore.blockSizeMb=2', '#3:datastore.blockSizeMb=4', '#4:datastore.blockSizeMb=8'];

async function imported(files: string[], opts: Parameters<typeof runImport>[1]): Promise<{ code: number; records: ResultRecord[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runImport(files, { json: true, ...opts }, { importFile, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) });
  const records = out.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ResultRecord);
  return { code, records, err: err.join('') };
}

/** A run of the four block sizes, three repetitions each, 10 % below the paper with a little noise. */
function runDir(): string {
  const dir = join(tmp, 'run');
  mkdirSync(dir, { recursive: true });
  const recs = [1, 2, 3].flatMap((rep) =>
    seedRecords('run-vmfs3').map((r) => ({ ...r, repetition: rep, axes: { ...r.axes, target: 'lab-esxi' }, bytesPerSecond: r.bytesPerSecond! * (0.9 + rep * 0.001), iops: r.iops! * (0.9 + rep * 0.001) })),
  );
  writeFileSync(join(dir, 'results.jsonl'), recs.map((r) => JSON.stringify(r) + '\n').join(''));
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ runId: 'run-vmfs3' }));
  return dir;
}

describe('import --tag: several exports of one file in one call', () => {
  it('tags each export with its block size and makes the tagged exports one source', async () => {
    const { code, records } = await imported([appendix], { tag: TAGS });
    expect(code).toBe(0);
    expect(new Set(records.map((r) => r.axes['source']))).toEqual(new Set(['cdm3-vmfs3-appendix.txt']));
    const seq = records.filter((r) => r.test.id === 'seq-1m-q1t1-read').map((r) => [r.axes['datastore.blockSizeMb'], r.bytesPerSecond! / 1e6]);
    expect(seq).toEqual([[1, 828.041], [2, 811.591], [4, 790.583], [8, 802.994]]);
    expect(new Set(records.map((r) => r.permutationId)).size).toBe(4);
  });

  it('refuses a tag for an export no file has, a malformed tag, and a bad axis value, by argument', async () => {
    await expect(imported([appendix], { tag: ['#5:datastore.blockSizeMb=1'] })).rejects.toThrow(/--tag #5:datastore.blockSizeMb=1: no imported file holds export 5 \(at most 4\)/);
    await expect(imported([appendix], { tag: ['datastore.blockSizeMb=1'] })).rejects.toThrow(UsageError);
    await expect(imported([appendix], { tag: ['#1:datastore.blockSizeMb=3'] })).rejects.toThrow(/datastore.blockSizeMb has no value "3"/);
    await expect(imported([appendix], { tag: ['other.txt#1:datastore.blockSizeMb=1'] })).rejects.toThrow(/other.txt is not among the imported files/);
  });

  it('takes the same tags from a file (--tags), one per line, and refuses a bad line at file:line', async () => {
    const tags = join(tmp, 'tags.txt');
    writeFileSync(tags, ['# the appendix, by block size', ...TAGS.map((t) => `cdm3-vmfs3-appendix.txt${t}`), ''].join('\n'));
    const viaFile = await imported([appendix], { tags });
    const viaArgs = await imported([appendix], { tag: TAGS });
    expect(viaFile.code).toBe(0);
    expect(viaFile.records).toEqual(viaArgs.records);
    const bad = join(tmp, 'bad-tags.txt');
    writeFileSync(bad, '#1:datastore.blockSizeMb=1\ndatastore.blockSizeMb=2\n');
    await expect(imported([appendix], { tags: bad })).rejects.toThrow(`--tags ${bad}:2: expected [FILE]#N:axis=value`);
    await expect(imported([appendix], { tags: join(tmp, 'missing.txt') })).rejects.toThrow(/--tags .*missing\.txt: cannot read file \(ENOENT\)/);
  });

  it('makes one source of files given the same --set source=', async () => {
    const seeds = fileURLToPath(new URL('../../fixtures/cdm/', import.meta.url));
    const { code, records } = await imported([`${seeds}cdm3-vmfs3-1mb.txt`, `${seeds}cdm3-vmfs3-2mb.txt`], { set: ['source=paper'] });
    expect(code).toBe(0);
    expect(new Set(records.map((r) => r.axes['source']))).toEqual(new Set(['paper']));
  });
});

describe('report of a run and that import', () => {
  it("says the paper's own 2 MB vs 1 MB differences in the answer, one sample each side", async () => {
    const { records } = await imported([appendix], { tag: TAGS });
    const published = join(tmp, 'published.jsonl');
    writeFileSync(published, records.map((r) => JSON.stringify(r) + '\n').join(''));
    let out = '';
    const io: CommandIo = { loadSource: defaultIo.loadSource, stdout: (t) => void (out += t), stderr: () => {} };
    await runReport([runDir(), published], { format: 'md' }, io);
    const answer = out.split('\n').filter((l) => l.startsWith('- blockSizeMb 2 vs 1'));
    expect(answer).toHaveLength(1);
    // SEQ read: 811.591 vs 828.041 MB/s = −1.99 %; the run's own comparison stays beside it
    expect(answer[0]).toMatch(/^- blockSizeMb 2 vs 1: no test differs beyond noise \(8\/8\); published \(source=cdm3-vmfs3-appendix\.txt\): .*SEQ1M Q1T1 read MB\/s -2\.0%.*, one sample each side, no test possible$/);
    // 4 KiB random read at QD1: 1.632 vs 1.585 MB/s, the largest of the paper's differences
    expect(answer[0]).toContain('published (source=cdm3-vmfs3-appendix.txt): RND4K Q1T1 read IOPS +2.9%,');
  });
});

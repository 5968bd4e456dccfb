// A fio JSON whose fields storsweep reads have another type than fio prints (`"iops": {…}`) is
// refused naming the file and the field — never imported as a 0-IOPS record under a test id made
// from defaults. The documents are real fio output (test/fixtures/fio) with one field changed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importFile } from '../../../src/importers/index.ts';
import { ParseError } from '../../../src/errors.ts';
import { parseFioJson } from '../../../src/workloads/fio.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-fio-shape-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Doc = { jobs: Array<Record<string, unknown> & { read: Record<string, unknown> }> };
const real = (name: string): Doc => {
  const text = fs.readFileSync(path.join('test/fixtures/fio', name), 'utf8');
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as Doc;
};
const written = (name: string, doc: unknown) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(doc, null, 1));
  return file;
};

describe('fio JSON with a field of another type', () => {
  it('read.iops an object: `import` refuses it naming the file and jobs[0].read.iops; nothing is recorded', async () => {
    const doc = real('randread-4k-q32.json');
    doc.jobs[0]!.read['iops'] = { value: 1 };
    const file = written('iops-object.json', doc);
    const err = await importFile(file).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ParseError);
    expect((err as Error).message).toBe(`${file}: jobs[0].read.iops: expected a number, got an object; not fio's JSON output`);
  });

  it('the runner reads guest output with the same check (parseFioJson)', () => {
    const doc = real('seqwrite-1m-q8-jsonplus.json');
    (doc.jobs[0]!['write'] as Record<string, unknown>)['bw_bytes'] = [1, 2];
    expect(() => parseFioJson(JSON.stringify(doc), 'lab-guest fio seq-1m-q8t1-write')).toThrow("lab-guest fio seq-1m-q8t1-write: jobs[0].write.bw_bytes: expected a number, got a list; not fio's JSON output");
  });

  it('a latency percentile that is no number, a jobname that is no string, a job without read or write, options holding an object', () => {
    const pct = real('randread-4k-q32.json');
    ((pct.jobs[0]!.read['clat_ns'] as Record<string, unknown>)['percentile'] as Record<string, unknown>)['50.000000'] = 'fast';
    expect(() => parseFioJson(JSON.stringify(pct), 'p.json')).toThrow(`p.json: jobs[0].read.clat_ns.percentile["50.000000"]: expected a number, got a string that is no number`);
    const name = real('randread-4k-q32.json');
    delete name.jobs[0]!['jobname'];
    expect(() => parseFioJson(JSON.stringify(name), 'n.json')).toThrow('n.json: jobs[0].jobname: expected a string, got nothing');
    const bare = real('two-jobs-psync.json');
    bare.jobs[1] = { jobname: 'x', 'job options': { rw: 'read' } } as never;
    expect(() => parseFioJson(JSON.stringify(bare), 'b.json')).toThrow("b.json: jobs[1]: has neither read nor write statistics; not fio's JSON output");
    const opts = real('randread-4k-q32.json');
    (opts.jobs[0]!['job options'] as Record<string, unknown>)['bs'] = { k: 4 };
    expect(() => parseFioJson(JSON.stringify(opts), 'o.json')).toThrow('o.json: jobs[0]["job options"]["bs"]: expected a string, got an object');
  });

  it('real fio output is unchanged: every fixture still parses', () => {
    for (const f of fs.readdirSync('test/fixtures/fio')) {
      if (f.endsWith('.json')) expect(parseFioJson(fs.readFileSync(path.join('test/fixtures/fio', f), 'utf8'), f).jobs.length).toBeGreaterThan(0);
    }
  });
});

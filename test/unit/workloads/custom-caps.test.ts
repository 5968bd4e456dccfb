// Custom fio options get the same caps as the settings (src/limits.ts): they follow the runner's
// own options on fio's command line and fio takes the last one, so `size: 1p` would lay out a 1 PiB
// file and `io_size`/`offset`/`iodepth_batch` could ask for anything. Refused at validate, at the
// option's own file:line:col.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError, InvalidArgument } from '../../../src/errors.ts';
import { customDiskspdTest, customFioTest, validateFioOptions } from '../../../src/workloads/custom.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-caps-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function diagnostics(yaml: string): string[] {
  const file = path.join(dir, 'pb.yaml');
  fs.writeFileSync(file, yaml);
  try {
    loadPlaybook(file);
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map((d) => `${d.line}:${d.column}: ${d.path}: ${d.message}`);
    throw err;
  }
  return [];
}

const refusal = (options: Record<string, string | number>) => {
  try {
    customFioTest({ rw: 'write', ...options });
  } catch (err) {
    if (err instanceof InvalidArgument) return err.message;
    throw err;
  }
  return null;
};

describe('custom fio options: sizes and counts', () => {
  it("the reviewer's playbook is refused at the first option out of range, at its line and column", () => {
    const yaml = ['name: big', 'target: t', 'workloads:', '  big:', '    fio: {rw: write, bs: 1m, size: 1p, io_size: 99999999999999999999, offset: 1t, nrfiles: 100000, iodepth_batch: 99999999999}', 'matrix:', '  workload:', '    profile: [big]', ''].join('\n');
    expect(diagnostics(yaml)).toEqual([expect.stringMatching(/^5:36: workloads\.big\.fio\.size: fio option size="1p": an absolute size would replace settings\.fileSize/)]);
  });

  it('size: only a share of the test file; nrfiles and filesize are the runner’s', () => {
    expect(refusal({ size: '1p' })).toMatch(/would replace settings\.fileSize \(fio takes the last --size\)/);
    expect(refusal({ size: '3m' })).toMatch(/would replace settings\.fileSize/);
    expect(refusal({ size: '150%' })).toMatch(/at most 100%/);
    expect(refusal({ size: '50%' })).toBeNull();
    expect(refusal({ nrfiles: 100000 })).toMatch(/may not be set in a playbook \(the runner measures the one test file/);
    expect(refusal({ filesize: '1t' })).toMatch(/may not be set in a playbook \(the runner sets the test file size/);
  });

  it('io_size, io_limit, offset, offset_increment: at most the 64 TiB test file cap; percentages at most 100%', () => {
    for (const key of ['io_size', 'io_limit', 'offset', 'offset_increment']) {
      expect(refusal({ [key]: '99999999999999999999' }), key).toMatch(/expected at most 64 TiB \(the test file size cap\)/);
      expect(refusal({ [key]: '65t' }), key).toMatch(/expected at most 64 TiB/);
      expect(refusal({ [key]: '1p' }), key).toMatch(/expected at most 64 TiB/);
      expect(refusal({ [key]: '101%' }), key).toMatch(/at most 100%/);
      expect(refusal({ [key]: '64t' }), key).toBeNull();
    }
    // every job starts offset_increment further: 4096 jobs × 1 TiB goes past the cap
    expect(refusal({ numjobs: 4096, offset_increment: '1t' })).toMatch(/the last of 4096 jobs would start at offset \+ 4095 × offset_increment, beyond 64 TiB/);
    expect(refusal({ numjobs: 4, offset_increment: '1t' })).toBeNull();
  });

  it('block sizes at most 64 MiB; batch counts at most the queue depth cap; fio unsigned ints', () => {
    for (const key of ['bs', 'blocksize', 'blockalign', 'ba', 'buffer_compress_chunk']) {
      expect(refusal({ [key]: '1g' }), key).toMatch(/expected at most 64 MiB \(the block size cap\)/);
    }
    expect(refusal({ bs: '64m' })).toBeNull();
    for (const key of ['iodepth_batch', 'iodepth_batch_submit', 'iodepth_batch_complete_min', 'iodepth_batch_complete_max', 'iodepth_low']) {
      expect(refusal({ [key]: 99999999999 }), key).toMatch(/expected at most 32768/);
      expect(refusal({ [key]: 16 }), key).toBeNull();
    }
    expect(refusal({ fsync: '4294967296' })).toMatch(/at most 4294967295 \(fio's unsigned int\)/);
    expect(refusal({ rate_iops: '100,4294967296' })).toMatch(/at most 4294967295/);
    expect(refusal({ rate: '99999999999999999999' })).toMatch(/at most 9007199254740991/);
    expect(validateFioOptions({ percentile_list: '50:99:99.9' })).toEqual({ percentile_list: '50:99:99.9' });
    expect(refusal({ percentile_list: '50:101' })).toMatch(/a percentile is at most 100/);
  });
});

describe('custom diskspd parameters: sizes', () => {
  const refused = (params: string) => {
    try {
      customDiskspdTest(params);
    } catch (err) {
      if (err instanceof InvalidArgument) return err.message;
      throw err;
    }
    return null;
  };
  it('-b at most 64 MiB; -B, -f, -T at most 64 TiB (b = blocks of -b)', () => {
    expect(refused('-b1G')).toMatch(/at most 64 MiB \(the block size cap\)/);
    expect(refused('-b64M')).toBeNull();
    expect(refused('-B99999999999G')).toMatch(/at most 64 TiB \(the test file size cap\)/);
    expect(refused('-f65537G')).toMatch(/at most 64 TiB/);
    expect(refused('-b1M -T67108865b')).toMatch(/at most 64 TiB/);
    expect(refused('-b1M -T1024b')).toBeNull();
  });
});

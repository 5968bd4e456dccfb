// An IOMeter spec's block size has the cap every block size has (fio bs, diskspd -b: src/limits.ts
// MAX_BLOCK_SIZE_BYTES), refused by `validate` at the spec's line and column with the allowed range.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';
import { MAX_BLOCK_SIZE_BYTES } from '../../../src/limits.ts';
import { iometerSpec } from '../../../src/workloads/iometer-spec.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-iometer-cap-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('IOMeter spec block size', () => {
  it('the cap itself (64m) is accepted; one byte more is refused with the range', () => {
    expect(MAX_BLOCK_SIZE_BYTES).toBe(64 * 1024 ** 2);
    expect(iometerSpec('64m 100% read 0% random').blockSizeBytes).toBe(MAX_BLOCK_SIZE_BYTES);
    expect(() => iometerSpec(`${MAX_BLOCK_SIZE_BYTES + 1} 100% read 0% random`)).toThrow(`block size "${MAX_BLOCK_SIZE_BYTES + 1}" is over the block size cap: expected 1 byte to 64m (67108864 bytes)`);
  });

  it('9007199254740991 (the largest safe integer) in a playbook: refused at validate, at its file:line:col', () => {
    const file = path.join(dir, 'pb.yaml');
    fs.writeFileSync(file, ['name: huge-block', 'target: lab-guest', 'matrix:', '  workload:', '    profile: ["4k 100% read 0% random", "9007199254740991 100% read 0% random"]', ''].join('\n'));
    let diags: string[] = [];
    try {
      loadPlaybook(file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      diags = err.diagnostics.map(formatDiagnostic);
    }
    expect(diags).toHaveLength(1);
    expect(diags[0]).toBe(
      `${file}:5:41: matrix.workload.profile[1]: IOMeter access spec "9007199254740991 100% read 0% random": block size "9007199254740991" is over the block size cap: expected 1 byte to 64m (67108864 bytes); expected "<size> <read>% read <random>% random [q<depth>] [t<workers>]", e.g. "4k 50% read 100% random q32"`,
    );
  });

  it('an inline workload\'s iometer: list is capped alike', () => {
    expect(() => iometerSpec('128 m 50% read 100% random q4')).toThrow('block size "128m" is over the block size cap');
  });
});

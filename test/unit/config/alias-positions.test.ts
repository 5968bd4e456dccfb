// A problem reached through a YAML alias (`timeouts: *s`) is reported at the alias — where the
// value is used — not at 1:1: the anchored node may be right where else it is used.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-alias-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function diagnosticsOf(name: string, lines: string[]): { file: string; diags: string[] } {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  try {
    loadPlaybook(file);
  } catch (err) {
    if (err instanceof ConfigError) return { file, diags: err.diagnostics.map(formatDiagnostic) };
    throw err;
  }
  throw new Error('expected a ConfigError, but the file loaded');
}

const HEAD = ['name: aliases', 'target: lab-guest', 'matrix:', '  workload:', '    profile: [cdm8-default]'];

describe('diagnostics through a YAML alias', () => {
  it('unknown keys of an aliased mapping: at the alias (line 9), not 1:1', () => {
    const { file, diags } = diagnosticsOf('unknown-keys.yaml', [...HEAD, 'settings: &s', '  fileSize: 32m', '  runtimeSec: 1', 'timeouts: *s']);
    expect(diags).toEqual([
      `${file}:9:11: timeouts.fileSize: unknown key "fileSize" (expected one of stepSec, workloadSlackSec)`,
      `${file}:9:11: timeouts.runtimeSec: unknown key "runtimeSec" (expected one of stepSec, workloadSlackSec)`,
    ]);
  });

  it('a key that names no axis in an aliased baseline: at the alias', () => {
    const { file, diags } = diagnosticsOf('baseline.yaml', [...HEAD, 'environment: &e', '  storage: lab', 'baseline: *e']);
    expect(diags).toEqual([`${file}:8:11: baseline.storage: "storage" is not an axis of the matrix (axes: workload.profile)`]);
  });

  it('a value inside an aliased list: at the alias, as before', () => {
    const { file, diags } = diagnosticsOf('value.yaml', [...HEAD.slice(0, 4), '    profile: &p [cdm8-default]', '  disk:', '    format: [thin]', '    sizeGb: *p']);
    expect(diags).toEqual([`${file}:8:13: matrix.disk.sizeGb[0]: expected GiB above 0 and at most 65536 (64 TiB is the largest VHDX); got "cdm8-default"`]);
  });
});

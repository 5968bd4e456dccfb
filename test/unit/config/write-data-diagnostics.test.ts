// settings.writeData and a custom diskspd -Z are refused at their file:line:col, with the allowed
// values (workloads/write-data.ts; diskspd refuses a 0-byte buffer and one smaller than the block).
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';

const f = (name: string) => path.join('test/fixtures/config', name);

function diagnosticsOf(file: string): string[] {
  try {
    loadPlaybook(file);
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error('expected a ConfigError, but the file loaded');
}

it('a writeData that is not cdm or unique: at its value, with the allowed values', () => {
  expect(diagnosticsOf(f('pb-write-data.yaml'))).toEqual([`${f('pb-write-data.yaml')}:7:14: settings.writeData: expected one of cdm, unique; got "uniq"`]);
});

it('a -Z buffer of 0 bytes or smaller than the block: at the workload, saying diskspd refuses it', () => {
  expect(diagnosticsOf(f('pb-write-data-z.yaml'))).toEqual([
    `${f('pb-write-data-z.yaml')}:8:5: workloads.custom-z0: diskspd parameter -Z0="-Z0": is a write buffer of 0 bytes; diskspd refuses it ("invalid size passed to -Z")`,
    `${f('pb-write-data-z.yaml')}:10:5: workloads.custom-small: diskspd parameter -Z4K="-Z4K": is a write buffer smaller than the block (65536 bytes); diskspd refuses it`,
  ]);
});

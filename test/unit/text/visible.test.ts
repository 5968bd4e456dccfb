// Terminal-safe text: what a terminal would act on is shown as an escape, everything else is kept.
import { describe, expect, it } from 'vitest';
import { isTerminalSafe, visible, visibleJson, visibleText } from '../../../src/text/visible.ts';

const hostile = 'a\x1b[2Jb\x1b]8;;http://evil/\x07link\x1b]8;;\x07c\u009b31md\0e\u202egnp.exe\x7ff';

/** No code point a terminal acts on survives (the byte-level check the CLI tests also make). */
function rawControls(s: string): string[] {
  // eslint-disable-next-line no-control-regex
  return [...s.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g)].map((m) => m[0]);
}

describe('visible (one line)', () => {
  it('shows ESC, CSI, OSC 8, C1 CSI, NUL, bidi override and DEL as escapes', () => {
    expect(visible(hostile)).toBe('a\\x1b[2Jb\\x1b]8;;http://evil/\\x07link\\x1b]8;;\\x07c\\x9b31md\\x00e\\u202egnp.exe\\x7ff');
    expect(rawControls(visible(hostile))).toEqual([]);
  });
  it('shows newline, CR and tab too: a value stays on its line', () => {
    expect(visible('a\nb\r\nc\td')).toBe('a\\nb\\r\\nc\\td');
  });
  it('shows every C0, C1, bidi isolate, bidi mark and line separator', () => {
    for (let c = 0; c < 0x20; c++) expect(visible(String.fromCharCode(c))).toMatch(/^\\(x[0-9a-f]{2}|[nrt])$/);
    for (let c = 0x7f; c <= 0x9f; c++) expect(visible(String.fromCharCode(c))).toBe(`\\x${c.toString(16)}`);
    for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x2028, 0x2029])
      expect(visible(String.fromCharCode(c))).toBe(`\\u${c.toString(16).padStart(4, '0')}`);
  });
  it('keeps printable text: accents, CJK, emoji (surrogate pairs), backslashes', () => {
    const ok = 'Datastore é 数据 🚀 C:\\Tools\\diskspd.exe 100%';
    expect(visible(ok)).toBe(ok);
  });
  it('shows lone surrogates', () => {
    expect(visible('a\ud800b\udc00c')).toBe('a\\ud800b\\udc00c');
  });
  it('turns non-strings into text', () => {
    expect(visible(42)).toBe('42');
    expect(visible(null)).toBe('null');
  });
});

describe('visibleText (multi-line)', () => {
  it('keeps newline, tab and CRLF line ends; shows a lone CR', () => {
    expect(visibleText('a\tb\nc\r\nd\re')).toBe('a\tb\nc\r\nd\\re');
  });
  it('shows everything else like visible', () => {
    expect(visibleText(`${hostile}\n${hostile}`)).toBe(`${visible(hostile)}\n${visible(hostile)}`);
  });
  it('isTerminalSafe says whether anything would change', () => {
    expect(isTerminalSafe('plain\n\ttext\r\n')).toBe(true);
    expect(isTerminalSafe('x\x1b[2J')).toBe(false);
  });
});

describe('visibleJson', () => {
  it('writes DEL, C1, bidi controls and line separators as \\u escapes: the same JSON value', () => {
    const value = { name: `a\x1b[2J\u009b31m\u007f\u202e\u2066\u2028\0z`, n: -1 };
    const json = visibleJson(JSON.stringify(value));
    expect(json).toBe('{"name":"a\\u001b[2J\\u009b31m\\u007f\\u202e\\u2066\\u2028\\u0000z","n":-1}');
    expect(JSON.parse(json)).toEqual(value);
    expect(isTerminalSafe(json)).toBe(true);
  });
});

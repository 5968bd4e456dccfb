// shQuote must make any value one literal word to POSIX sh; proven by running the real /bin/sh.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { shJoin, shQuote } from '../../../src/ssh/quote.ts';

/** What /bin/sh sees as its argument vector after parsing `line`. */
function shArgv(line: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `for a in ${line}; do printf '%s\\0' "$a"; done`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shQuote', () => {
  it('leaves safe words alone', () => {
    for (const v of ['naa.600508b1001c3a4f', '/vmfs/volumes/ds1/disk.vmdk', 'a=b', 'x,y:z', 'user@host', '50%', '-C']) expect(shQuote(v)).toBe(v);
  });

  it('single-quotes everything else, escaping embedded single quotes', () => {
    expect(shQuote('')).toBe("''");
    expect(shQuote('two words')).toBe("'two words'");
    expect(shQuote("it's")).toBe(`'it'\\''s'`);
    expect(shQuote('$(reboot)')).toBe("'$(reboot)'");
    expect(shQuote('*')).toBe("'*'");
  });

  it('round-trips hostile values through the real sh as exactly one word each', () => {
    const values = ['', ' ', "it's", '"double"', '$HOME', '$(id)', '`id`', 'a;b', 'a|b', 'a&b', '*', '?', '~', 'a\\b', "''", 'ünïcødé', '-n', 'x > /tmp/pwned'];
    expect(shArgv(shJoin(values))).toEqual(values);
  });

  it('refuses newline, carriage return and NUL, naming the argument', () => {
    for (const bad of ['a\nb', 'a\rb', 'a\0b']) {
      expect(() => shQuote(bad, 'datastore')).toThrow(InvalidArgument);
      expect(() => shQuote(bad, 'datastore')).toThrow(/^datastore must not contain a newline, carriage return or NUL byte$/);
    }
    expect(() => shJoin(['ok', 'bad\n'])).toThrow(/^argv\[1\] must not contain/);
  });
});

// Number options are parsed by commander's argParser: a bad value is a UsageError (exit 2) with the
// flag, the range and the value as given, before anything is loaded or sent.
import { describe, expect, it } from 'vitest';
import { intOption, MAX_RETRIES, retriesOption, stepTimeoutOption } from '../../../src/cli/options.ts';
import { UsageError } from '../../../src/errors.ts';
import { MAX_TIMER_SEC } from '../../../src/limits.ts';

function refusal(parse: (raw: string) => number, raw: string): string {
  try {
    parse(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${JSON.stringify(raw)} was accepted`);
}

describe('--step-timeout', () => {
  it('takes whole seconds from 1 to 2147483', () => {
    expect(stepTimeoutOption('1')).toBe(1);
    expect(stepTimeoutOption('1800')).toBe(1800);
    expect(stepTimeoutOption(String(MAX_TIMER_SEC))).toBe(2147483);
  });

  it.each(['3000000', '2147484', '-5', '0', 'abc', '', '1.5', '1e3', '0x10', 'Infinity', '9'.repeat(30)])('refuses %j with the range', (raw) => {
    expect(refusal(stepTimeoutOption, raw)).toBe(`--step-timeout: expected whole seconds from 1 to 2147483 (Node's timer limit), got ${JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw)}`);
  });

  it('shows an escape sequence in the value as text, never raw', () => {
    const msg = refusal(stepTimeoutOption, '\x1b[31m5\u009b');
    expect(msg).toBe('--step-timeout: expected whole seconds from 1 to 2147483 (Node\'s timer limit), got "\\x1b[31m5\\x9b"');
    // eslint-disable-next-line no-control-regex
    expect(msg).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });
});

describe('--retries', () => {
  it('takes 0 to 20', () => {
    expect(retriesOption('0')).toBe(0);
    expect(retriesOption('3')).toBe(3);
    expect(retriesOption(String(MAX_RETRIES))).toBe(20);
  });

  it.each(['-1', '21', 'x', '2.5'])('refuses %j', (raw) => {
    expect(refusal(retriesOption, raw)).toBe(`--retries: expected a number of retries from 0 to 20, got ${JSON.stringify(raw)}`);
  });
});

it('intOption: surrounding blanks are fine, a sign is part of the number', () => {
  const p = intOption('--n', -3, 3);
  expect(p(' 2 ')).toBe(2);
  expect(p('-3')).toBe(-3);
  expect(p('+3')).toBe(3);
  expect(refusal(p, '4')).toBe('--n: expected a whole number from -3 to 3, got "4"');
});

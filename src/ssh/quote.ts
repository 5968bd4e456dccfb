// POSIX sh quoting (ESXi's BusyBox ash, Linux guests). Values are single-quoted; a value holding a
// newline, carriage return or NUL is refused outright: no quoting makes those safe to every shell
// in the path, and no legitimate device, path or label contains them.
import { InvalidArgument } from '../errors.ts';

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function shQuote(value: string, name = 'argument'): string {
  if (/[\n\r\0]/.test(value)) {
    throw new InvalidArgument(`${name} must not contain a newline, carriage return or NUL byte`, { name, value });
  }
  if (value !== '' && SAFE.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Joins an argument vector into one sh command line, quoting each argument. */
export function shJoin(argv: readonly string[]): string {
  return argv.map((a, i) => shQuote(a, `argv[${i}]`)).join(' ');
}

// The benchmark-tool settings an inventory or a playbook may give, defined once. The inventory
// schema, the playbook's custom fio options and the command-line builders (fio.ts, run-fio.ts,
// diskspd via the Hyper-V provider) all use these lists, so a value refused in one place is refused
// everywhere: `validate` names the allowed values at file:line:col, and a builder handed a value
// that slipped past (a library caller, a stored plan) refuses too.
//
// Why allow-lists: fio's `--ioengine=external:/path/lib.so` dlopen()s any library (fio(1) "ioengine
// external"), in the guest, as the user fio runs as — often root for raw devices. A program path is
// the same kind of door. Only the engines a storage benchmark needs are listed; each is a built-in
// engine of fio 3.x (`fio --enghelp`).
import { InvalidArgument } from '../errors.ts';
import { linuxTestPathProblem } from './test-target.ts';

/** fio I/O engines storsweep runs (fio 3.x built-ins; never `external:`, never a plugin path). */
export const FIO_IOENGINES = ['libaio', 'io_uring', 'psync', 'sync', 'pvsync', 'pvsync2', 'vsync', 'posixaio', 'windowsaio', 'mmap', 'null'] as const;
export type FioIoengine = (typeof FIO_IOENGINES)[number];

export const FIO_IOENGINE_PATTERN = new RegExp(`^(${FIO_IOENGINES.join('|')})$`);

/** `fio`, or an absolute POSIX path to a program named `fio` (plain path characters only). */
export const FIO_PATH_PATTERN = /^(fio|(\/[A-Za-z0-9._+-]+)*\/fio)$/;
export const FIO_PATH_HINT = 'expected fio or an absolute path to it like /usr/local/bin/fio';

/** `diskspd.exe`, or an absolute Windows path to it (plain path characters only). */
export const DISKSPD_PATH_PATTERN = /^(?:[A-Za-z]:\\(?:[A-Za-z0-9 ._-]+\\)*)?diskspd\.exe$/i;
export const DISKSPD_PATH_HINT = 'expected diskspd.exe or an absolute path to it like C:\\Tools\\diskspd.exe';

export function isFioIoengine(value: string): value is FioIoengine {
  return (FIO_IOENGINES as readonly string[]).includes(value);
}

/** Throws InvalidArgument unless `value` is one of FIO_IOENGINES. */
export function checkIoengine(value: string): FioIoengine {
  if (!isFioIoengine(value)) {
    throw new InvalidArgument(`fio ioengine ${JSON.stringify(value)} is not allowed; allowed: ${FIO_IOENGINES.join(', ')}`, { name: 'ioengine', value });
  }
  return value;
}

/** Throws InvalidArgument unless `value` is `fio` or an absolute path to a program named fio. */
export function checkFioPath(value: string): string {
  if (!FIO_PATH_PATTERN.test(value)) throw new InvalidArgument(`fioPath ${JSON.stringify(value)}: ${FIO_PATH_HINT}`, { name: 'fioPath', value });
  return value;
}

/** Throws InvalidArgument unless `value` is diskspd.exe or an absolute path to it. */
export function checkDiskspdPath(value: string): string {
  if (!DISKSPD_PATH_PATTERN.test(value)) throw new InvalidArgument(`diskspdPath ${JSON.stringify(value)}: ${DISKSPD_PATH_HINT}`, { name: 'diskspdPath', value });
  return value;
}

/** Why `name` cannot be fio's test file, or null (the inventory refuses these at validate already). */
export function fioFilenameProblem(name: string): string | null {
  if (name === '') return 'is empty';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f-\x9f]/.test(name)) return 'contains a control character';
  return linuxTestPathProblem(name);
}

/**
 * The `--filename` value that names exactly `name`. fio splits the option at ':' ("Multiple files
 * can be specified by separating them with a ':' character … If the wanted filename does need to
 * include a colon, then escape that with a '\\' character", fio(1) filename), so an unescaped
 * `/tmp/x:/dev/sdb` would also write over /dev/sdb, and a by-path device name
 * (`/dev/disk/by-path/pci-0000:03:00.0-…`) would become several files in the working directory.
 * Throws InvalidArgument for a name fio cannot take.
 */
export function fioFilenameArg(name: string): string {
  const problem = fioFilenameProblem(name);
  if (problem) throw new InvalidArgument(`fio test file ${JSON.stringify(name)} ${problem}`, { name: 'filename', value: name });
  // fio un-escapes only "\\:" (options.c get_next_name); every other backslash is literal
  return name.replace(/:/g, '\\:');
}

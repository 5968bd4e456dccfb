// esxcli storage commands (argv builders) and parsers for their default (human) output format:
// `core device list` prints blank-line separated records, `vmfs extent list` and `filesystem list`
// print fixed-width tables whose column widths are given by the dash row under the header.
import { ParseError } from '../../errors.ts';
import { checkEsxi } from './validate.ts';

export const deviceListArgv = (device?: string): string[] =>
  device === undefined ? ['esxcli', 'storage', 'core', 'device', 'list'] : ['esxcli', 'storage', 'core', 'device', 'list', '-d', checkEsxi('device', device)];
export const vmfsExtentListArgv = (): string[] => ['esxcli', 'storage', 'vmfs', 'extent', 'list'];
export const filesystemListArgv = (): string[] => ['esxcli', 'storage', 'filesystem', 'list'];
export const filesystemUnmountArgv = (label: string): string[] => ['esxcli', 'storage', 'filesystem', 'unmount', '-l', checkEsxi('label', label)];

export interface EsxiDevice {
  name: string;
  displayName: string;
  /** MiB, as esxcli prints it */
  sizeMb: number;
  deviceType: string;
  devfsPath: string;
  vendor: string;
  model: string;
  isLocal: boolean;
  isSsd: boolean;
  isOffline: boolean;
  isBootDevice: boolean;
  isPerenniallyReserved: boolean;
  otherUids: string;
  /** every key as printed (values trimmed) */
  fields: Record<string, string>;
}

export function parseDeviceList(text: string, source = 'esxcli storage core device list'): EsxiDevice[] {
  const devices: EsxiDevice[] = [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  let current: { name: string; line: number; fields: Record<string, string> } | null = null;
  const flush = () => {
    if (!current) return;
    const f = current.fields;
    const size = Number(f['Size']);
    if (!Number.isFinite(size)) {
      throw new ParseError(`${source}: device ${current.name} (line ${current.line}) has no numeric Size`, { source, line: current.line, expected: 'Size: <MiB>' });
    }
    const bool = (k: string) => (f[k] ?? '').toLowerCase() === 'true';
    devices.push({
      name: current.name,
      displayName: f['Display Name'] ?? '',
      sizeMb: size,
      deviceType: f['Device Type'] ?? '',
      devfsPath: f['Devfs Path'] ?? '',
      vendor: f['Vendor'] ?? '',
      model: f['Model'] ?? '',
      isLocal: bool('Is Local'),
      isSsd: bool('Is SSD'),
      isOffline: bool('Is Offline'),
      isBootDevice: bool('Is Boot Device'),
      isPerenniallyReserved: bool('Is Perennially Reserved'),
      otherUids: f['Other UIDs'] ?? '',
      fields: f,
    });
    current = null;
  };
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    if (line === '') return flush();
    if (!/^\s/.test(line)) {
      flush();
      current = { name: line.replace(/:$/, ''), line: i + 1, fields: {} };
      return;
    }
    const m = /^\s+([^:]+):\s?(.*)$/.exec(line);
    if (!current || !m) {
      throw new ParseError(`${source}: line ${i + 1}: expected "   Key: Value" under a device id, got ${JSON.stringify(line)}`, { source, line: i + 1, expected: 'Key: Value' });
    }
    current.fields[m[1]!.trim()] = (m[2] ?? '').trim();
  });
  flush();
  return devices;
}

/** Rows of a fixed-width esxcli table as header → cell (trimmed). */
export function parseFixedWidthTable(text: string, source: string): Record<string, string>[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const dashIdx = lines.findIndex((l) => /^-+(\s+-+)*\s*$/.test(l));
  if (dashIdx < 1) {
    throw new ParseError(`${source}: no header and dash row found`, { source, line: 1, expected: 'a header line followed by a row of dashes' });
  }
  const header = lines[dashIdx - 1]!;
  const spans: { start: number; end: number }[] = [];
  for (const m of lines[dashIdx]!.matchAll(/-+/g)) spans.push({ start: m.index, end: m.index + m[0].length });
  const cols = spans.map((s, i) => ({ start: s.start, end: i + 1 < spans.length ? spans[i + 1]!.start : Infinity }));
  const names = cols.map((c) => header.slice(c.start, c.end === Infinity ? undefined : c.end).trim());
  const rows: Record<string, string>[] = [];
  for (const line of lines.slice(dashIdx + 1)) {
    if (line.trim() === '') continue;
    const row: Record<string, string> = {};
    cols.forEach((c, i) => {
      row[names[i]!] = line.slice(c.start, c.end === Infinity ? undefined : c.end).trim();
    });
    rows.push(row);
  }
  return rows;
}

export interface VmfsExtent {
  volumeName: string;
  vmfsUuid: string;
  extentNumber: number;
  deviceName: string;
  partition: number;
}

function need(row: Record<string, string>, key: string, source: string): string {
  const v = row[key];
  if (v === undefined) throw new ParseError(`${source}: column "${key}" missing`, { source, expected: key });
  return v;
}

export function parseVmfsExtentList(text: string, source = 'esxcli storage vmfs extent list'): VmfsExtent[] {
  return parseFixedWidthTable(text, source).map((r) => ({
    volumeName: need(r, 'Volume Name', source),
    vmfsUuid: need(r, 'VMFS UUID', source),
    extentNumber: Number(need(r, 'Extent Number', source)),
    deviceName: need(r, 'Device Name', source),
    partition: Number(need(r, 'Partition', source)),
  }));
}

export interface EsxiFilesystem {
  mountPoint: string;
  volumeName: string;
  uuid: string;
  mounted: boolean;
  type: string;
  sizeBytes: number;
  freeBytes: number;
}

export function parseFilesystemList(text: string, source = 'esxcli storage filesystem list'): EsxiFilesystem[] {
  return parseFixedWidthTable(text, source).map((r) => ({
    mountPoint: need(r, 'Mount Point', source),
    volumeName: need(r, 'Volume Name', source),
    uuid: need(r, 'UUID', source),
    mounted: need(r, 'Mounted', source) === 'true',
    type: need(r, 'Type', source),
    sizeBytes: Number(need(r, 'Size', source)),
    freeBytes: Number(need(r, 'Free', source)),
  }));
}

// Allow-lists for every value the ESXi-shell provider places on a command line. Quoting (shQuote)
// makes a value one literal argument; validation makes sure that literal is the kind of thing we
// meant (a device, not a path to /; a label, not an option) before anything is sent.
import { InvalidArgument } from '../../errors.ts';
import { CANONICAL_DEVICE, CANONICAL_DEVICE_EXPECTED } from '../canonical-device.ts';

export const ESXI_PATTERNS = {
  device: CANONICAL_DEVICE,
  // VMFS labels: ESXi allows more, but our owned names and common datastore names fit this.
  label: /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/,
  // /vmfs/volumes/<datastore>[/<file>.vmdk] with no '..' segments
  volumePath: /^\/vmfs\/volumes\/[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/,
  vmdkPath: /^\/vmfs\/volumes\/[A-Za-z0-9][A-Za-z0-9._-]{0,79}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,79})?\/[A-Za-z0-9][A-Za-z0-9._-]{0,79}\.vmdk$/,
  vmid: /^[1-9][0-9]{0,8}$/,
} as const;

export type EsxiValueKind = keyof typeof ESXI_PATTERNS;

export const ESXI_EXPECTED: Record<EsxiValueKind, string> = {
  device: CANONICAL_DEVICE_EXPECTED,
  label: 'a datastore label of letters, digits, ".", "_" and "-" (max 80, starting with a letter or digit)',
  volumePath: 'a datastore path /vmfs/volumes/<datastore>',
  vmdkPath: 'a disk path /vmfs/volumes/<datastore>/[<dir>/]<name>.vmdk',
  vmid: 'a numeric VM id as vim-cmd vmsvc/getallvms prints it',
};

/** The one predicate behind checkEsxi; the inventory schema uses it too, so validate and run agree. */
export function isEsxiValue(kind: EsxiValueKind, value: unknown): boolean {
  const s = typeof value === 'number' ? String(value) : value;
  return typeof s === 'string' && ESXI_PATTERNS[kind].test(s) && !s.split('/').includes('..');
}

export function checkEsxi(kind: EsxiValueKind, value: unknown, name: string = kind): string {
  if (!isEsxiValue(kind, value)) {
    throw new InvalidArgument(`${name}: expected ${ESXI_EXPECTED[kind]}, got ${JSON.stringify(value)}`, { name, value: String(value) });
  }
  return String(value);
}

/** The volume path a target's `datastore` names: a label, or the full /vmfs/volumes/<label>. */
export function datastoreVolumePath(datastore: string): string {
  return datastore.startsWith('/') ? datastore : `/vmfs/volumes/${datastore}`;
}

/** Largest virtual disk vmkfstools creates: 62 TiB (VMFS5/6 maximum VMDK size). */
export const ESXI_MAX_DISK_GB = 62 * 1024;

export function checkInt(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgument(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, { name, value: String(value) });
  }
  return value;
}

export const devfsPath = (device: string): string => `/vmfs/devices/disks/${checkEsxi('device', device)}`;

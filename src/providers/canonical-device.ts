// The one canonical SCSI device name pattern (a LUN as ESXi and vCenter name it): what an inventory's
// vmfsDevice/rdmDevice/allowedDevices hold, what `destroys` and `--confirm-destroy` name, what the
// vSphere and ESXi-shell providers check before sending a device anywhere.
// naa.* (NAA id), eui.* (EUI-64), t10.* (T10 vendor id), mpx.* (a path name for a device without one).
export const CANONICAL_DEVICE = /^(naa|t10|eui|mpx)\.[\w.:-]+$/;

export const CANONICAL_DEVICE_EXPECTED = 'a canonical device name like naa.6000…, t10.…, eui.… or mpx.vmhba0:C0:T0:L0';

export function isCanonicalDevice(v: unknown): boolean {
  return typeof v === 'string' && CANONICAL_DEVICE.test(v) && !v.split('/').includes('..');
}

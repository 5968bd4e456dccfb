// What a VM's disk is known by: its owned name on the VM (`<name>.vmdk`), and the WWN a guest
// names it by (a VMDK's backing uuid with disk.EnableUUID on; a physical RDM's LUN NAA id).
import { diskCapacityBytes } from './disks.ts';
import { wwnOfDiskUuid, wwnOfLun, type AttachedDiskIdentity } from '../guest-disk.ts';
import type { VirtualDevice } from './types.ts';

/**
 * What the guest will call a disk: a flat VMDK (and a virtual-mode RDM, which the host virtualizes)
 * by its backing uuid, seen only with the VM's disk.EnableUUID = TRUE; a physical-mode RDM by the
 * LUN's own NAA id, which it passes through (guest-disk.ts has the sources). Null: none.
 */
export function guestIdentity(d: VirtualDevice): AttachedDiskIdentity | null {
  const b = d.backing;
  if (!b) return null;
  const source = typeof b.fileName === 'string' ? b.fileName : `disk ${d.key}`;
  const sizeBytes = diskCapacityBytes(d);
  if (b._type === 'VirtualDiskRawDiskMappingVer1BackingInfo' && b.compatibilityMode === 'physicalMode') {
    const lun = typeof b.deviceName === 'string' ? b.deviceName.split('/').pop() ?? '' : '';
    const wwn = wwnOfLun(lun);
    return wwn ? { wwn, sizeBytes, source: `${source} (LUN ${lun})` } : null;
  }
  const wwn = wwnOfDiskUuid(b.uuid);
  return wwn ? { wwn, sizeBytes, source } : null;
}

/**
 * Whether a disk.EnableUUID value turns the option on: `TRUE` in any case, or `1` — the form the
 * Kubernetes vSphere Cloud Provider docs set (`govc vm.change -e="disk.enableUUID=1"`,
 * kubernetes/website PR #2989) and that clusters run with; the lab's stand-ins read it alike.
 */
export function enableUuidValueOn(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const v = value.trim().toUpperCase();
  return v === 'TRUE' || v === '1';
}

/** The VM's disk.EnableUUID as its extraConfig says (the last value wins). */
export function diskUuidEnabled(extraConfig: unknown): boolean {
  const list = Array.isArray(extraConfig) ? extraConfig : extraConfig ? [extraConfig] : [];
  let on = false;
  for (const o of list as Array<{ key?: unknown; value?: unknown }>) {
    if (typeof o.key === 'string' && o.key.toLowerCase() === 'disk.enableuuid') on = enableUuidValueOn(o.value);
  }
  return on;
}

/** The disk whose file is `<owned name>.vmdk` (ESXi may add a suffix like _1 on clashes, not here). */
export function diskByOwnedName(devices: VirtualDevice[], name: string): VirtualDevice | undefined {
  return devices.find((d) => d._type === 'VirtualDisk' && typeof d.backing?.fileName === 'string' && d.backing.fileName.endsWith(`] ${name}.vmdk`));
}


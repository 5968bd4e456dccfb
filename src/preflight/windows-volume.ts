// Room for diskspd's test file on the volume a Windows guest's permutation formats (guest.filesystem
// ntfs-4k, ntfs-64k, refs), before any of it exists. The volume is made on the permutation's disk
// (disk.sizeGb), so it can never hold more than that disk: a test file (settings.fileSize) plus the
// room its file system keeps (providers/windows-volume-room.ts) larger than the disk is a ✗
// here. `run` asks the volume itself (Get-Volume SizeRemaining) once it is made, before diskspd
// creates the file, and refuses there too.
import type { RunPlan } from '../contract/plan.ts';
import type { PreflightCheck } from '../contract/preflight.ts';
import { VOLUME_FILESYSTEMS, VOLUME_MARGIN_BYTES } from '../providers/windows-volume-room.ts';
import { sizeText } from '../text/size.ts';

const GiB = 1024 ** 3;

/** Pure: per target, a check of the largest file against the smallest volume its permutations format. */
export function windowsVolumeChecks(plan: RunPlan): Map<string, PreflightCheck> {
  const worst = new Map<string, { need: number; disk: number; filesystem: string; permutationId: string }>();
  for (const p of plan.permutations) {
    const filesystem = p.axes['guest.filesystem'];
    const sizeGb = p.axes['disk.sizeGb'];
    if (!(VOLUME_FILESYSTEMS as readonly unknown[]).includes(filesystem) || typeof sizeGb !== 'number') continue;
    const need = (plan.profiles[p.workload]?.fileSizeBytes ?? 0) + VOLUME_MARGIN_BYTES;
    const disk = sizeGb * GiB;
    const target = plan.targets ? String(p.axes.target) : plan.target;
    const was = worst.get(target);
    if (!was || need - disk > was.need - was.disk) worst.set(target, { need, disk, filesystem: String(filesystem), permutationId: p.permutationId });
  }
  const out = new Map<string, PreflightCheck>();
  for (const [target, w] of worst) {
    const check = 'guest volume free space';
    const detail = `the test file needs ${sizeText(w.need)} (${w.need} bytes: settings.fileSize plus ${sizeText(VOLUME_MARGIN_BYTES)} for the file system) on the ${w.filesystem} volume made on the ${sizeText(w.disk)} disk of permutation ${w.permutationId}, which can have at most ${sizeText(w.disk)} free (${w.disk} bytes: the whole disk)`;
    out.set(target, w.need <= w.disk ? { check, status: 'ok', detail: `${detail}; run checks the volume's Get-Volume SizeRemaining before diskspd creates the file` } : { check, status: 'fail', detail, remedy: `set a smaller settings.fileSize, or a disk.sizeGb of at least ${Math.ceil(w.need / GiB)}` });
  }
  return out;
}

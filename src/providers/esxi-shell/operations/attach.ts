// `vim-cmd vmsvc/device.diskaddexisting`: the disk (or RDM) attached to the VM at the lowest free
// unit of the target's SCSI bus; detached at teardown from whichever unit holds our disk then.
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import { attachedUnits, createdObject, disksOf, esxiOperation, ownedPath, recorded } from '../host.ts';
import { checkEsxi, checkInt } from '../validate.ts';
import { diskAddExistingArgv, diskRemoveArgv } from '../vimcmd.ts';
import { vmdkPath, vmid } from './fields.ts';

export const attach = esxiOperation({
  name: 'vim-cmd vmsvc/device.diskaddexisting',
  // the unit is the lowest free one, chosen at apply and recorded (a plan made when a fixed unit was planned is refused: plan again)
  schema: z.strictObject({ vmid, path: vmdkPath, bus: z.number().int().min(0).max(3) }),
  async apply({ vmid, path, bus }, ctx) {
    const h = ctx.host;
    // the lowest free unit of the bus (7 is the controller, real-product-rules.md §3.1): the
    // guest-disk step finds the disk by its identity, wherever it lands, so another disk at any
    // unit is left alone and never measured
    const taken = new Set((await disksOf(h, vmid)).filter((d) => d.controllerKey === 1000 + bus).map((d) => d.unitNumber));
    const unit = [...Array(16).keys()].find((u) => u !== 7 && !taken.has(u));
    if (unit === undefined) throw new UnsafeOperation(`${h.host}: SCSI controller ${bus} of VM ${vmid} has no free unit (0-15 but 7 all taken); nothing attached`, { operation: ctx.step.operation, target: `VM ${vmid} SCSI ${bus}` });
    const argv = diskAddExistingArgv(vmid, path, bus, unit);
    await ctx.sent({ vmid, path, bus, unit });
    await h.exec(argv);
    ctx.log(`attached ${path} to VM ${vmid} at SCSI ${bus}:${unit}`, { bus, unit });
    return createdObject(ctx.step, `${vmid}:${bus}:${unit}`, { vmid, path, bus, unit });
  },
  objects: {
    'disk-attachment': {
      async destroy(obj, ctx) {
        // Only what the ledger recorded: never the inventory's vmid or SCSI unit.
        const h = ctx.host;
        const d = obj.data;
        const vmid = checkEsxi('vmid', d.vmid, 'recorded vmid');
        const path = ownedPath(h, recorded(d.path, 'path'), obj.name.replace(/-attach$/, '-disk'), 'the attachment of');
        const bus = checkInt(d.bus, 'recorded bus', 0, 3);
        // the unit that holds OUR disk now, on the recorded controller — not a remembered number
        const units = (await attachedUnits(h, vmid, path)).filter((u) => u.controllerKey === 1000 + bus);
        if (units.length === 0) return 'absent';
        for (const u of units) await h.exec(diskRemoveArgv(vmid, bus, u.unitNumber));
        return 'removed';
      },
      async find(ref, _sent, h) {
        // by owned name only: the inventory may have changed since the run (cleanup -i other.yaml)
        const base = ref.name.replace(/-attach$/, '');
        const t = h.target;
        const candidates = [t.datastoreVolumePath, `/vmfs/volumes/${base}-ds`].filter((p): p is string => Boolean(p)).map((p) => `${p}/${base}-disk.vmdk`);
        for (const path of candidates) {
          const u = (await attachedUnits(h, t.vmid, path))[0];
          if (u) return { ...ref, provider: 'esxi-shell', id: `${t.vmid}:${u.controllerKey - 1000}:${u.unitNumber}`, data: { vmid: t.vmid, path, bus: u.controllerKey - 1000, unit: u.unitNumber } };
        }
        return null;
      },
    },
  },
});

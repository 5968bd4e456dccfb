// Set-Disk -IsOffline: an allowed host disk no VM holds, taken offline for pass-through; brought
// back online at teardown, found by its recorded serial/unique id (disk numbers change on reboot).
import { z } from 'zod';
import { InvalidArgument, UnsafeOperation } from '../../../errors.ts';
import { checkPassthroughDisk, describeIdentity, recordedIdentity, sameDisk, setDiskOfflineCall } from '../passthrough.ts';
import { runCalls } from '../powershell.ts';
import { diskWith, getDisk, holdersOf, hypervOperation, int, listDisks, made, refuseIfHeld } from '../host.ts';

export const offlineDisk = hypervOperation({
  name: 'Set-Disk -IsOffline',
  schema: z.strictObject({ diskNumber: z.number().int().min(0), serialNumber: z.string().nullable(), uniqueId: z.string().nullable() }),
  async apply({ diskNumber: n }, ctx) {
    const h = ctx.host;
    const disk = await getDisk(h, n);
    checkPassthroughDisk(h.t.host, h.t.allowedDisks, n, disk);
    // Hyper-V does not stop two VMs from holding the same pass-through disk (an Off VM keeps it
    // configured while the host has it online): refuse a disk any VM holds
    await refuseIfHeld(h, n);
    // what proves it is the same disk at teardown: number AND serial/unique id as Get-Disk said
    const identity = { diskNumber: n, serialNumber: disk!.SerialNumber ?? null, uniqueId: disk!.UniqueId ?? null };
    await ctx.sent(identity);
    await runCalls(h.runner, [setDiskOfflineCall(n, true)]);
    return made(ctx.step, String(n), identity);
  },
  objects: {
    'disk-offline': {
      async destroy(obj, ctx) {
        const h = ctx.host;
        const d = obj.data;
        if (typeof d.diskNumber !== 'number') throw new InvalidArgument(`${h.t.host}: the ledger records no disk number for ${obj.name}; refusing to bring any disk online`, { name: 'diskNumber', value: String(d.diskNumber) });
        const n = int(d.diskNumber, 'recorded diskNumber');
        const id = recordedIdentity(d);
        if (!id) {
          throw new UnsafeOperation(`${h.t.host}: the ledger records no serial or unique id for disk ${n} (a run of an older storsweep); refusing to bring it online unchecked — if it is the disk the run took offline: Set-Disk -Number ${n} -IsOffline $false`, { operation: 'Set-Disk -IsOffline', target: `disk ${n}` });
        }
        // Found by serial/unique id, not by number: disk numbers change on reboot or rescan.
        const disk = await diskWith(h, id, n, `disk ${n}`);
        const m = disk.Number;
        if (m !== n) ctx.log(`the disk this run took offline as disk ${n} is disk ${m} now (same ${describeIdentity(id)})`);
        if (!disk.IsOffline) {
          ctx.log(`disk ${m} (${describeIdentity(id)}) is online already; nothing to do`);
          return 'absent';
        }
        // A disk some VM holds as a pass-through disk stays offline: online on the host, the host and
        // the VM would both write to it. That VM may be another one, attached after this run.
        const holders = await holdersOf(h, m);
        if (holders.length) return h.keepOpen(`disk ${m}`, `disk ${m} (${describeIdentity(id)}) is held as a pass-through disk by ${holders.join(', ')}; not brought online (host and VM would both write to it) — detach it there first if it should come back to the host, then run cleanup again`);
        // the number acted on must still carry the serial, checked right before Set-Disk
        const again = (await listDisks(h)).find((x) => x.Number === m);
        if (!again || !sameDisk(again, id)) return h.keepOpen(`disk ${m}`, `disk ${m} changed while cleanup looked at it (now ${JSON.stringify(again?.SerialNumber ?? null)}); nothing brought online`);
        await runCalls(h.runner, [setDiskOfflineCall(m, false)]);
        return 'removed';
      },
      // an offlined disk carries no name: never found, only destroyed as recorded
    },
  },
});

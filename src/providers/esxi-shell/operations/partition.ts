// `partedUtil setptbl`: one VMFS partition on an allowed, unused LUN (the datastore step formats it).
import { z } from 'zod';
import { createdObject, esxiOperation, extents, guardUnused } from '../host.ts';
import { getptblArgv, getUsableSectorsArgv, mklabelArgv, parseGetptbl, parseUsableSectors, setptblArgv, vmfsPartitionLayout } from '../partedutil.ts';
import { ownLabelOf, planPartitionDestroy } from '../vmfs-ownership.ts';
import { device, vmfsVersion } from './fields.ts';

export const partition = esxiOperation({
  name: 'partedUtil setptbl',
  schema: z.strictObject({ device, vmfsVersion, label: z.enum(['msdos', 'gpt']), partition: z.number().int().min(1), startSector: z.number().int().min(0), endSector: z.string().min(1), type: z.string().min(1) }),
  async apply(a, ctx) {
    const h = ctx.host;
    const { device, vmfsVersion: kind } = a;
    await guardUnused(h, device, 'partitioning');
    ctx.log(`partitioning ${device} for ${kind}`, { device });
    // A partition has no name: what proves it ours later is the exact layout recorded here,
    // before mklabel (no endSector yet: nothing of ours exists) and again before setptbl.
    const labelKind = kind === 'vmfs3' ? 'msdos' : 'gpt';
    // What the partition will hold: teardown deletes it only after this run removed that
    // datastore itself (run/teardown.ts), since an unmounted VMFS is not in `vmfs extent list`.
    const holds = { kind: 'datastore', name: (ctx.step.creates?.name ?? '').replace(/-part$/, '-ds') };
    await ctx.sent({ device, partition: 1, label: labelKind, vmfsVersion: kind, holds });
    await h.exec(mklabelArgv(device, labelKind));
    const usable = parseUsableSectors((await h.exec(getUsableSectorsArgv(device))).stdout);
    const { label, partition } = vmfsPartitionLayout(kind, usable);
    const layout = { device, partition: 1, label, vmfsVersion: kind, startSector: partition.startSector, endSector: partition.endSector, type: partition.type, holds };
    await ctx.sent(layout);
    await h.exec(setptblArgv(device, label, [partition]));
    return createdObject(ctx.step, `${device}:1`, layout);
  },
  objects: {
    'vmfs-partition': {
      // the host proves it ours by our VMFS label (../vmfs-ownership.ts); the plan's run() acts on what it names
      planDestroy: (obj, ctx) => planPartitionDestroy(ctx.host, obj, ctx),
      async destroy(obj, ctx) {
        const plan = await planPartitionDestroy(ctx.host, obj, ctx);
        return plan.outcome === 'absent' ? 'absent' : plan.run();
      },
      async find(ref, _sent, h) {
        // the partition that holds our own datastore (by its label); an empty one cannot be told apart
        const ext = (await extents(h)).find((e) => e.volumeName === ownLabelOf(ref.name));
        if (!ext || ext.partition !== 1) return null;
        const table = parseGetptbl((await h.exec(getptblArgv(ext.deviceName))).stdout);
        const p1 = table.partitions.find((p) => p.number === 1);
        if (!p1 || table.partitions.length !== 1) return null;
        return { ...ref, provider: 'esxi-shell', id: `${ext.deviceName}:1`, data: { device: ext.deviceName, partition: 1, label: table.label, startSector: p1.startSector, endSector: p1.endSector, type: p1.type } };
      },
    },
  },
});

// New-VHD: a VHDX of the permutation's type, size, block and sector sizes, directly in one of the
// inventory's volume folders; removed at teardown by its exact path, only when it carries the owned name.
import { z } from 'zod';
import { UnsafeOperation } from '../../../errors.ts';
import { runCalls } from '../powershell.ts';
import { checkHyperv } from '../validate.ts';
import { getVhdCall, newVhdCall, probeFileCall, removeVhdCall, SECTOR_SIZES, VHD_TYPES } from '../vhd.ts';
import { hypervOperation, made } from '../host.ts';

/** a fixed VHDX is zeroed when created; ~500 MB/s on a typical array */
const ZERO_BYTES_PER_SEC = 500e6;
const sectors = z.union(SECTOR_SIZES.map((n) => z.literal(n)) as [z.ZodLiteral<512>, z.ZodLiteral<4096>]).optional();

export const newVhd = hypervOperation({
  name: 'New-VHD',
  schema: z.strictObject({ path: z.string().min(1), sizeBytes: z.number().int().positive(), type: z.enum(VHD_TYPES), blockSizeBytes: z.number().int().positive().optional(), logicalSectorBytes: sectors, physicalSectorBytes: sectors }),
  async apply(a, ctx) {
    const spec = { ...a, path: ctx.host.ownPath(a.path, 'New-VHD') };
    const call = newVhdCall(spec);
    ctx.log(`creating ${spec.type} VHDX ${spec.path}`, { path: spec.path });
    await ctx.sent({ path: spec.path });
    const [vhd] = await runCalls(ctx.host.runner, [call]);
    return made(ctx.step, spec.path, { path: spec.path, vhd: vhd ?? null });
  },
  objects: {
    vhdx: {
      async destroy(obj, ctx) {
        const h = ctx.host;
        const path = h.ownPath(obj.data.path, 'Remove-Item');
        if (!path.toLowerCase().endsWith(`\\${obj.name.toLowerCase()}.vhdx`)) throw new UnsafeOperation(`${h.t.host}: refusing to remove ${path}: it does not carry the owned name ${obj.name}`, { operation: 'Remove-Item', target: path });
        if ((await runCalls(h.runner, [probeFileCall(path)])).length === 0) return 'absent';
        await runCalls(h.runner, [removeVhdCall(path)]);
        return 'removed';
      },
      async find(ref, _sent, h) {
        // by owned name: the VHDX file in one of the volume folders
        for (const folder of Object.values(h.t.volumes)) {
          const path = `${folder.endsWith('\\') ? folder : `${folder}\\`}${checkHyperv('ownedName', ref.name, 'owned name')}.vhdx`;
          if ((await runCalls(h.runner, [probeFileCall(path)])).length > 0) {
            const [vhd] = await runCalls(h.runner, [getVhdCall(path)]);
            return { ...ref, provider: 'hyperv', id: path, data: { path, vhd: vhd ?? null } };
          }
        }
        return null;
      },
    },
  },
  estimateSec: (a) => 5 + (a.type === 'Fixed' ? a.sizeBytes / ZERO_BYTES_PER_SEC : 0),
});

// `vmkfstools -z` / `-r`: a physical or virtual RDM mapping file for an allowed, unused LUN.
import { z } from 'zod';
import { createdObject, esxiOperation, guardUnused } from '../host.ts';
import { createRdmArgv } from '../vmkfstools.ts';
import { diskFile } from './disk-file.ts';
import { device, vmdkPath } from './fields.ts';

/** The compatibility modes of an RDM, by the disk.format value that asks for each, with its vmkfstools option. */
export const RDM_MODES = { 'rdm-physical': { mode: 'physical', operation: 'vmkfstools -z' }, 'rdm-virtual': { mode: 'virtual', operation: 'vmkfstools -r' } } as const;
export type RdmFormat = keyof typeof RDM_MODES;

function rdmOperation(format: RdmFormat) {
  const { mode, operation } = RDM_MODES[format];
  return esxiOperation({
    name: operation,
    schema: z.strictObject({ device, path: vmdkPath, compatibilityMode: z.literal(mode) }),
    async apply(a, ctx) {
      const argv = createRdmArgv(mode, a.device, a.path);
      await guardUnused(ctx.host, a.device, `mapping as ${mode} RDM`);
      await ctx.sent({ path: a.path, device: a.device, mode });
      await ctx.host.exec(argv);
      return createdObject(ctx.step, a.path, { path: a.path, device: a.device, mode });
    },
    objects: { rdm: diskFile },
  });
}

export const createRdmPhysical = rdmOperation('rdm-physical');
export const createRdmVirtual = rdmOperation('rdm-virtual');

// `vmkfstools -C`: a VMFS datastore on the partition the partition step made; its block size read back.
import { z } from 'zod';
import { ProvisionedStateMismatch } from '../../../errors.ts';
import { createdObject, esxiOperation, guardOwnPartition } from '../host.ts';
import { filesystemListArgv, parseFilesystemList } from '../esxcli.ts';
import { planDatastoreDestroy } from '../vmfs-ownership.ts';
import { createVmfsArgv, parseCreateVmfs, parseQueryFs, queryFsArgv } from '../vmkfstools.ts';
import { device, label, vmfsVersion, volumePath } from './fields.ts';

export const createVmfs = esxiOperation({
  name: 'vmkfstools -C',
  schema: z.strictObject({ device, partition: z.number().int().min(1), vmfsVersion, blockSizeMb: z.number().int().min(1).max(8), label, volumePath }),
  async apply(a, ctx) {
    const h = ctx.host;
    const { device, vmfsVersion: version, label, blockSizeMb } = a;
    const argv = createVmfsArgv(version, blockSizeMb, label, device, 1);
    await guardOwnPartition(h, device, 'creating a VMFS');
    await ctx.sent({ label, device, volumePath: `/vmfs/volumes/${label}` });
    ctx.log(`creating ${version} (${blockSizeMb} MiB blocks) on ${device}:1 as ${label}`, { device, label });
    const uuid = parseCreateVmfs((await h.exec(argv)).stdout);
    const volumePath = `/vmfs/volumes/${label}`;
    const q = parseQueryFs((await h.exec(queryFsArgv(volumePath))).stdout);
    if (q.blockSizeBytes !== blockSizeMb * 1048576) {
      throw new ProvisionedStateMismatch(`${h.host}: ${label} reports ${q.blockSizeBytes}-byte blocks, ${blockSizeMb} MiB requested; a permutation is measured only in the state its axes name`, { axis: 'datastore.blockSizeMb', asked: `${blockSizeMb * 1048576}`, got: `${q.blockSizeBytes}`, object: volumePath });
    }
    return createdObject(ctx.step, uuid, { label, device, volumePath, blockSizeBytes: q.blockSizeBytes, version: q.version });
  },
  objects: {
    datastore: {
      // the host proves it ours by our VMFS label (../vmfs-ownership.ts); the plan's run() acts on what it names
      planDestroy: (obj, ctx) => planDatastoreDestroy(ctx.host, obj, ctx),
      async destroy(obj, ctx) {
        const plan = await planDatastoreDestroy(ctx.host, obj, ctx);
        return plan.outcome === 'absent' ? 'absent' : plan.run();
      },
      async find(ref, _sent, h) {
        const fs = parseFilesystemList((await h.exec(filesystemListArgv())).stdout).find((f) => f.volumeName === ref.name && f.mounted);
        return fs ? { ...ref, provider: 'esxi-shell', id: fs.uuid, data: { label: ref.name, volumePath: fs.mountPoint } } : null;
      },
    },
  },
});

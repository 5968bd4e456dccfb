// The `local` provider: fio on this machine, in a work directory or on a test file. It provisions
// nothing, so its only matrix axis is the workload.
import { z } from 'zod';
import type { ProviderModule } from '../../contract/provider.ts';
import { fioFields, guestWorkload, workloadStepSchema } from '../guest.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { fioGuestResources } from '../shared-resources.ts';

const targetSchema = z.strictObject({
  provider: z.literal('local'),
  ...fioFields,
});

export type LocalTarget = z.output<typeof targetSchema>;

export const local = {
  name: 'local',
  targetSchema,
  secretFields: [],
  axes: [],
  sshHostsOf: () => [],
  checkInventory: () => [],
  validate: () => [],
  planner: () => undefined,
  operations: { fio: workloadStepSchema },
  estimateSec: () => 0,
  isTransient: connectionLost,
  describeDestroyed: () => null,
  sharedResources: (t, where) => fioGuestResources({ ...t, sshHost: undefined }, where),
  compose(target, ctx) {
    const g = guestWorkload(ctx, { ...target, sshHost: undefined });
    return { provider: 'local', connectProvider: async () => null, workload: g.endpoint, workloadProvider: g.provider, workloadTarget: g.describe, insecureEndpoints: [] };
  },
} satisfies ProviderModule<'local', LocalTarget>;

// The `ssh` provider: fio on a Linux machine reached over SSH (an `sshHosts` entry). It provisions
// nothing, so its only matrix axis is the workload.
import { z } from 'zod';
import type { ProviderModule } from '../../contract/provider.ts';
import { fioFields, guestWorkload, nameField, workloadStepSchema } from '../guest.ts';
import { connectionLost } from '../../ssh/connection-lost.ts';
import { fioGuestResources } from '../shared-resources.ts';

const targetSchema = z.strictObject({
  provider: z.literal('ssh'),
  sshHost: nameField(),
  ...fioFields,
});

export type SshTarget = z.output<typeof targetSchema>;

export const ssh = {
  name: 'ssh',
  targetSchema,
  secretFields: [],
  axes: [],
  // fio runs through POSIX sh commands (shJoin) there
  sshHostsOf: (t) => [{ name: t.sshHost, path: ['sshHost'], shell: 'posix' }],
  checkInventory: () => [],
  validate: () => [],
  planner: () => undefined,
  operations: { fio: workloadStepSchema },
  estimateSec: () => 0,
  isTransient: connectionLost,
  describeDestroyed: () => null,
  sharedResources: (t, where) => fioGuestResources(t, where),
  compose(target, ctx) {
    const g = guestWorkload(ctx, target);
    return { provider: 'ssh', connectProvider: async () => null, workload: g.endpoint, workloadProvider: g.provider, workloadTarget: g.describe, insecureEndpoints: [] };
  },
} satisfies ProviderModule<'ssh', SshTarget>;
